"""`tfyarn save` for every user YARN lets save: the owner, and the job's --modify-acl users.

The owner's way is the job's own key-value store (Client.save), which only
the credentials the job was submitted with open. Anyone else goes through
the ResourceManager, which checks YARN's modify ACL: it signals the AM's
container (protocol.SAVE_SIGNAL; appmaster.am.saverequest turns the signal
into the same request), and the snapshot's URIs come back as `save` events
on the status page, which the view ACL opens.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

from tfyarn import credentials, protocol
from tfyarn.errors import TfyarnError
from tfyarn.rest import FetchError, Unreadable, parse_json
from tfyarn.status import JobReport
from tfyarn.wire import StatusDoc

POLL_S = 1.0
UNSEEN_AFTER_S = 15.0  # a page that stays closed this long: the caller has no view ACL


def save(client: Any, app_id: str, timeout_s: float, progress: Callable[[str], None]) -> list[str]:
    """Ask running job ``app_id`` for a snapshot of its outputs; the URIs published (empty if unseen)."""
    rep = client.report(app_id)
    if rep.state.is_terminal():
        raise TfyarnError(
            f"{app_id} has ended ({rep.state.value}): `tfyarn save` snapshots a running job; its final "
            "outputs are where its --output put them"
        )
    me = credentials.user_name()
    if not rep.user or me == rep.user:
        return list(client.save(app_id, timeout_s=timeout_s, progress=progress))
    return _through_yarn(client, rep, me, timeout_s, progress)


def am_container(answer: bytes, app_id: str) -> str:
    """The AM container of the newest attempt, from the RM's /apps/<id>/appattempts (Unreadable).

    The RM hides the container's id from users outside the view ACL: theirs is
    built from the attempt, as the RM numbers an AM's container (the first of its
    attempt; a RM that restarted with recovery adds an epoch this cannot know).
    """
    data = parse_json(answer)
    try:
        newest = max(data["appAttempts"]["appAttempt"], key=lambda a: int(a.get("id", 0)))
        cid, attempt = newest.get("containerId") or "", int(newest["id"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise Unreadable(f"no AM container in the RM's answer ({type(e).__name__}: {e})") from None
    if not cid:
        _app, ts, seq = app_id.split("_")
        return f"container_{ts}_{seq}_{attempt:02d}_000001"
    if not isinstance(cid, str) or not cid.startswith("container_"):
        raise Unreadable(f"the RM's AM container id {cid!r} is not a container id")
    return cid


def signal_am(cid: str) -> str:
    """Have YARN signal the AM's container (`yarn container -signal`): "" if done, else YARN's reason.

    The RPC, not the RM's REST endpoint: Hadoop 3.5's POST .../containers/<id>/signal/<command>
    signals as the RM's own user (its audit log says USER=yarn), so it would pass anyone's signal
    past the job's modify ACL; the RPC is checked against the caller's identity.
    """
    try:
        proc = subprocess.run(
            ["yarn", "container", "-signal", cid, protocol.SAVE_SIGNAL], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`yarn container -signal` did not run ({type(e).__name__}: {e})"
    lines = [ln for ln in proc.stderr.splitlines() if "Exception" in ln]
    if proc.returncode != 0 or lines:
        return (lines or proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[0]
    return ""


def save_events(doc: StatusDoc | None) -> set[tuple[float, str]]:
    return {(e.time, e.message) for e in (doc.events if doc else ()) if e.kind == "save"}


def _through_yarn(client: Any, rep: JobReport, me: str, timeout_s: float, progress: Callable[[str], None]) -> list[str]:
    app_id = rep.app_id
    try:
        cid = am_container(client.rm_rest(f"/ws/v1/cluster/apps/{app_id}/appattempts")[1], app_id)
    except (FetchError, Unreadable) as e:
        raise TfyarnError(f"could not find {app_id}'s AM container through the ResourceManager: {e}") from None
    before = save_events(client.live_doc(rep))
    why = signal_am(cid)
    if why:
        if "AccessControlException" in why or "not authorized" in why.lower() or "permission" in why.lower():
            raise TfyarnError(
                f"YARN refused to pass your save to {app_id}: only its owner ({rep.user}) and the users its "
                f"--modify-acl names can save it, and you are {me}"
            )
        raise TfyarnError(f"the ResourceManager did not pass the save to {app_id}: {why}")
    progress(f"Snapshot requested from {app_id} through YARN (its modify ACL); waiting for its output tasks ...")
    start = time.monotonic()
    seen = False
    while time.monotonic() - start < timeout_s:
        doc = client.live_doc(rep)
        seen = seen or doc is not None
        if not seen and time.monotonic() - start > UNSEEN_AFTER_S:
            progress(
                f"Saving; {app_id}'s status page, which lists the snapshot's URIs, is not open to you "
                f"(its --view-acl): ask {rep.user}, or look under <output URI>.snapshots/"
            )
            return []
        fresh = save_events(doc) - before
        uris = [u for _t, msg in sorted(fresh) for u in protocol.save_event_uris(msg)]
        if uris:
            return uris
        time.sleep(POLL_S)
    raise TfyarnError(f"no snapshot from {app_id} within {timeout_s:.0f} s (does it declare --output?)")
