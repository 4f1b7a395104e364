"""tfyarn on a Kerberized cluster: tickets, keytabs, delegation tokens in containers, and who may see what.

Everything here runs against the real secure cluster: its own MIT KDC,
Kerberos on every Hadoop RPC, SASL DataNode transfer, SPNEGO on the web UIs
and YARN ACLs (tests/kerberos/conftest.py).
"""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.integration.conftest import EXAMPLES, app_id_from, wait_for
from tests.kerberos.conftest import User, hdfs
from tfyarn.cluster import LocalCluster

SLEEPER = ["--", "python", "-c", "import time; time.sleep(600)"]


def rm(cluster: LocalCluster, path: str) -> str:
    return f"{cluster.layout.rm_web}{path}"


def as_user(user: User, url: str) -> bytes | str:
    """GET ``url`` with ``user``'s ticket (SPNEGO) in a separate process: the body, or the error's text."""
    code = ("import sys\nfrom tfyarn import rest\n"
            "try:\n    sys.stdout.buffer.write(rest.get(sys.argv[1]))\n"
            "except rest.FetchError as e:\n    print('FetchError:', e)\n")
    res = subprocess.run([sys.executable, "-c", code, url], capture_output=True, env=user.env, timeout=60)
    return res.stdout.decode(errors="replace")


def app_ids(user: User, cluster: LocalCluster) -> set[str]:
    apps = json.loads(as_user(user, rm(cluster, "/ws/v1/cluster/apps")))
    return {a["id"] for a in (apps.get("apps") or {}).get("app") or []}


def app_state(user: User, app: str) -> str:
    res = user.tfyarn("status", "--json", app)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["state"]


def test_the_cluster_is_secure_and_kinit_works(kcluster: LocalCluster, alice: User, nobody: User, tmp_path: Path):
    """SPNEGO guards the RM's REST API; a kinit against the cluster's KDC opens it; HDFS speaks Kerberos."""
    url = rm(kcluster, "/ws/v1/cluster/info")
    assert "HTTP 401" in str(as_user(nobody, url))
    assert json.loads(as_user(alice, url))["clusterInfo"]["state"] == "STARTED"
    ccache = tmp_path / "kinit-cc"
    kinit = subprocess.run(["kinit", "-c", str(ccache), "-kt", str(alice.keytab), "alice"],
                           env=alice.env, capture_output=True, text=True)
    assert kinit.returncode == 0, kinit.stderr
    ls = subprocess.run([str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-ls", "/user"], capture_output=True,
                        text=True, env={**alice.env, "KRB5CCNAME": f"FILE:{ccache}"}, timeout=120)
    assert ls.returncode == 0 and "/user/alice" in ls.stdout, ls.stderr
    denied = subprocess.run([str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-ls", "/user"], capture_output=True,
                            text=True, env=nobody.env, timeout=120)
    assert denied.returncode != 0


@pytest.mark.parametrize("args", [
    ["submit", "--num-workers", "1", "--", "python", "-c", "1"],
    ["list"],
    ["fetch", "hdfs:///user/alice/anything", "out"],
], ids=["submit", "list", "fetch"])
def test_without_a_ticket_every_command_says_kinit_and_exits_3(kcluster: LocalCluster, alice: User, nobody: User,
                                                                  args: list[str]):
    before = app_ids(alice, kcluster)
    res = nobody.tfyarn(*args)
    assert res.returncode == 3, res.stdout + res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "kinit" in errors[0] and "--keytab" in errors[0], res.stderr
    assert "Traceback" not in res.stderr
    assert app_ids(alice, kcluster) == before  # nothing submitted


def test_ps_example_stages_input_publishes_output_and_alice_fetches_it(kcluster: LocalCluster, alice: User,
                                                                        tmp_path: Path):
    """The containers read and write HDFS with YARN's delegation tokens: no keytab is shipped to them."""
    run = uuid.uuid4().hex[:8]
    data = tmp_path / "data"
    subprocess.run([sys.executable, str(EXAMPLES / "make_data.py"), "--out", str(data)], check=True,
                   capture_output=True)
    put = subprocess.run([str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-put", str(data), f"/user/alice/data-{run}"],
                         env=alice.env, capture_output=True, text=True, timeout=120)
    assert put.returncode == 0, put.stderr
    flags = f"--input hdfs:///user/alice/data-{run} --output ./model:hdfs:///user/alice/models/{run} --placement spread"
    env = {**alice.env, "TFYARN": f"{sys.executable} -m tfyarn", "TFYARN_SUBMIT_FLAGS": flags}
    res = subprocess.run(["bash", str(EXAMPLES / "tensorflow/ps_strategy/submit.sh"), "--model-dir", "./model",
                          "--epochs", "2", "--steps-per-epoch", "10"], env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    app = app_id_from(res.stdout)
    status = json.loads(alice.tfyarn("status", "--json", app).stdout)
    assert {t["name"].split(":")[0] for t in status["tasks"]} == {"chief", "worker", "ps"}
    fetched = tmp_path / "fetched"
    got = alice.tfyarn("fetch", f"hdfs:///user/alice/models/{run}", str(fetched))
    assert got.returncode == 0, got.stderr
    assert (fetched / "saved_model" / "saved_model.pb").exists()
    assert list((fetched / "ckpt").glob("ckpt-1.index"))
    # The logs YARN aggregated to HDFS (as alice, with the job's tokens), read back with her ticket.
    logs = wait_for("the aggregated logs", lambda: (r := alice.tfyarn("logs", app)).returncode == 0 and r,
                    timeout_s=120, every_s=3)
    assert "LogType:chief.log" in logs.stdout and "tfyarn.am" in logs.stdout, logs.stdout[-2000:]
    keytab_bytes = alice.keytab.read_bytes()
    for node in (kcluster.layout, kcluster.layout.for_node(2)):
        for f in (node.log_dir / "containers").rglob("*"):
            if app.removeprefix("application_") in str(f) and f.is_file():
                assert keytab_bytes not in f.read_bytes(), f


def test_ddp_with_principal_and_keytab_and_no_ticket_cache(kcluster: LocalCluster, nobody: User, alice: User):
    tfyarn = f"{sys.executable} -m tfyarn --principal alice --keytab {alice.keytab}"
    model = Path(nobody.env["HOME"]) / "ddp-model"
    env = {**nobody.env, "TFYARN": tfyarn, "TFYARN_SUBMIT_FLAGS": "--placement spread"}
    res = subprocess.run(["bash", str(EXAMPLES / "pytorch/ddp/submit.sh"), "--model-dir", str(model),
                          "--epochs", "2"], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and "SUCCEEDED: all 2 worker task(s) succeeded" in res.stdout, res.stdout + res.stderr
    app = app_id_from(res.stdout)
    info = json.loads(as_user(alice, rm(kcluster, f"/ws/v1/cluster/apps/{app}")))["app"]
    assert info["user"] == "alice"


def test_bob_is_denied_alices_job_until_she_grants_it(kcluster: LocalCluster, alice: User, bob: User,
                                                        tmp_path: Path):
    """The RM proxy's page and JSON, kill, save, and her outputs on HDFS: denied to bob; the ACLs she grants work."""
    run = uuid.uuid4().hex[:8]
    write = ["--output", f"./out:hdfs:///tmp/{run}/shared", "--", "python", "-c",
             "import os, time; os.makedirs('out'); open('out/w.txt', 'w').write('mid-run'); time.sleep(600)"]
    res = alice.tfyarn("submit", "--name", "private", "--num-workers", "1", *SLEEPER)
    assert res.returncode == 0, res.stderr
    app = app_id_from(res.stdout + res.stderr)
    granted = alice.tfyarn("submit", "--name", "shared", "--num-workers", "1", "--view-acl", "bob",
                           "--modify-acl", "bob", *write)
    assert granted.returncode == 0, granted.stderr
    shared = app_id_from(granted.stdout + granted.stderr)
    try:
        for a in (app, shared):
            wait_for(f"{a} RUNNING", lambda a=a: app_state(alice, a) == "RUNNING", timeout_s=120)
        page, api = f"/proxy/{app}/pages/tfyarn/", f"/proxy/{app}/pages/tfyarn/api/status"
        wait_for("alice's page", lambda: "private" in str(as_user(alice, rm(kcluster, page))), timeout_s=60)
        assert json.loads(as_user(alice, rm(kcluster, api)))["app_id"] == app
        for path in (page, api):
            assert str(as_user(bob, rm(kcluster, path))).startswith("FetchError: HTTP 403"), path
        kill = bob.tfyarn("kill", app)
        assert kill.returncode != 0 and "only its owner" in kill.stderr, kill.stderr
        assert app_state(alice, app) == "RUNNING"
        save = bob.tfyarn("save", app, "--timeout", "10")
        assert save.returncode == 1 and save.stderr.count("\n") == 1, save.stdout + save.stderr
        assert "only its owner (alice) and the users its --modify-acl names can save it, and you are bob" \
            in save.stderr, save.stderr
        logs = bob.tfyarn("logs", app, "--task", "worker:0")
        assert logs.returncode == 1 and logs.stderr.count("\n") == 1, logs.stdout + logs.stderr
        assert "not open to you (bob): its owner (alice) opens it, and its logs, with --view-acl bob" in logs.stderr
        # Hers, from the NodeManager (SPNEGO; it checks the view ACL): the executor's own lines.
        hers = wait_for("alice's task log", lambda: (r := alice.tfyarn("logs", app, "--task", "worker:0")).returncode
                        == 0 and "tfyarn.executor" in r.stdout and r, timeout_s=60, every_s=3)
        assert "worker:0" in hers.stdout
        fetch = bob.tfyarn("fetch", f"hdfs:///user/alice/.tfyarn/jobs/{app}", str(tmp_path / "stolen"))
        assert fetch.returncode != 0 and "Permission denied" in fetch.stderr, fetch.stderr
        # What she granted on the other job works for bob, exactly.
        spage = f"/proxy/{shared}/pages/tfyarn/api/status"
        assert json.loads(as_user(bob, rm(kcluster, spage)))["app_id"] == shared
        his = wait_for("bob's log of the shared task", lambda: (r := bob.tfyarn("logs", shared, "--task", "worker:0"))
                       .returncode == 0 and "tfyarn.executor" in r.stdout and r, timeout_s=60, every_s=3)
        assert "worker:0" in his.stdout
        # His save reaches her job through YARN (which checks the modify ACL); the snapshot is his to fetch.
        saved = bob.tfyarn("save", shared, "--timeout", "120", timeout=180)
        assert saved.returncode == 0 and "through YARN" in saved.stderr, saved.stdout + saved.stderr
        snap = saved.stdout.strip().splitlines()[-1].removeprefix("Snapshot: ")
        assert snap.startswith(f"hdfs:///tmp/{run}/shared.snapshots/"), saved.stdout
        got = bob.tfyarn("fetch", snap, str(tmp_path / "snap"))
        assert got.returncode == 0 and (tmp_path / "snap" / "w.txt").read_text() == "mid-run", got.stderr
        assert bob.tfyarn("kill", shared).returncode == 0
        wait_for("the shared job KILLED", lambda: app_state(alice, shared) == "KILLED", timeout_s=60)
    finally:
        alice.tfyarn("kill", app)
        alice.tfyarn("kill", shared)


def test_exec_into_alices_task_is_hers_alone_even_with_both_acls_granted(kcluster: LocalCluster, alice: User,
                                                                        bob: User):
    """`tfyarn exec` is refused to bob with the reason, and the channel itself (the job's skein
    key-value store over TLS) does not let him write a request when he skips tfyarn's check."""
    res = alice.tfyarn("submit", "--name", "exec-acl", "--num-workers", "1", "--view-acl", "bob",
                       "--modify-acl", "bob", *SLEEPER)
    assert res.returncode == 0, res.stderr
    app = app_id_from(res.stdout + res.stderr)
    try:
        wait_for(f"{app} RUNNING", lambda: app_state(alice, app) == "RUNNING", timeout_s=120)
        mine = wait_for("alice's exec", lambda: (r := alice.tfyarn("exec", app, "--task", "worker:0", "--", "echo",
                                                                  "hi")).returncode == 0 and r, timeout_s=60,
                        every_s=3)
        assert mine.stdout == "hi\n", mine.stdout + mine.stderr
        denied = bob.tfyarn("exec", app, "--task", "worker:0", "--", "id")
        assert denied.returncode == 1 and denied.stderr.count("\n") == 1, denied.stderr
        assert f"only {app}'s owner (alice) can exec into its tasks, and you are bob" in denied.stderr, denied.stderr
        sneak = ("import sys; from tfyarn.client import Client\n"
                 "app = Client().connect(sys.argv[1])\n"
                 "app.kv['tfyarn-exec/in/worker:0/bob-was-here/request'] = b'{}'\n")
        direct = subprocess.run([sys.executable, "-c", sneak, app], env=bob.env, capture_output=True, text=True,
                                timeout=120)
        assert direct.returncode != 0, direct.stdout + direct.stderr
        look = ("import sys; from tfyarn.client import Client\n"
                "print(sorted(Client().connect(sys.argv[1]).kv.get_prefix('tfyarn-exec/')))\n")
        keys = subprocess.run([sys.executable, "-c", look, app], env=alice.env, capture_output=True, text=True,
                              timeout=120)
        assert (keys.returncode, keys.stdout) == (0, "[]\n"), keys.stdout + keys.stderr
    finally:
        alice.tfyarn("kill", app)


def test_bob_reads_alices_outputs_only_when_she_grants_it(kcluster: LocalCluster, alice: User, bob: User,
                                                        tmp_path: Path):
    """Outputs and the job's dir are alice's alone (0700) by default; --view-acl bob adds an HDFS ACL entry."""
    run = uuid.uuid4().hex[:8]
    write = ["--", "python", "-c", "import os; os.makedirs('out/sub'); open('out/sub/w.txt', 'w').write('hi')"]
    apps = {}
    for name, grant in (("private", []), ("shared", ["--view-acl", "bob"])):
        res = alice.tfyarn("submit", "--name", name, "--num-workers", "1", *grant,
                           "--output", f"./out:hdfs:///tmp/{run}/{name}", *write)
        assert res.returncode == 0, res.stderr
        apps[name] = app_id_from(res.stdout + res.stderr)
    for app in apps.values():
        done = alice.tfyarn("wait", app, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    listing = hdfs(kcluster, alice, "-ls", "-d", f"/tmp/{run}/private", f"/tmp/{run}/shared",
                   f"/user/alice/.tfyarn/jobs/{apps['private']}", f"/user/alice/.tfyarn/jobs/{apps['shared']}")
    modes = [line.split()[0] for line in listing.splitlines()]
    assert modes == ["drwx------", "drwxr-x---+", "drwx------", "drwxr-x---+"], listing
    acl = hdfs(kcluster, alice, "-getfacl", "-R", f"/tmp/{run}/shared")
    assert "user:bob:r-x" in acl and "user:bob:r--" in acl, acl  # the dirs and the file below
    denied = bob.tfyarn("fetch", f"hdfs:///tmp/{run}/private", str(tmp_path / "stolen"))
    assert denied.returncode != 0 and "Permission denied" in denied.stderr, denied.stderr
    assert not (tmp_path / "stolen").exists()
    got = bob.tfyarn("fetch", f"hdfs:///tmp/{run}/shared", str(tmp_path / "shared"))
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "shared" / "sub" / "w.txt").read_text() == "hi"
    mine = alice.tfyarn("fetch", f"hdfs:///tmp/{run}/private", str(tmp_path / "mine"))
    assert mine.returncode == 0 and (tmp_path / "mine" / "sub" / "w.txt").read_text() == "hi", mine.stderr


@pytest.mark.parametrize("flags,text", [
    (["--worker-gpus", "5"], "the largest node offers 4"),
    (["--queue", "nosuchqueue"], "no queue 'nosuchqueue'"),
], ids=["gpus", "queue"])
def test_admission_checks_read_the_kerberized_rm(kcluster: LocalCluster, alice: User, flags: list[str], text: str):
    """The RM's REST answers 401 without SPNEGO; the checks must still run (and refuse), not be skipped."""
    name = f"krb-adm-{uuid.uuid4().hex[:8]}"
    res = alice.tfyarn("submit", "--name", name, *flags, "--", "python", "-c", "1")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and text in lines[0], res.stderr
    apps = json.loads(as_user(alice, rm(kcluster, "/ws/v1/cluster/apps")))
    assert name not in {a["name"] for a in (apps.get("apps") or {}).get("app") or []}


def test_doctor_as_alice_runs_every_check(kcluster: LocalCluster, alice: User, nobody: User):
    res = alice.tfyarn("doctor", "--json", timeout=180)
    results = {r["name"]: r for r in json.loads(res.stdout)}
    for name in ("resourcemanager", "namenode", "hdfs-home", "kerberos", "gpus", "queues"):
        assert results[name]["outcome"] == "OK", (name, results[name])
    assert "/user/alice/" in results["hdfs-home"]["detail"], results["hdfs-home"]
    without = nobody.tfyarn("doctor", "--json", timeout=180)
    assert without.returncode != 0
    assert {r["name"]: r for r in json.loads(without.stdout)}["kerberos"]["outcome"] == "FAIL"


def test_status_page_through_the_spnego_proxy_in_chromium(kcluster: LocalCluster, alice: User, bob: User):
    """Headless Chromium with the user's ticket cache: alice sees her page through the RM's proxy, bob a 403.

    The job also runs TensorBoard: the task's summaries are mirrored to her job dir on HDFS with the
    job's delegation tokens, and the AM's TensorBoard (which reads them back) runs; `list` shows it.
    """
    write_summary = ("import os, time; d = os.environ['TFYARN_TENSORBOARD_DIR']; os.makedirs(d, exist_ok=True); "
                     "open(os.path.join(d, 'events.out.tfevents.1.kerberos'), 'wb').write(b'summary'); "
                     "time.sleep(600)")
    res = alice.tfyarn("submit", "--name", "browsed", "--num-workers", "1", "--tensorboard", "--", "python", "-c",
                       write_summary)
    assert res.returncode == 0, res.stderr
    app = app_id_from(res.stdout + res.stderr)
    try:
        wait_for(f"{app} RUNNING", lambda: app_state(alice, app) == "RUNNING", timeout_s=120)
        listed = alice.tfyarn("list")
        assert listed.returncode == 0 and app in listed.stdout and "browsed" in listed.stdout, listed.stderr
        tb = f"/user/alice/.tfyarn/jobs/{app}/tensorboard"
        wait_for("the summary mirrored to HDFS", lambda: "events.out.tfevents.1.kerberos" in subprocess.run(
            [str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-ls", "-R", tb], env=alice.env, capture_output=True,
            text=True, timeout=120).stdout, timeout_s=120, every_s=3)
        wait_for("the AM's TensorBoard", lambda: (json.loads(alice.tfyarn("status", "--json", app).stdout)
                                                  .get("tensorboard") or {}).get("state") == "running",
                 timeout_s=120, every_s=3)
        url = rm(kcluster, f"/proxy/{app}/pages/tfyarn/")
        wait_for("alice's page", lambda: "browsed" in str(as_user(alice, url)), timeout_s=60)
        seen = {who.name: _chromium_text(who, kcluster, url) for who in (alice, bob)}
        assert "browsed" in seen["alice"] and app in seen["alice"], seen["alice"][:500]
        assert "browsed" not in seen["bob"] and "not authorized" in seen["bob"].lower(), seen["bob"][:500]
    finally:
        alice.tfyarn("kill", app)


def _chromium_text(user: User, cluster: LocalCluster, url: str) -> str:
    """The page's text as headless Chromium shows it to ``user`` (Negotiate with their ticket cache).

    Chromium on Linux loads the GSS-API library only once it has met a
    Negotiate challenge, and answers only the later ones: a first request to
    the RM's REST API warms it up, as a user's first page would.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--auth-server-allowlist=127.0.0.1"):
        opts.add_argument(arg)
    env = {k: user.env[k] for k in ("KRB5CCNAME", "KRB5_CONFIG", "HOME", "PATH")}
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=env), options=opts)
    try:
        warm = rm(cluster, "/ws/v1/cluster/info")
        driver.get(warm)
        wait_for("Chromium to negotiate", lambda: (driver.refresh(), "clusterInfo" in driver.page_source)[1],
                 timeout_s=30, every_s=1)
        driver.get(url)
        return driver.find_element("tag name", "body").text + driver.title
    finally:
        driver.quit()
