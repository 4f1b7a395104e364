"""tfyarn.tensorflow.finish: a ParameterServerStrategy chief that lost a worker still ends.

Real TensorFlow servers on loopback; the chief is tf_lost_worker_chief.py.
The control run shows the TensorFlow hang that ``finish`` exists for: with
a plain ``sys.exit`` the chief is still alive well after its last line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHIEF = Path(__file__).with_name("tf_lost_worker_chief.py")


def start(how: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(CHIEF), how], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def test_a_chief_that_lost_a_worker_ends_with_finish():
    proc = start("finish")
    try:
        out, _ = proc.communicate(timeout=240)
    finally:
        stop(proc)
    assert proc.returncode == 0, out[-3000:]
    assert "steps 16" in out, out[-3000:]  # every step ran, on the worker left


def test_without_finish_tensorflows_teardown_hangs_after_the_last_line():
    """The control: if TensorFlow fixes its teardown this fails, and finish can go."""
    proc = start("exit")
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        for line in proc.stdout:
            if line.startswith("steps") or time.monotonic() > deadline:
                break
        assert line.startswith("steps"), line
        time.sleep(20)
        assert proc.poll() is None, "the chief ended: TensorFlow no longer hangs at exit after a lost worker"
    finally:
        stop(proc)
