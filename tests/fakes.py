"""An in-memory stand-in for what tfyarn uses of skein's ApplicationClient.

The AM loop (appmaster.am.master) and the executor (appmaster.executor.main)
run against it unchanged, in one process: unit tests and benchmarks/am_scale.py
drive them without a cluster. It hands out skein's own ``Container`` objects
(ContainerState enums, datetimes) and enforces what skein enforces (byte
values in the key-value store, ``get_containers``'s default states), so
code that would break on the real client breaks here too. The test plays
YARN through ``allocate`` and ``finish``.

Thread-safe: a test may run the AM's loop or an executor in a thread while it
plays YARN or the other side. Containers are never changed once handed out;
a state change replaces the object, so a reader never sees half an update.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from skein.kv import Event, EventType, ValueOwnerPair
from skein.model import Container, ContainerState

_DEFAULT_STATES = ("WAITING", "REQUESTED", "RUNNING")  # skein's get_containers default
_TERMINAL = ("SUCCEEDED", "FAILED", "KILLED")
KILLED_MESSAGE = "Container killed by the ApplicationMaster."


class FakeKV:
    """``app.kv``: bytes under string keys; ``wait`` blocks until a key is put, as skein's does.

    skein's ``wait`` has no timeout; this one gives up after ``wait_limit_s``
    with TimeoutError, so a test whose other side never answers fails instead of hanging.
    """

    def __init__(self, wait_limit_s: float = 30.0) -> None:
        self._data: dict[str, bytes] = {}
        self._changed = threading.Condition()
        self.wait_limit_s = wait_limit_s
        self.puts: list[str] = []  # every key put, in order (a test can tell when something was written)
        self.waiting: set[str] = set()  # keys someone is blocked on in wait() right now
        self._closed = False
        self._subscribers: list[tuple[str, bool, queue.Queue[Any]]] = []  # (key or prefix, is_prefix, queue)

    def events(self, key: str | None = None, prefix: str | None = None, event_type: str = "ALL") -> queue.Queue[Any]:
        """A queue of skein ``Event``s for PUTs on ``key`` or under ``prefix`` (only PUTs are reported here)."""
        if event_type not in ("PUT", "ALL"):
            raise ValueError(f"FakeKV reports only PUT events, not {event_type}")
        q: queue.Queue[Any] = queue.Queue()
        with self._changed:
            self._subscribers.append((prefix if prefix is not None else key or "", prefix is not None, q))
        return q

    def __setitem__(self, key: str, value: bytes) -> None:
        if not isinstance(key, str) or not isinstance(value, bytes):
            raise TypeError(f"skein's key-value store takes str keys and bytes values, got "
                            f"{type(key).__name__}: {type(value).__name__}")
        with self._changed:
            self._data[key] = value
            self.puts.append(key)
            self._changed.notify_all()
            for want, is_prefix, q in self._subscribers:
                if key.startswith(want) if is_prefix else key == want:
                    q.put(Event(key, ValueOwnerPair(value, None), EventType.PUT, None))

    def __getitem__(self, key: str) -> bytes:
        with self._changed:
            return self._data[key]

    def __contains__(self, key: object) -> bool:
        with self._changed:
            return key in self._data

    def get(self, key: str, default: bytes | None = None) -> bytes | None:
        with self._changed:
            return self._data.get(key, default)

    def get_prefix(self, prefix: str) -> dict[str, bytes]:
        """Every key under ``prefix``, sorted, as skein returns them."""
        with self._changed:
            return {k: self._data[k] for k in sorted(self._data) if k.startswith(prefix)}

    def discard(self, key: str) -> None:
        with self._changed:
            self._data.pop(key, None)

    def discard_prefix(self, prefix: str) -> None:
        with self._changed:
            for k in [k for k in self._data if k.startswith(prefix)]:
                del self._data[k]

    def wait(self, key: str) -> bytes:
        with self._changed:
            self.waiting.add(key)
            try:
                found = self._changed.wait_for(lambda: key in self._data or self._closed, timeout=self.wait_limit_s)
            finally:
                self.waiting.discard(key)
            if not found:
                raise TimeoutError(f"nobody put {key!r} within {self.wait_limit_s} s")
            if key not in self._data:
                raise ConnectionError("the application client is closed")
            return self._data[key]

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()


@dataclass
class FakeUI:
    """``app.ui``: the pages the AM adds to skein's proxy."""

    pages: dict[str, str] = field(default_factory=dict)

    def add_page(self, route: str, target: str, link_name: str | None = None) -> None:
        self.pages[route] = target


class FakeApp:
    """What tfyarn uses of skein.ApplicationClient: containers, ``kv``, ``ui``, ``shutdown``.

    ``requests`` keeps each ``add_container`` call's service and env,
    ``killed`` each container id ``kill_container`` was called with, and
    ``final`` the ``shutdown`` status and diagnostics.
    """

    def __init__(self, app_id: str = "application_1_0001") -> None:
        self.id = app_id
        self.kv = FakeKV()
        self.ui = FakeUI()
        self._lock = threading.RLock()
        self._containers: dict[str, Container] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.killed: list[str] = []
        self.final: tuple[str, str] | None = None
        self.polls = 0  # get_containers calls: a test waits for the AM's next loop by this
        self.closed = False
        self._granted = 0

    @classmethod
    def with_services(cls, instances: dict[str, int], app_id: str = "application_1_0001") -> FakeApp:
        """An application whose spec asked for ``instances`` containers per service (the gang, REQUESTED)."""
        app = cls(app_id)
        for service, n in instances.items():
            for _ in range(n):
                app._new(service)
        return app

    # -- the client's calls ---------------------------------------------------------
    def add_container(self, service: str, env: dict[str, str] | None = None) -> Container:
        with self._lock:
            self.requests.append((service, dict(env or {})))
            return self._new(service)

    def get_containers(self, services: Iterable[str] | None = None,
                       states: Iterable[str] | None = None) -> list[Container]:
        wanted = {str(ContainerState(s)) for s in (states if states is not None else _DEFAULT_STATES)}
        chosen = set(services) if services is not None else None
        with self._lock:
            if self.closed:
                raise ConnectionError("the application client is closed")
            self.polls += 1
            found = [c for c in self._containers.values()
                     if str(c.state) in wanted and (chosen is None or c.service_name in chosen)]
        return sorted(found, key=lambda c: (c.service_name, c.instance))

    def kill_container(self, id: str) -> None:  # noqa: A002 (skein's name)
        with self._lock:
            if id not in self._containers:
                raise ValueError(f"no container {id!r}")  # skein's server refuses an unknown id
            self.killed.append(id)
            if str(self._containers[id].state) not in _TERMINAL:
                self._replace(id, state="KILLED", finish_time=datetime.now(), exit_message=KILLED_MESSAGE)

    def shutdown(self, status: str = "SUCCEEDED", diagnostics: str | None = None) -> None:
        self.final = (status, diagnostics or "")

    def close(self) -> None:
        """Calls fail from now on, as they would once the application is gone: a loop left running ends."""
        with self._lock:
            self.closed = True
        self.kv.close()

    # -- YARN's side, played by the test -------------------------------------------------
    def container(self, cid: str) -> Container:
        with self._lock:
            return self._containers[cid]

    def allocate(self, cid: str, node: str = "node0:8042", yarn_container_id: str = "",
                 start: datetime | None = None) -> Container:
        """YARN granted ``cid`` on ``node`` and started it: RUNNING, with a YARN container id."""
        with self._lock:
            self._granted += 1  # YARN numbers an attempt's containers from 1, the AM's
            serial = f"{self.id.removeprefix('application_')}_01_{self._granted + 1:06d}"
            yarn_id = yarn_container_id or f"container_{serial}"
            return self._replace(cid, state="RUNNING", yarn_container_id=yarn_id, yarn_node_http_address=node,
                                 start_time=start or datetime.now())

    def allocate_all(self, nodes: list[str]) -> None:
        """Every requested container granted, round-robin over ``nodes``."""
        with self._lock:
            waiting = [c.id for c in self.get_containers(states=["WAITING", "REQUESTED"])]
            for i, cid in enumerate(waiting):
                self.allocate(cid, nodes[i % len(nodes)])

    def finish(self, cid: str, state: str, exit_message: str = "") -> Container:
        """The container ended as YARN reports it (SUCCEEDED, FAILED or KILLED)."""
        if state not in _TERMINAL:
            raise ValueError(f"{state} is not a final container state")
        with self._lock:
            return self._replace(cid, state=state, finish_time=datetime.now(), exit_message=exit_message)

    # -- internals --------------------------------------------------------------
    def _new(self, service: str) -> Container:
        instance = sum(1 for c in self._containers.values() if c.service_name == service)
        c = Container(service, instance, "REQUESTED", "", "", None, None, "")
        self._containers[c.id] = c
        return c

    def _replace(self, cid: str, **changes: Any) -> Container:
        old = self._containers[cid]
        values = {k: getattr(old, k) for k in Container._params}
        values.update(changes)
        self._containers[cid] = new = Container(**values)
        return new


class FakeStatusServer:
    """The AM's StatusServer without a socket: it keeps every document the AM hands it."""

    host = "127.0.0.1"
    port = 0

    def __init__(self) -> None:
        self.docs: list[Any] = []
        self.closed = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def update(self, doc: Any, *serialized: Any) -> None:
        self.docs.append(doc)

    def close(self) -> None:
        self.closed = True
