"""Wait for a condition instead of sleeping: a test proceeds the moment it holds, and fails naming it."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], timeout_s: float = 10, every_s: float = 0.02, what: str = "") -> T:
    """Poll ``check`` until it returns something true and return that; on timeout fail with its last answer.

    A fixed sleep is either too short under load (a flake) or too long on an
    idle machine; polling is neither.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for "
                                 f"{what or getattr(check, '__name__', 'a condition')}; last: {last!r}")
        time.sleep(every_s)


class Background(Generic[T]):
    """``fn()`` in a daemon thread, so a test can play the other side meanwhile."""

    def __init__(self, fn: Callable[[], T], name: str = "background") -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], T]) -> None:
        try:
            self._value = fn()
        except BaseException as e:  # re-raised in the test's thread by result()
            self._error = e

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def result(self, timeout_s: float = 10) -> T:
        """What ``fn`` returned (or raise what it raised), once it ends within ``timeout_s``."""
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise AssertionError(f"{self._thread.name} still running after {timeout_s:g} s")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
