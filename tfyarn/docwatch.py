"""The AM's status documents pushed to a follower while the job trains, instead of polled.

The AM rewrites its status document in the job's key-value store on every
change (protocol.KV_STATUS). A skein watch on that key streams each new copy
over the connection the follower already holds to the AM: nothing is asked
of the ResourceManager, skein's driver or the AM's page while nothing
changes, and the AM's final document (its decided state) arrives the moment
it is written. Only the job's owner can open the store (its credentials);
anyone else follows by polling, as before (tfyarn.follow).
"""

from __future__ import annotations

import queue
from typing import Any

from tfyarn import protocol
from tfyarn.wire import StatusDoc, WireError


class WatchEnded(Exception):
    """The watch stream is gone (the AM ended or cannot be reached): follow by polling."""


class DocWatch:
    """``next(timeout)``: the next status document the AM wrote, or None if none came meanwhile."""

    def __init__(self, events: Any, app_id: str) -> None:
        self._events = events  # a skein EventQueue on protocol.KV_STATUS
        self._app_id = app_id

    def next(self, timeout: float) -> StatusDoc | None:
        try:
            event = self._events.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        except Exception as e:  # skein puts the stream's error into the queue: ConnectionError, ApplicationError
            raise WatchEnded(f"{type(e).__name__}: {e}") from None
        try:
            doc = StatusDoc.from_json(event.result.value)  # skein's Event: key, result (value, owner), ...
        except (WireError, TypeError, AttributeError) as e:
            raise WatchEnded(f"an unreadable status document: {e}") from None
        return doc if doc.app_id == self._app_id else None

    def close(self) -> None:
        try:
            self._events.unsubscribe_all()
        except Exception:  # the stream is already gone
            pass


def open_watch(skein_client: Any, app_id: str) -> DocWatch | None:
    """A watch on ``app_id``'s status document, or None where its store cannot be opened (not the owner,
    the AM gone or not serving yet)."""
    try:
        app = skein_client.connect(app_id, wait=False)
        return DocWatch(app.kv.events(key=protocol.KV_STATUS, event_type="PUT"), app_id)
    except Exception:
        return None
