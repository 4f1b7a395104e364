"""The executor's stdio hook: the processes of one task share a log file, and no two of their lines may glue.

Found in the suite: under `--nproc-per-node 2` a rank's log read
"DDPPROBE rank=2 ... sum=6DDPPROBE rank=3 ... sum=6". With PYTHONUNBUFFERED=1,
print() writes its text and its newline in two write() calls, and the other
rank's line landed between them.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from appmaster.executor import main as executor
from tfyarn import protocol

PRINTER = """\
import sys
for i in range(5000):
    print(f"LINE {sys.argv[1]} {i} " + "x" * 40)
    print(f"ERR {sys.argv[1]} {i}", file=sys.stderr)
"""
WHOLE = re.compile(r"^(LINE [ab] \d+ x{40}|ERR [ab] \d+)$")


def _two_writers(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """Two Python processes printing at once into one O_APPEND file, as a task's log is opened."""
    script = tmp_path / "printer.py"
    script.write_text(PRINTER)
    log = tmp_path / "task.log"
    with open(log, "ab") as out:
        procs = [subprocess.Popen([sys.executable, str(script), tag], stdout=out, stderr=out, env=env)
                 for tag in ("a", "b")]
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
    return log.read_text().splitlines()


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != protocol.ENV_PYTHONPATH}
    env["PYTHONUNBUFFERED"] = "1"  # what every task container gets (tfyarn.plan)
    return env


def test_with_the_hook_every_line_of_two_concurrent_processes_is_whole(tmp_path):
    lines = _two_writers(tmp_path, executor.task_env(_base_env(), {}))
    assert len(lines) == 20000
    assert [line for line in lines if not WHOLE.match(line)] == []


def test_without_the_hook_lines_do_glue(tmp_path):
    """The control: the same two writers without the hook do glue lines (so the test above can fail)."""
    for _ in range(5):  # two processes on a busy machine may, rarely, not overlap at all
        lines = _two_writers(tmp_path, _base_env())
        if any(not WHOLE.match(line) for line in lines):
            return
        (tmp_path / "task.log").unlink()
    raise AssertionError("5 runs of two unbuffered writers never glued a line")


def test_a_job_pythonpath_comes_after_the_hook_and_its_sitecustomize_still_runs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['OTHER_SITECUSTOMIZE'] = 'ran'\n")
    env = executor.task_env(_base_env(), {protocol.ENV_PYTHONPATH: str(site)})
    assert env[protocol.ENV_PYTHONPATH] == f"{executor.STDIO_HOOK_DIR}:{site}"
    out = subprocess.run(
        [sys.executable, "-c", "import os, sys; print(os.environ.get('OTHER_SITECUSTOMIZE'), "
                               "sys.stdout.line_buffering, sys.stderr.line_buffering)"],
        env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ran", "True", "True"]


def test_with_no_other_sitecustomize_the_hook_stays_and_output_is_line_buffered(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", "import sitecustomize, sys; print(sitecustomize.__file__, sys.stdout.line_buffering)"],
        env=executor.task_env(_base_env(), {}), capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    path, buffered = out.split()
    assert (path, buffered) == (os.path.join(executor.STDIO_HOOK_DIR, "sitecustomize.py"), "True")
