"""Client.close stops skein's Java driver within a bound, even one that ignores its closed stdin."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tfyarn import client as client_mod


class _Skein:
    """Stands in for skein.Client: only the driver process and close() that close() uses."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self.closed = False

    def close(self) -> None:
        self.closed = True


def _client(proc: subprocess.Popen[bytes]) -> client_mod.Client:
    c = client_mod.Client.__new__(client_mod.Client)  # no cluster: close() only
    c._skein = _Skein(proc)  # type: ignore[assignment]
    return c


def test_a_driver_that_exits_on_eof_is_left_to_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    c = _client(proc)
    c.close()
    assert proc.returncode == 0  # exited by itself, not killed
    assert c._skein.closed  # type: ignore[attr-defined]


def test_a_driver_that_hangs_is_killed_after_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_mod, "DRIVER_EXIT_S", 0.5)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE)
    c = _client(proc)
    t0 = time.monotonic()
    c.close()
    assert proc.returncode is not None and proc.returncode < 0  # killed by a signal
    assert time.monotonic() - t0 < 10
