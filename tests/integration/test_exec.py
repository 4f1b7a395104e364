"""`tfyarn exec` on the real cluster: a command in a running task's container (its TF_CONFIG, its GPU),
an interactive shell driven through tmux, every exec on the job's events, and the refusals: a finished
task, an ended job. (Another user's refusal is tests/kerberos/test_kerberos.py: on a simple-auth
cluster anyone may claim to be anyone.)"""
from __future__ import annotations

import re
import shutil
import subprocess
import uuid

from tests.integration.conftest import TFYARN, app_id_from, status_json, tfyarn, wait_for
from tests.integration.procs import container_pids, wait_none_left

# Each worker trains "forever"; worker:1 stops once a file named stop-now appears in its working dir.
WORKER = ("import json, os, time\n"
          "i = json.loads(os.environ['TF_CONFIG'])['task']['index']\n"
          "while not (i == 1 and os.path.exists('stop-now')):\n"
          "    time.sleep(0.5)\n")
PRINT = ("import json, os; print(os.environ['CUDA_VISIBLE_DEVICES'], "
         "json.loads(os.environ['TF_CONFIG'])['task']['index'])")


def tasks(app: str) -> dict[str, dict]:
    return {t["name"]: t for t in status_json(app)["tasks"] or ()}  # null before the AM serves


def started(app: str) -> dict[str, dict] | None:
    """Every task's command started (its exec agent listens from then on)."""
    now = tasks(app)
    return now if now and all(t["state"] == "RUNNING" and "process_started" in t["timeline"] for t in now.values()) else None


class Tmux:
    """A tmux server of this test's own (its own socket, this process's environment) running one command."""

    def __init__(self, command: str):
        self.socket = f"tfyarn-exec-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", "t", "-x", "160", "-y", "40", command)

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=30).stdout

    def type(self, line: str) -> None:
        self.run("send-keys", "-t", "t", "-l", line)
        self.run("send-keys", "-t", "t", "Enter")

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t", "-S", "-200")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def test_exec_reaches_a_running_tasks_env_and_gpu_a_shell_and_is_refused_once_the_task_ends(cluster, yarn_apps):
    assert shutil.which("tmux"), "the shell is driven through tmux: `make tmux` installs Debian's"
    sub = tfyarn("submit", "--framework", "tensorflow", "--name", "exec", "--num-workers", "2", "--worker-gpus", "1",
                 "--worker-memory", "512m", "--", "python", "-c", WORKER)
    assert sub.returncode == 0, sub.stderr
    app = app_id_from(sub.stdout + sub.stderr)
    yarn_apps.append(app)
    shown = wait_for("both workers' commands to start", lambda: started(app), timeout_s=180, every_s=2)

    # A command in worker:1: its GPU and its TF_CONFIG, as its training process sees them; its exit code.
    res = tfyarn("exec", app, "--task", "worker:1", "--", "python", "-c", PRINT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [",".join(map(str, shown["worker:1"]["gpus"])), "1"], res.stdout
    assert shown["worker:1"]["gpus"], shown["worker:1"]  # it asked for one
    res = tfyarn("exec", app, "--task", "worker:0", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
    assert (res.returncode, res.stdout, res.stderr) == (7, "out\n", "err\n")

    # An interactive shell in worker:0, typed into through tmux as a person would.
    tmux = Tmux(f"{' '.join(TFYARN)} exec -it {app} --task worker:0 -- bash --norc -i; echo EXEC-RC=$?; sleep 120")
    try:
        wait_for("the remote shell's prompt", lambda: "$" in tmux.screen() or "#" in tmux.screen(), timeout_s=60)
        tmux.type('echo "pts=$(tty) index=$(python -c \'import json, os; '
                  'print(json.loads(os.environ["TF_CONFIG"])["task"]["index"])\')"')
        screen = wait_for("the shell's answer", lambda: s if "index=0" in (s := tmux.screen()) else None,
                          timeout_s=60)
        assert re.search(r"pts=/dev/pts/\d+ index=0", screen), screen
        tmux.type("exit 5")
        wait_for("the exec's end", lambda: "EXEC-RC=5" in tmux.screen(), timeout_s=60)
    finally:
        tmux.close()

    # worker:1 is told to finish (through exec, in its working dir); a finished task is refused.
    assert tfyarn("exec", app, "--task", "worker:1", "--", "touch", "stop-now").returncode == 0
    wait_for("worker:1 SUCCEEDED", lambda: tasks(app)["worker:1"]["state"] == "SUCCEEDED", timeout_s=60)
    res = tfyarn("exec", app, "--task", "worker:1", "--", "true")
    assert res.returncode == 1 and res.stderr.startswith("Error: task worker:1 is SUCCEEDED, not running"), res.stderr
    assert res.stderr.count("\n") == 1, res.stderr

    # Every exec is one of the job's events: who ran what, where, and how it ended.
    def exec_events() -> list[str] | None:
        found = [e["message"] for e in status_json(app)["events"] if e["kind"] == "exec"]
        return found if len(found) >= 8 else None
    messages = wait_for("the execs among the job's events", exec_events, timeout_s=60, every_s=2)
    assert any(re.fullmatch(r"\S+ ran `bash --norc -i` in worker:0 in a terminal", m) for m in messages), messages
    assert any(re.fullmatch(r"\S+'s exec in worker:0 ended with exit code 5 \(`bash --norc -i`\)", m)
               for m in messages), messages

    # An exec still running when the job is killed ends with it: nothing of it is left on the node.
    sleeper = subprocess.Popen([*TFYARN, "exec", app, "--task", "worker:0", "--", "sleep", "321"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for("the exec'd sleep", lambda: container_pids(shown["worker:0"]["yarn_container_id"], "sleep 321"),
             timeout_s=60)
    assert tfyarn("kill", app).returncode == 0
    _, err = sleeper.communicate(timeout=120)
    assert sleeper.returncode != 0 and "Traceback" not in err, err
    assert wait_none_left(app, timeout_s=60) == []
    res = tfyarn("exec", app, "--task", "worker:0", "--", "true")
    assert res.returncode == 1 and "has ended (KILLED)" in res.stderr, res.stderr
