"""The executor's process runner: real child processes, real signals."""
from __future__ import annotations

import builtins
import errno
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from appmaster.executor import process

ROOT = Path(__file__).resolve().parents[2]
# A task's command as the issue found it: a shell with 8 background jobs, stopped mid-run.
SHELL_WITH_JOBS = "for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; echo started; wait"


def driver(command: list[str]) -> subprocess.Popen[str]:
    """A process that runs ``command`` through process.run as the executor does and prints its exit code."""
    code = textwrap.dedent(f"""
        import sys
        from appmaster.executor import process
        out = process.run({command!r}, dict(__import__("os").environ))
        print("EXIT", out.exit_code, getattr(out, "stop_signal", 0), flush=True)
    """)
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def sigterm_once(delay_s: float) -> int | str:
    """Run the shell with jobs, SIGTERM the runner ``delay_s`` after its command started; the code it
    reported, or, when it reported none, what it printed and how it ended."""
    proc = driver(["bash", "-c", SHELL_WITH_JOBS])
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(delay_s)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    words = out.split()
    if "EXIT" in words:
        return int(words[words.index("EXIT") + 1])
    return f"no EXIT after a SIGTERM {delay_s:.3f} s in (rc {proc.returncode}); stdout {out!r}; stderr:\n{err}"


def test_a_stopped_command_never_reports_success_in_200_runs():
    """The forwarding thread once reaped the shell first and Python reported 0 (2 of 30 runs)."""
    rng = random.Random(11)
    delays = [rng.uniform(0.0, 0.6) for _ in range(200)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(sigterm_once, delays))
    died = [c for c in codes if isinstance(c, str)]
    assert not died, "a runner died without reporting:\n" + "\n".join(died)
    false_successes = codes.count(0)
    assert false_successes == 0, f"{false_successes} of 200 stopped runs reported exit code 0"
    assert set(codes) == {128 + signal.SIGTERM}, sorted(set(codes))


def test_a_command_that_exits_0_on_sigterm_still_counts_as_stopped():
    trap = "trap 'exit 0' TERM; echo started; while true; do sleep 0.1; done"
    proc = driver(["bash", "-c", trap])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert out.split()[-3:] == ["EXIT", str(128 + signal.SIGTERM), str(int(signal.SIGTERM))]


def test_the_exit_code_of_an_undisturbed_command_is_kept():
    assert process.run(["bash", "-c", "exit 3"], dict(os.environ)).exit_code == 3
    assert process.run(["true"], dict(os.environ)) == process.Outcome(0, "", 0)


def test_carriage_return_progress_passes_through_before_the_command_ends():
    """tqdm-style output (no newline) must reach the log while the command runs, not at its end."""
    code = textwrap.dedent("""
        import os
        from appmaster.executor import process
        process.run(["bash", "-c", "printf '10%%\\r20%%\\r' >&2; sleep 5"], dict(os.environ))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    t0 = time.monotonic()
    ready, _, _ = select.select([proc.stderr], [], [], 4)
    got = os.read(proc.stderr.fileno(), 100) if ready else b""
    elapsed = time.monotonic() - t0
    proc.kill()
    proc.wait()
    assert b"10%\r20%\r" in got and elapsed < 4


def test_the_stderr_tail_is_bounded_for_one_huge_line_and_keeps_the_last_progress_state():
    huge = process.run(["python3", "-c", "import sys; sys.stderr.write('x' * 5_000_000)"], dict(os.environ))
    assert huge.exit_code == 0 and 0 < len(huge.stderr_tail) <= 2 * process._Tail.MAX_LINE
    bar = process.run(["bash", "-c", "printf 'step 1\\rstep 2\\rstep 3\\n' >&2; exit 1"], dict(os.environ))
    assert bar.exit_code == 1 and bar.stderr_tail.splitlines()[-1] == "step 3"


def test_a_script_without_a_shebang_is_an_exit_record_not_an_exception(tmp_path):
    script = tmp_path / "train.sh"
    script.write_text("echo no shebang here\n")
    script.chmod(0o755)
    out = process.run([str(script)], dict(os.environ))
    assert out.exit_code == process.EXIT_CANNOT_EXECUTE
    assert "#!" in out.stderr_tail
    missing = process.run([str(tmp_path / "nope")], dict(os.environ))
    assert missing.exit_code == 127


def test_a_stop_before_the_command_starts_runs_nothing(tmp_path):
    stop = process.StopSignals()
    stop.signum = signal.SIGTERM
    marker = tmp_path / "ran"
    out = process.run(["touch", str(marker)], dict(os.environ), stop)
    assert out.exit_code == 128 + signal.SIGTERM and not marker.exists()


def test_a_process_that_ends_while_proc_is_read_is_skipped_not_fatal(monkeypatch):
    """A process being torn down answers ESRCH for its /proc entry. That once escaped from
    stop_descendants and killed the runner after its command ended, without an exit record
    (test_a_stopped_command_never_reports_success_in_200_runs, about 1 run in 600 under load)."""
    dying, other = (subprocess.Popen(["sleep", "30"]) for _ in range(2))
    gone = f"/proc/{dying.pid}/"

    def esrch(path: object) -> None:
        raise ProcessLookupError(errno.ESRCH, "No such process", str(path))

    real_open, real_stat = builtins.open, os.stat
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: esrch(f) if str(f).startswith(gone)
                        else real_open(f, *a, **k))
    monkeypatch.setattr(os, "stat", lambda f, *a, **k: esrch(f) if str(f).startswith(gone)
                        else real_stat(f, *a, **k))
    try:
        below = process.descendants(os.getpid())
    finally:
        monkeypatch.undo()
        for p in (dying, other):
            p.kill()
            p.wait()
    assert other.pid in below and dying.pid not in below
