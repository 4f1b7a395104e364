"""Issue 11's bad input that escaped as a traceback, passed --dry-run or was silently ignored.

Each case must end as one ``Error:`` line on stderr with exit 2 and nothing
submitted. A few run the real ``python -m tfyarn`` as a subprocess (the
shipped entry point, stderr apart); the rest go through click in-process.
"""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tfyarn.cli.main import cli
from tfyarn.cli.jobfile import build_spec
from tfyarn.errors import SpecError

# No cluster: a spec that got through by mistake would fail with exit 3, never reach a real cluster.
NO_CLUSTER = {"HADOOP_CONF_DIR": "/nonexistent", "TFYARN_CLUSTER_DIR": "/nonexistent"}


def tfyarn(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real CLI."""
    env = {**os.environ, **NO_CLUSTER}
    return subprocess.run([sys.executable, "-m", "tfyarn", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def one_error_line(res_code: int, out: str, text: str) -> None:
    lines = [line for line in out.splitlines() if line.strip()]
    assert res_code == 2, out
    assert len(lines) == 1 and lines[0].startswith("Error: "), out
    assert text in lines[0], out


def dry(*args: str) -> tuple[int, str]:
    """``tfyarn submit --dry-run ARGS`` in-process: its exit code and output."""
    res = CliRunner().invoke(cli, ["submit", "--dry-run=yarn", *args], prog_name="tfyarn", env=NO_CLUSTER)
    return res.exit_code, res.output


@pytest.mark.parametrize("args,text", [
    (["--set", "name=[1,"], "--set name: not valid YAML"),
    (["--set", "name=!!python/object:os.system x"], "--set name: not valid YAML"),
    (["--input", "hdfs://nn:99999/x"], "port"),
    (["--am-memory", "3000000g"], "'--am-memory': '3000000g' is above the maximum of 1073741824 MiB"),
    (["--input", "hdfs:///.."], "'..'"),
])
def test_escapes_through_the_real_cli(args, text):
    res = tfyarn("submit", *args, "--dry-run", "--", "python", "x.py")
    assert "Traceback" not in res.stderr
    one_error_line(res.returncode, res.stderr, text)
    assert res.stdout == ""


def test_conf_that_is_not_utf8(tmp_path):
    conf = tmp_path / "job.yaml"
    conf.write_bytes(b"name: caf\xe9\n")
    res = tfyarn("submit", "--conf", str(conf), "--dry-run", "--", "python", "x.py")
    assert "Traceback" not in res.stderr
    one_error_line(res.returncode, res.stderr, "is not UTF-8 text")


def test_conf_that_is_a_fifo_is_refused_not_read(tmp_path):
    fifo = tmp_path / "job.yaml"
    os.mkfifo(fifo)  # reading it would block forever: in a subprocess, so a hang fails the test
    try:
        res = tfyarn("submit", "--conf", str(fifo), "--dry-run", "--", "python", timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("tfyarn submit --conf FIFO hung reading it")
    one_error_line(res.returncode, res.stderr, "not a regular file")


def test_conf_dir_and_missing():
    one_error_line(*dry("--conf", "/", "--", "python"), "is a directory")
    one_error_line(*dry("--conf", "/no/such.yaml", "--", "python"), "does not exist")


@pytest.mark.parametrize("value,text", [
    ("name=[1,", "not valid YAML"),
    ("name={a: [", "not valid YAML"),
    ("name=!!python/object:os.system x", "not valid YAML"),
    ("name=!!python/name:os.system", "not valid YAML"),
    ("name=!!binary aGk=", "name (--name): expected a string"),
    ("name=!!timestamp 2001-12-14", "name (--name): expected a string"),
    ("name=!!timestamp 2001-13-99", "--set name: not valid YAML"),
    ("tags=!!set {a, b}", "tags (--tag): expected a list"),
    ("roles.worker.instances=!!float 1", "not a whole number"),
    ("roles.worker.instances=" + "9" * 5000, "not valid YAML"),
    ("name=" + "[" * 5000, "not valid YAML"),
    ("name.x=1", "name (--name): expected a string"),
    ("roles.worker..x=1", "is not a dotted key"),
    ("queue.x.y=1", "queue"),
])
def test_set_values_that_escaped(value, text):
    one_error_line(*dry("--set", value, "--", "python"), text)


def test_set_on_a_non_mapping_path():
    one_error_line(*dry("--set", "queue=q", "--set", "queue.x=1", "--", "python"),
                   "queue.x: 'queue' is not a mapping")


@pytest.mark.parametrize("uri,text", [
    ("hdfs://nn:99999/x", "port"),
    ("hdfs://nn:abc/x", "port"),
    ("hdfs://nn:0/x", "port"),
    ("hdfs://[::1/x", "host"),
    ("hdfs://n n/x", "host"),
    ("hdfs:///a/../b", "'..'"),
    ("hdfs:///..", "'..'"),
    ("hdfs:///a/..", "'..'"),
    ("hdfs:///data?x=1", "query"),
    ("hdfs:///data#frag", "query"),
])
def test_bad_uris_in_inputs_and_outputs(uri, text):
    one_error_line(*dry("--input", uri, "--", "python"), text)
    one_error_line(*dry("--output", f"./model:{uri}", "--", "python"), text)


@pytest.mark.parametrize("src", ["hdfs:///a/.", "./", ".", "/"])
def test_input_whose_default_dir_is_the_working_dir_needs_a_dir(src):
    one_error_line(*dry("--input", src, "--", "python"), "give URI:DIR")


@pytest.mark.parametrize("dest", [".", "./", "a/../.."])
def test_input_dest_must_be_a_dir_inside(dest):
    one_error_line(*dry("--input", f"hdfs:///data:{dest}", "--", "python"), "--input")


def test_input_with_a_good_dir_still_works():
    code, out = dry("--input", "hdfs:///data/mnist", "--input", "hdfs://nn:8020/a:./b", "--", "python")
    assert code == 0, out
    assert "# input: hdfs:///data/mnist -> inputs/mnist (copy)" in out
    assert "# input: hdfs://nn:8020/a -> ./b (copy)" in out


@pytest.mark.parametrize("args,text", [
    (["--am-memory", "3000000g"], "'--am-memory': '3000000g' is above the maximum of 1073741824 MiB"),
    (["--worker-memory", "1" + "0" * 400 + "g"], "above the maximum"),
    (["--worker-memory", "2048t"], "above the maximum"),
    (["--worker-vcores", "1099511627776"], "--worker-vcores: must be at most 2147483647"),
    (["--worker-gpus", "1099511627776"], "--worker-gpus: must be at most"),
    (["--num-workers", "1099511627776"], "--num-workers: must be at most"),
    (["--max-attempts", "1099511627776"], "--max-attempts: must be at most"),
    (["--set", "roles.worker.memory_mb=3000000000"], "above the maximum"),
    (["--worker-permanent-exit-codes", "\u00b2"], "exit codes 1-255"),
])
def test_numbers_skein_cannot_carry(args, text):
    one_error_line(*dry(*args, "--", "python"), text)


def test_limits_themselves_pass():
    code, out = dry("--am-memory", "1024t", "--worker-vcores", "2147483647", "--", "python")
    assert code == 0, out


def test_role_name_key_is_the_name(tmp_path):
    one_error_line(*dry("--set", "roles.worker.name=other", "--", "python"),
                   "roles.worker.name: a role's name is its key under roles")
    conf = tmp_path / "job.yaml"
    conf.write_text("name: j\ncommand: [python]\nroles: {worker: {instances: 2, name: other}}\n")
    one_error_line(*dry("--conf", str(conf)), "roles.worker.name")


@pytest.mark.parametrize("role", ["wörker", "a b", "w\n", "-x", "a$b", "w" * 100])
def test_odd_role_names_from_yaml(tmp_path, role):
    conf = tmp_path / "job.yaml"
    conf.write_text(f"name: j\ncommand: [python]\nroles: {{worker: {{instances: 1}}, {json.dumps(role)}: {{instances: 0}}}}\n")
    one_error_line(*dry("--conf", str(conf)), "role names")


@pytest.mark.parametrize("value,text", [
    ("files: abc\n", "files (--file): expected a list"),
    ("env: [a]\n", "env (--env): expected a mapping"),
    ("command: 5\n", "command"),
    ("command: {a: 1}\n", "command"),
    ("{1: x, b: y}\n", "unknown key(s) 1, b"),
])
def test_yaml_shapes_that_broke_merging(tmp_path, value, text):
    conf = tmp_path / "job.yaml"
    conf.write_text(value)
    one_error_line(*dry("--conf", str(conf), "--file", str(conf), "--env", "A=1"), text)


@pytest.mark.parametrize("name", ["A\n", "1A", "A-B", "", "TFYARN_ROLE", "TFYARN_ANYTHING", "SKEIN_X",
                                  "CONTAINER_ID", "NM_HOST", "TF_CONFIG", "RANK", "CUDA_VISIBLE_DEVICES"])
def test_env_names(name):
    code, out = dry("--env", f"{name}=1", "--", "python")
    one_error_line(code, out, "--env")


def test_env_values_may_hold_what_a_shell_would_run():
    """Values no longer reach YARN's launch script, so quotes, $ and newlines are plain data."""
    value = '$(touch /tmp/PWNED) "q" `b` \\ \nnext'
    spec = build_spec(None, {"env": (("A", value),)}, (), ("python",), {})
    assert spec.env["A"] == value
    code, out = dry("--env", f"A={value}", "--", "python")
    assert code == 0, out
    one_error_line(*dry("--env", "A=x\x00y", "--", "python"), "--env")


@pytest.mark.parametrize("fname", ["$(touch PWNED).py", 'a"b.py', "a b.py", "a\nb.py", "a`b`.py", "$HOME.py",
                                   "-rf", "x'y.py", "a;b", "caf\u00e9.py", "pyenv", "tfyarn-code"])
def test_shipped_file_names_must_be_safe(tmp_path, fname):
    path = tmp_path / fname
    path.write_text("")
    one_error_line(*dry("--file", str(path), "--", "python"), "rename it")


def test_safe_file_names_ship(tmp_path):
    files = [tmp_path / n for n in ("train.py", "a_b-c+1.tar.gz", ".hidden")]
    for f in files:
        f.write_text("")
    code, out = dry(*[a for f in files for a in ("--file", str(f))], "--", "python")
    assert code == 0, out


@pytest.mark.parametrize("args,text", [
    (["--name", "a\nb"], "--name"),
    (["--queue", "q\x1b[31m"], "--queue"),
    (["--node-label", "gpu\r"], "--node-label"),
    (["--worker-node-label", "gpu\n"], "--worker-node-label"),
    (["--tag", "t\n"], "--tag"),
    (["--name", "\udcff"], "--name"),
    (["--view-acl", "bob\n"], "--view-acl"),
])
def test_control_characters_never_reach_yarn(args, text):
    one_error_line(*dry(*args, "--", "python"), text)


def test_command_may_have_newlines_but_not_nul():
    assert dry("--", "python", "-c", "import os\nprint(1)")[0] == 0
    one_error_line(*dry("--", "python", "-c", "x\x00"), "command")


def test_output_task_index_huge_or_odd():
    one_error_line(*dry("--output", "./m:hdfs:///m", "--set", "outputs=[{src: m, dest: 'hdfs:///m', task: 'worker:"
                        + "9" * 5000 + "'}]", "--", "python"), "ROLE:INDEX")
    one_error_line(*dry("--set", "outputs=[{src: m, dest: 'hdfs:///m', task: \"worker:0\\n\"}]", "--", "python"),
                   "ROLE:INDEX")


def test_build_spec_refuses_without_the_cli():
    with pytest.raises(SpecError, match="not valid YAML"):
        build_spec(None, {}, (("name", "[1,"),), ("python",), {})
    with pytest.raises(SpecError, match="roles.worker.name"):
        build_spec(None, {}, (("roles.worker.name", "other"),), ("python",), {})


def _alias_bomb(levels: int = 9) -> str:
    """A YAML value of 10**levels items built from a few lines of aliases."""
    parts = ["&a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


@pytest.mark.parametrize("use", ["roles: {worker: {instances: *a8}}", "name: *a8", "env: {A: *a8}",
                                 "roles: {worker: {memory_mb: *a8}}", "roles: {worker: {permanent_exit_codes: *a8}}",
                                 "queue: *a8"])
def test_a_yaml_alias_bomb_is_refused_not_printed(tmp_path, use):
    """The error names a bounded excerpt of the value; repr() of it all would run for hours."""
    conf = tmp_path / "job.yaml"
    conf.write_text(use.replace("*a8", _alias_bomb()) + "\n")  # the value holds the 10**9-item list
    try:
        res = tfyarn("submit", "--conf", str(conf), "--dry-run", "--", "python", timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("formatting the error took over 30 s")
    one_error_line(res.returncode, res.stderr, "Error")
    assert len(res.stderr) < 2000, res.stderr[:300]


def test_unreadable_conf_is_one_line(tmp_path, monkeypatch):
    """As root every file is readable, so the refusal is simulated where the file is read."""
    from pathlib import Path

    from tfyarn.cli.jobfile import load_conf

    conf = tmp_path / "job.yaml"
    conf.write_text("name: j\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(SpecError, match=r"--conf: cannot read '.*job.yaml': Permission denied"):
        load_conf(conf)
