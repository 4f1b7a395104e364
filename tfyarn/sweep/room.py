"""Whether ``parallel`` trials fit the queue at once, said before the sweep starts.

A sweep that asks for more parallel trials than its queue can ever hold still runs, but the extra
trials wait in YARN's queue (and count against the allocation timeout): the user is warned with the
numbers. The queue's room is the capacity scheduler's ``maxEffectiveCapacity`` of the leaf queue
(what the queue may grow to, elasticity included), read from the RM's scheduler REST answer. An
answer that cannot be read is a warning too, never a silent pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfyarn.nodegpus import GPU
from tfyarn.rest import Unreadable, parse_json
from tfyarn.spec import JobSpec

SCHEDULER_PATH = "/ws/v1/cluster/scheduler"


@dataclass(frozen=True)
class Need:
    memory_mb: int
    vcores: int
    gpus: int

    def fits(self, room: Need) -> int:
        """How many of these fit in ``room`` at once."""
        counts = [room.memory_mb // self.memory_mb if self.memory_mb else None]
        counts.append(room.vcores // self.vcores if self.vcores else None)
        counts.append(room.gpus // self.gpus if self.gpus else None)
        return min(c for c in counts if c is not None)


def trial_need(job: JobSpec) -> Need:
    """What one trial's job holds at once: its ApplicationMaster and every task's container."""
    roles = [r for r in job.roles.values() if r.instances]
    return Need(
        memory_mb=job.am_container_mb + sum(r.instances * r.memory_mb for r in roles),
        vcores=1 + sum(r.instances * r.vcores for r in roles),
        gpus=sum(r.instances * r.gpus for r in roles),
    )


def parse_room(raw: bytes, queue: str) -> Need | None:
    """The leaf queue ``queue``'s maximum effective capacity; None when the scheduler has no such
    figure (the fair or FIFO scheduler) or no such queue (submit's admission names that error)."""
    doc = parse_json(raw)
    try:
        info = doc["scheduler"]["schedulerInfo"]
    except (KeyError, TypeError) as e:
        raise Unreadable(f"unexpected scheduler record (no {e})") from None
    if not isinstance(info, dict) or info.get("type") != "capacityScheduler":
        return None
    leaf = _find(info, queue)
    if leaf is None:
        return None
    cap = leaf.get("maxEffectiveCapacity")
    if not isinstance(cap, dict) or "memory" not in cap:
        raise Unreadable(f"queue {queue} has no maxEffectiveCapacity with memory")
    items = ((cap.get("resourceInformations") or {}).get("resourceInformation")) or []
    gpus = sum(int(i.get("value", 0)) for i in items if isinstance(i, dict) and i.get("name") == GPU)
    return Need(int(cap["memory"]), int(cap.get("vCores", 0)), gpus)


def _find(q: dict[str, Any], name: str) -> dict[str, Any] | None:
    children = (q.get("queues") or {}).get("queue") or []
    path = q.get("queuePath") or q.get("queueName") or ""
    if not children and name in (path, path.rsplit(".", 1)[-1]):
        return q
    for child in children:
        found = _find(child, name)
        if found is not None:
            return found
    return None


def warning(parallel: int, need: Need, room: Need, queue: str) -> str | None:
    """One line when ``parallel`` trials cannot all run at once in the queue, else None."""
    fit = need.fits(room)
    if parallel <= fit:
        return None
    asks = f"{need.memory_mb} MiB, {need.vcores} vcores" + (f", {need.gpus} GPUs" if need.gpus else "")
    holds = f"{room.memory_mb} MiB, {room.vcores} vcores" + (f", {room.gpus} GPUs" if need.gpus else "")
    return (
        f"Warning: parallel is {parallel}, but queue {queue} holds at most {fit} trial(s) at once "
        f"(each asks {asks}; the queue holds {holds}): the others wait in YARN's queue. "
        f"Set parallel: {max(fit, 1)}, or ask for less per trial"
    )


def check(parallel: int, job: JobSpec, fetch: Callable[[str], tuple[str, bytes]], say: Callable[[str], None]) -> None:
    """Warn (through ``say``) when the queue cannot hold ``parallel`` trials, or when that cannot be told.

    ``fetch(path)`` is (url, body) of the RM's REST answer (the client's)."""
    from tfyarn.rest import FetchError

    url = SCHEDULER_PATH
    try:
        url, raw = fetch(SCHEDULER_PATH)
        room = parse_room(raw, job.queue)
    except (FetchError, Unreadable) as e:
        say(f"Warning: could not read queue {job.queue}'s capacity from {url}: {e}; parallel was not checked")
        return
    if room is None:
        say(f"Note: the scheduler gives no maximum capacity for queue {job.queue}; parallel was not checked")
        return
    line = warning(parallel, trial_need(job), room, job.queue)
    if line:
        say(line)
