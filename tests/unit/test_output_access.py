"""Outputs are their owner's by default: --output-mode, and ACL entries for the job's view/modify users.

The HDFS side (bob denied, then allowed) runs on the Kerberized cluster in
tests/kerberos; here the spec, the plan handed to executors, the local
modes, and the order of the NameNode calls (a chmod after an ACL would
reset its mask).
"""

import stat

import pytest
from click.testing import CliRunner

from appmaster.am import master
from appmaster.executor import staging
from tfyarn import protocol
from tfyarn.cli.main import cli
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec, OutputSpec, RoleSpec
from tfyarn.storage import locate, parse_uri, permissions, publish
from tfyarn.storage.permissions import Access, share
from tfyarn.taskenv import StagingPlan, staging_plan


def job(**kw) -> JobSpec:
    roles = {"worker": RoleSpec("worker", 1)}
    return JobSpec(name="j", framework="tensorflow", command=("true",), roles=roles,
                   outputs=(OutputSpec("./model", "hdfs:///out/m"),), **kw).validate()


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("value,msg", [
    ("75", "not three octal digits"), ("780", "not three octal digits"), ("rwx", "not three octal digits"),
    ("650", "keep 7 first"), ("070", "keep 7 first"),
])
def test_a_bad_output_mode_is_named(value, msg):
    with pytest.raises(SpecError, match=f"output_mode: .*{msg}"):
        job(output_mode=value)


def test_the_default_is_the_owner_only_and_yaml_digits_are_read_as_written():
    assert job().output_mode == "700"
    spec = JobSpec.from_dict({**job().to_dict(), "output_mode": 750}).validate()
    assert spec.output_mode == "750"  # YAML's unquoted 750 is an int: octal as written, not 0o1356


def test_view_and_modify_users_read_the_outputs_each_once():
    spec = job(view_acls=("bob", "carol"), modify_acls=("bob", "dave"))
    assert spec.output_readers == ("bob", "carol", "dave")
    plan = staging_plan(spec, "worker", 0)
    assert (plan.output_mode, plan.readers) == (0o700, ("bob", "carol", "dave"))
    assert StagingPlan.from_env(plan.to_env()) == plan


def test_a_plan_from_before_output_mode_keeps_outputs_private():
    env = protocol.decode_env(StagingPlan().to_env())
    del env["output_mode"], env["readers"]
    plan = StagingPlan.from_env(protocol.encode_env(env))
    assert (plan.output_mode, plan.readers) == (0o700, ())


def test_the_cli_takes_output_mode_and_refuses_a_bad_one():
    env = {"HADOOP_CONF_DIR": "/nonexistent", "TFYARN_CLUSTER_DIR": "/nonexistent"}
    args = ["submit", "--dry-run=yarn", "--num-workers", "1", "--output", "./m:hdfs:///out/m"]
    ok = CliRunner().invoke(cli, [*args, "--output-mode", "750", "--view-acl", "bob", "--", "true"], env=env)
    assert ok.exit_code == 0 and "(published by worker:0, mode 750, read by bob)" in ok.output, ok.output
    bad = CliRunner().invoke(cli, [*args, "--output-mode", "0644", "--", "true"], env=env)
    assert bad.exit_code == 2 and "Error: --output-mode: 0644 takes rights from the owner" in bad.output, bad.output


def tree(root):
    (root / "sub").mkdir(parents=True)
    (root / "a").write_text("a")
    (root / "sub" / "b").write_text("b")
    return root


@pytest.mark.parametrize("access,dirs,files", [
    (Access(), 0o700, 0o600), (Access(0o750), 0o750, 0o640), (Access(0o700, ("*",)), 0o705, 0o604),
])
def test_a_published_tree_lands_with_its_access(tmp_path, access, dirs, files):
    dest = tmp_path / "out" / "m"
    publish(locate(parse_uri(str(tree(tmp_path / "src")))), locate(parse_uri(str(dest))), "app_1", access=access)
    assert [mode(p) for p in (dest, dest / "sub")] == [dirs, dirs]
    assert [mode(p) for p in (dest / "a", dest / "sub" / "b")] == [files, files]


def test_publish_without_access_keeps_the_umask(tmp_path):
    dest = tmp_path / "out" / "m"
    publish(locate(parse_uri(str(tree(tmp_path / "src")))), locate(parse_uri(str(dest))), "app_1")
    assert mode(dest / "a") & 0o044  # group/other read, as before output_mode existed


class Recorder:
    """Stands in for hdfs-native's Client: records the NameNode calls share makes."""

    def __init__(self):
        self.calls = []

    def set_permission(self, path, bits):
        self.calls.append(("chmod", path, oct(bits)))

    def modify_acl_entries(self, path, entries):
        self.calls.append(("acl", path, [(e.type, e.scope, e.permissions, e.name) for e in entries]))


def test_on_hdfs_each_path_is_chmodded_before_its_acl_and_files_get_no_x(tmp_path, monkeypatch):
    root = tree(tmp_path / "t")
    client = Recorder()
    monkeypatch.setattr(permissions, "_client", lambda loc: client)
    share(locate(parse_uri(str(root))), Access(0o700, ("bob", "*")))
    calls = {(c[0], c[1].removeprefix(str(root))): c[2] for c in client.calls}
    assert calls[("chmod", "")] == calls[("chmod", "/sub")] == oct(0o705)
    assert calls[("chmod", "/a")] == oct(0o604)
    assert calls[("acl", "")] == [("user", "access", "r-x", "bob")]
    assert calls[("acl", "/sub/b")] == [("user", "access", "r--", "bob")]
    order = [c[1] for c in client.calls]
    assert all(order.index(p) < len(order) - 1 - order[::-1].index(p) for p in set(order))  # chmod, then acl
    assert [c[0] for c in client.calls if c[1] == str(root / "a")] == ["chmod", "acl"]


def test_no_readers_means_no_acl_call(tmp_path, monkeypatch):
    client = Recorder()
    monkeypatch.setattr(permissions, "_client", lambda loc: client)
    share(locate(parse_uri(str(tree(tmp_path / "t")))), Access())
    assert {c[0] for c in client.calls} == {"chmod"}


def test_a_refused_acl_says_what_the_namenode_needs(tmp_path, monkeypatch):
    class NoAcls(Recorder):
        def modify_acl_entries(self, path, entries):
            raise RuntimeError("AclException: The ACL operation has been rejected.  Support for ACLs has been disabled")

    monkeypatch.setattr(permissions, "_client", lambda loc: NoAcls())
    with pytest.raises(Exception, match="dfs.namenode.acls.enabled=true"):
        share(locate(parse_uri(str(tree(tmp_path / "t")))), Access(0o700, ("bob",)))


def test_snapshots_and_final_outputs_both_follow_the_plan(tmp_path):
    work = tmp_path / "work"
    tree(work / "model")
    plan = StagingPlan(outputs=[{"src": "./model", "dest": str(tmp_path / "out" / "m")}], output_mode=0o750)
    staging.publish_outputs(plan, str(work), "app_1")
    assert mode(tmp_path / "out" / "m") == 0o750 and mode(tmp_path / "out" / "m" / "a") == 0o640
    (uri,) = staging.publish_snapshot(plan, str(work), "app_1")
    snap = parse_uri(uri).path
    assert mode(tmp_path / "out" / "m.snapshots" / snap.rsplit("/", 1)[1]) == 0o750


def test_the_ams_job_dir_is_its_owners(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "job_dir", lambda user, app_id: str(tmp_path / user / app_id))
    (tmp_path / "u" / "application_1_0001").mkdir(parents=True, mode=0o755)
    master.save_status("{}", "u", "application_1_0001")
    assert mode(tmp_path / "u" / "application_1_0001") == 0o700
