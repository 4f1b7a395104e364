"""Talk to YARN for the user: submit, follow, report, kill, fetch logs.

The only module that calls skein's client. skein's exceptions are turned
into tfyarn's here, once, so callers see one error tree.
"""
from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import skein

from tfyarn import hadoop_env
from tfyarn.errors import TfyarnError, UnreachableError
from tfyarn.plan import PlanContext, plan
from tfyarn.spec import JobSpec
from tfyarn.status import JobReport, job_state


@contextmanager
def _skein_errors() -> Iterator[None]:
    try:
        yield
    except skein.exceptions.ConnectionError as e:
        raise UnreachableError(f"lost the connection to YARN: {e}") from None
    except skein.exceptions.DriverError as e:
        raise TfyarnError(f"YARN refused the request: {str(e).strip().splitlines()[0]}") from None
    except skein.exceptions.ApplicationNotRunningError as e:
        raise TfyarnError(str(e)) from None


def driver_log() -> Path:
    """Where skein's Java driver logs (kept out of the user's terminal)."""
    path = Path.home() / ".tfyarn" / "skein-driver.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


class Client:
    """A connection to one YARN cluster; close() it (or use ``with``)."""

    def __init__(self, hadoop: hadoop_env.HadoopEnv | None = None):
        self.hadoop = hadoop or hadoop_env.discover()
        hadoop_env.check_reachable(self.hadoop)
        self.hadoop.apply()
        with _skein_errors():
            self._skein = skein.Client(log=str(driver_log()), log_level="info")

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._skein.close()

    def submit(self, spec: JobSpec) -> str:
        """Submit ``spec``; return the application id."""
        app_spec = plan(spec, PlanContext.for_spec(spec))
        with _skein_errors():
            return self._skein.submit(app_spec)

    def report(self, app_id: str) -> JobReport:
        with _skein_errors():
            r = self._skein.application_report(app_id)
        state, final = str(r.state), str(r.final_status)
        return JobReport(
            app_id=app_id, name=r.name, state=job_state(state, final), yarn_state=state,
            final_status=final, diagnostics=(r.diagnostics or "").strip(),
            tracking_url=r.tracking_url or "", queue=r.queue, user=r.user,
            start_time_ms=_ms(r.start_time), finish_time_ms=_ms(r.finish_time),
        )

    def wait(self, app_id: str, on_change: Callable[[JobReport], None] | None = None,
             poll_s: float = 1.0) -> JobReport:
        """Poll until the job is terminal; call ``on_change`` when its state moves."""
        last = None
        while True:
            rep = self.report(app_id)
            if rep.state != last and on_change:
                on_change(rep)
            last = rep.state
            if rep.state.is_terminal():
                return rep
            time.sleep(poll_s)

    def kill(self, app_id: str) -> None:
        with _skein_errors():
            self._skein.kill_application(app_id)

    def logs(self, app_id: str) -> str:
        """Aggregated logs through ``yarn logs`` (skein's reader predates Hadoop 3.3's layout)."""
        proc = subprocess.run(["yarn", "logs", "-applicationId", app_id], capture_output=True, text=True)
        if proc.returncode != 0:
            raise TfyarnError(f"`yarn logs` failed for {app_id}: {proc.stderr.strip().splitlines()[-1:] or ''}")
        return proc.stdout


def _ms(t: object) -> int:
    return int(t.timestamp() * 1000) if t is not None else 0  # type: ignore[attr-defined]
