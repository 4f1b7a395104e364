"""The executor's background reporter: timeline, GPU telemetry, TensorBoard mirror.

One daemon thread per task: it forwards the milestones the user's script
writes to $TFYARN_EVENTS (tfyarn.report), samples the task's GPUs, and
mirrors its TensorBoard dir to HDFS, so a multi-node job's summaries meet
in one place the AM's TensorBoard reads. Nothing here may fail the task.
"""

from __future__ import annotations

import collections
import json
import logging
import math
import os
import threading
import time
from typing import Any

import skein

from appmaster.executor import gpus
from tfyarn import protocol, renewal, wire

log = logging.getLogger("tfyarn.executor.monitor")

EVENTS_POLL_S = 1.0
SLOW_EVERY_S = 5.0  # telemetry and TensorBoard mirroring


class Timeline:
    """This task's startup stages, each stamped once and published to the AM."""

    def __init__(self, app: skein.ApplicationClient, role: str, index: int):
        self.app, self.key = app, protocol.kv_task_events(role, index)
        self.stages: dict[str, float] = {}
        self.lock = threading.Lock()

    def stamp(self, stage: str, when: float | None = None) -> None:
        with self.lock:
            if stage in self.stages:
                return
            self.stages[stage] = when if when is not None else time.time()
            doc = (
                wire.EventsRecord(
                    stages=dict(self.stages), container=os.environ.get(protocol.ENV_YARN_CONTAINER_ID, "")
                )
                .to_json()
                .encode()
            )
        try:
            self.app.kv[self.key] = doc
        except Exception as e:  # the AM may be gone at the very end
            log.warning(f"could not report {stage}: {e}")


def mirror_tensorboard(local_dir: str, uri: str) -> None:
    """Copy new and grown summary files of ``local_dir`` to ``uri`` (complete files are skipped)."""
    from tfyarn.storage import locate, mirror, parse_uri

    if os.path.isdir(local_dir) and any(os.scandir(local_dir)):
        mirror(locate(parse_uri(os.path.abspath(local_dir))), locate(parse_uri(uri)))


MAX_STAGE_CHARS = 64
PLAUSIBLE_S = 7 * 86400  # an event's time within a week of now: anything else is a broken clock or a bug


def parse_event(line: str) -> tuple[str, float] | None:
    """(stage, epoch seconds) from one line the user's script wrote, or None if it is not a sane one.

    The user's process writes this file: a non-finite or absurd time, or a
    huge stage name, must not reach the status document (it broke the page).
    """
    try:
        record: dict[str, Any] = json.loads(line)
        stage, when = record["stage"], float(record["time"])
    except (ValueError, KeyError, TypeError, OverflowError):
        return None
    if not isinstance(stage, str) or not 0 < len(stage) <= MAX_STAGE_CHARS or not stage.isprintable():
        return None
    if not math.isfinite(when) or abs(when - time.time()) > PLAUSIBLE_S:
        return None
    return stage, when


def parse_heartbeat(line: str) -> dict[str, Any] | None:
    """A tfyarn.report.progress()/metric() line ({"progress": true, ...}), or None if it is not one."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and record.get("progress") is True else None


def parse_membership(line: str) -> wire.MembershipRecord | None:
    """An elastic agent's membership line (appmaster.executor.elastic_agent), or None if it is not one."""
    try:
        record = json.loads(line)
        if not isinstance(record, dict) or record.get("membership") is not True:
            return None
        return wire.MembershipRecord(
            world_size=int(record["world_size"]),
            group_rank=int(record["group_rank"]),
            restart_count=int(record["restart_count"]),
            time=float(record["time"]),
            container=os.environ.get(protocol.ENV_YARN_CONTAINER_ID, ""),
        )
    except (ValueError, KeyError, TypeError, OverflowError):
        return None


SERIES_MAX = 40  # recent values kept per metric (the page's sparkline)
METRICS_MAX = 16  # metrics kept per task: a script that names one per step must not grow the document


class ProgressLog:
    """The heartbeats a script sent: the newest step and metric values, and each metric's recent values."""

    def __init__(self) -> None:
        self.time = 0.0
        self.step: int | None = None
        self.series: dict[str, collections.deque[float]] = {}
        self.counts: dict[str, int] = {}  # values of each metric so far (a sweep's pruner steps by them)
        self.changed = False

    def add(self, beat: dict[str, Any]) -> int | None:
        """Take one heartbeat line; the step it reached (None when it gave none)."""
        self.time, self.changed = time.time(), True
        step = beat.get("step")
        if isinstance(step, int) and not isinstance(step, bool):
            self.step = step
        metrics = beat.get("metrics")
        for name, value in metrics.items() if isinstance(metrics, dict) else ():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                continue
            name = str(name)[:MAX_STAGE_CHARS]
            if name in self.series or len(self.series) < METRICS_MAX:
                self.series.setdefault(name, collections.deque(maxlen=SERIES_MAX)).append(float(value))
                self.counts[name] = self.counts.get(name, 0) + 1
        return self.step

    def take(self) -> wire.Progress | None:
        """A record of what is new since the last take, or None."""
        if not self.changed:
            return None
        self.changed = False
        return wire.Progress(
            time=self.time,
            step=self.step,
            metrics={n: v[-1] for n, v in self.series.items()},
            series={n: tuple(v) for n, v in self.series.items()},
            counts=dict(self.counts),
        )


class Monitor(threading.Thread):
    def __init__(
        self,
        app: skein.ApplicationClient,
        role: str,
        index: int,
        timeline: Timeline,
        events_file: str,
        devices: list[int],
        tb_dir: str = "",
        tb_uri: str = "",
    ):
        super().__init__(daemon=True, name="tfyarn-monitor")
        self.app, self.role, self.index, self.timeline = app, role, index, timeline
        self.events_file, self.devices, self.tb_dir, self.tb_uri = events_file, devices, tb_dir, tb_uri
        self.offset = 0
        self.stopped = threading.Event()
        # What the hang watchdog reads: when a report last arrived (monotonic), and whether the script
        # sends heartbeats (progress/metric), after which its output no longer counts as progress.
        self.last_report = 0.0
        self.last_report_what = ""
        self.heartbeats = False
        self.progress = ProgressLog()

    def run(self) -> None:
        last_slow = 0.0
        while not self.stopped.wait(EVENTS_POLL_S):
            self._forward_events()
            if time.monotonic() - last_slow >= SLOW_EVERY_S:
                last_slow = time.monotonic()
                self._publish_progress()
                self._telemetry()
                self._tensorboard()

    def finish(self) -> None:
        """Last forward and mirror after the user process ended."""
        self.stopped.set()
        self.join(timeout=60)
        self._forward_events()
        self._publish_progress()
        self._tensorboard()

    def _forward_events(self) -> None:
        try:
            with open(self.events_file, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        whole = data.rfind(b"\n") + 1  # a last line without its newline is still being written: next time
        self.offset += whole
        for line in data[:whole].decode(errors="replace").splitlines():
            event = parse_event(line)
            if event:  # a torn, foreign or implausible line is skipped
                self.timeline.stamp(*event)
                stage = event[0]
                what = "tfyarn.report.first_step()" if stage == "first_step" else f"tfyarn.report.milestone({stage!r})"
                self.last_report, self.last_report_what = time.monotonic(), what
            elif (member := parse_membership(line)) is not None:
                try:  # rare (one per rendezvous round) and what the page's world size shows: sent at once
                    self.app.kv[protocol.kv_task_membership(self.role, self.index)] = member.to_json().encode()
                except Exception as e:
                    log.warning(f"could not report the rendezvous round: {e}")
            elif (beat := parse_heartbeat(line)) is not None:
                self.heartbeats = True
                step = self.progress.add(beat)
                self.last_report = time.monotonic()
                self.last_report_what = "tfyarn.report.progress()" + (f" at step {step}" if step is not None else "")

    def _publish_progress(self) -> None:
        """The newest heartbeat to the AM (status page, `status --json`), when there is a new one."""
        record = self.progress.take()
        if record is not None:
            try:
                container = os.environ.get(protocol.ENV_YARN_CONTAINER_ID, "")
                doc = wire.ProgressRecord(progress=record, container=container).to_json().encode()
                self.app.kv[protocol.kv_task_progress(self.role, self.index)] = doc
            except Exception as e:  # the AM may be gone at the very end
                log.warning(f"could not report progress: {e}")

    def _telemetry(self) -> None:
        sample = gpus.telemetry(self.devices)
        if sample is not None:
            try:
                container = os.environ.get(protocol.ENV_YARN_CONTAINER_ID, "")
                record = wire.TelemetryRecord(
                    gpus=tuple(wire.GpuSample.from_dict(g) for g in sample), time=time.time(), container=container
                )
                self.app.kv[protocol.kv_task_telemetry(self.role, self.index)] = record.to_json().encode()
            except Exception:  # telemetry is best effort: the AM may be gone, NVML may answer oddly
                pass

    def _tensorboard(self) -> None:
        if not self.tb_uri:
            return
        try:
            renewal.refresh(self.app)
            mirror_tensorboard(self.tb_dir, self.tb_uri)
        except Exception as e:
            log.warning(f"TensorBoard mirror failed (training goes on): {type(e).__name__}: {e}")
