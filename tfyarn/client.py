"""Talk to YARN for the user: submit, wait (follow), report, kill, list, logs.

The only module that calls skein's client. skein's exceptions are turned
into tfyarn's here, once, so callers see one error tree.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import skein

from tfyarn import credentials, hadoop_env, history, protocol, rmnodes, skeindriver
from tfyarn.admission import (
    NodeCapacity,
    SchedulerLimits,
    Unreadable,
    check_fits,
    check_limits,
    check_queue,
    check_queue_labels,
    parse_conf,
    parse_nodes,
    parse_queues,
)
from tfyarn.docwatch import open_watch
from tfyarn.errors import SpecError, TfyarnError, UnreachableError
from tfyarn.follow import follow
from tfyarn.plan import TAG, PlanContext, plan, renewal_for
from tfyarn.rest import FetchError, fetch, fetch_json, get
from tfyarn.spec import JobSpec
from tfyarn.status import JobReport, yarn_report
from tfyarn.wire import SnapshotRecord, StatusDoc, TaskStatus, WireError

DRIVER_EXIT_S = 5.0  # how long close() lets skein's driver exit by itself (it takes ~0.5 s idle)
_ALL_APP_STATES = ["NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"]


@contextmanager
def _skein_errors(unknown: TfyarnError | None = None) -> Iterator[None]:
    """skein's exceptions as tfyarn's; ``unknown``: what to raise when YARN does not know the application."""
    try:
        yield
    except skein.exceptions.ApplicationNotRunningError as e:  # before ConnectionError: it is one
        raise TfyarnError(str(e)) from None
    except skein.exceptions.ConnectionError as e:
        raise UnreachableError(f"lost the connection to YARN: {e}") from None
    except skein.exceptions.DriverError as e:
        first = (str(e).strip().splitlines() or [f"no reason given; see {driver_log()}"])[0]
        raise TfyarnError(f"YARN refused the request: {first}") from None
    except (ValueError, KeyError) as e:  # skein's answer to an application id the RM does not know
        if unknown is not None and "unknown applicationid" in str(e).lower():
            raise unknown from None
        raise


def _start_skein() -> skein.Client:
    """skein's client and Java driver; a failed start (`yarn classpath`, no java) as one line.

    skein runs `yarn classpath --glob` with the terminal as its stderr: that
    output is caught and its last line put in the error instead. The error is
    raised only after the failed exception is gone, so skein's ``__del__`` of
    its half-made client writes its complaint into the caught output too.
    """
    failure: TfyarnError | None = None
    with tempfile.TemporaryFile() as err:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            return skein.Client(
                log=str(driver_log()),
                log_level="info",
                principal=os.environ.get(protocol.ENV_PRINCIPAL) or None,
                keytab=os.environ.get(protocol.ENV_KEYTAB) or None,
                java_options=hadoop_env.driver_java_options(),
            )
        except subprocess.CalledProcessError as e:
            err.seek(0)
            last = (err.read().decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            failure = UnreachableError(
                f"`{' '.join(map(str, e.cmd))}` failed (exit {e.returncode}: {last}); "
                "skein needs it to start its driver: put a working Hadoop client's `yarn` "
                "first on PATH (with JAVA_HOME set), or run `tfyarn cluster up`"
            )
        except FileNotFoundError as e:
            failure = UnreachableError(
                f"cannot start skein's driver: {e.strerror or e}: {e.filename or ''}; "
                "install Java and set JAVA_HOME, or put `java` on PATH"
            )
        except skein.exceptions.DriverError as e:
            failure = UnreachableError(
                f"skein's Java driver did not start ({e}); see {driver_log()}, and check JAVA_HOME and `yarn classpath`"
            )
        finally:
            if failure is not None:
                gc.collect()  # the half-made client, while its complaint still goes to ``err``
            os.dup2(saved, 2)
            os.close(saved)
    raise failure


def driver_log() -> Path:
    """Where skein's Java driver logs (kept out of the user's terminal)."""
    path = Path.home() / ".tfyarn" / "skein-driver.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


class Client:
    """A connection to one YARN cluster; close() it (or use ``with``)."""

    def __init__(self, hadoop: hadoop_env.HadoopEnv | None = None):
        self.hadoop = hadoop or hadoop_env.discover()
        hadoop_env.check_conf(self.hadoop.conf_dir)
        hadoop_env.check_reachable(self.hadoop)
        credentials.require(self.hadoop.conf_dir)
        self.hadoop.apply()
        with _skein_errors():
            # A global driver for this cluster saves a JVM start (tfyarn.skeindriver); else one of our own.
            self._skein = skeindriver.connect(self.hadoop.conf_dir) or _start_skein()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop skein's Java driver, killing it after DRIVER_EXIT_S: skein's own close() waits without a
        limit, which on a loaded machine made a Ctrl-C'd `tfyarn wait` outlive its user's patience."""
        proc: subprocess.Popen[bytes] | None = getattr(self._skein, "_proc", None)
        if proc is not None and proc.poll() is None:
            if proc.stdin is not None:
                proc.stdin.close()  # the driver's signal to exit
            try:
                proc.wait(timeout=DRIVER_EXIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._skein.close()

    def _unknown(self, app_id: str) -> TfyarnError:
        host, port = hadoop_env.rm_address(self.hadoop.conf_dir)
        return TfyarnError(
            f"application {app_id} is not known to the ResourceManager at {host}:{port}; check the "
            "id (`tfyarn history` lists your jobs, those the RM has forgotten included)"
        )

    # -- submission -----------------------------------------------------------
    def rm_rest(self, path: str) -> tuple[str, bytes]:
        """(url, body) of the RM's REST ``path`` (FetchError)."""
        url = f"{hadoop_env.rm_web(self.hadoop.conf_dir)}{path}"
        return url, get(url)

    def nodes(self) -> list[NodeCapacity]:
        """RUNNING nodes' capacities from the RM's REST API (FetchError, Unreadable)."""
        return rmnodes.get_nodes(hadoop_env.rm_web(self.hadoop.conf_dir))

    def limits(self) -> SchedulerLimits:
        """The scheduler's limits from the RM's effective configuration (FetchError, Unreadable)."""
        return SchedulerLimits.from_conf(parse_conf(self.rm_rest("/conf")[1]))

    def admit(self, spec: JobSpec, progress: Callable[[str], None] = lambda _m: None) -> None:
        """Raise SpecError for a job the cluster would refuse or never place.

        A check whose RM answer cannot be read (REST down, 401 from a Kerberized
        RM, an unknown format) is reported through ``progress`` as a warning:
        the job goes on unchecked, but never silently.
        """
        am_mb = spec.am_container_mb
        checks: list[tuple[str, str, Callable[[bytes], None]]] = [
            (
                "/ws/v1/cluster/scheduler",
                "the scheduler's queues",
                lambda raw: _check_queue(spec, parse_queues(raw)),
            ),
            (
                "/conf",
                "the scheduler's limits",
                lambda raw: check_limits(spec, SchedulerLimits.from_conf(parse_conf(raw)), am_mb),
            ),
            (rmnodes.RUNNING_NODES_PATH, "the nodes' capacities", lambda raw: check_fits(spec, parse_nodes(raw))),
        ]
        if spec.labels:  # after the nodes: a label no node carries is named as such first
            checks.append(
                (
                    "/ws/v1/cluster/scheduler",
                    "the queues' node labels",
                    lambda raw: _check_queue_labels(spec, parse_queues(raw)),
                )
            )
        for path, what, check in checks:
            url = f"{hadoop_env.rm_web(self.hadoop.conf_dir)}{path}"
            try:
                check(get(url))
            except (FetchError, Unreadable) as e:
                progress(f"Warning: could not read {what} from {url}: {e}; the job was not checked against them")

    def placement_nodes(self, spec: JobSpec, progress: Callable[[str], None] = lambda _m: None) -> tuple[str, ...]:
        """The job's allowed nodes, as the RM names them: its RUNNING nodes less ``exclude_nodes``.

        Each gets a service per role (tfyarn.placement), through which the AM
        places containers and steers restarts off lost nodes. A placement the
        job asked for refuses to go on blind when the RM's nodes cannot be read.
        """
        if spec.labels:
            return ()  # YARN places labelled containers (JobSpec.validate refuses more)
        url = hadoop_env.rm_web(self.hadoop.conf_dir)
        asked = spec.placement != "yarn" or bool(spec.exclude_nodes)
        try:
            known = rmnodes.get_nodes(url, all_states=True)
        except (FetchError, Unreadable) as e:
            if asked:
                key = "exclude_nodes" if spec.exclude_nodes else "placement"
                raise SpecError(f"{key}: cannot read the ResourceManager's nodes from {url} ({e})") from None
            progress(f"Warning: could not read the nodes from {url}: {e}; YARN alone places the tasks")
            return ()
        names = [n.host for n in known]
        for host in spec.exclude_nodes:
            if host not in names:
                raise SpecError(
                    f"exclude_nodes: the cluster has no node {host!r}; its nodes are {', '.join(names) or 'none'} "
                    "(as `tfyarn cluster status` lists them)"
                )
        allowed = tuple(n.host for n in known if n.state == "RUNNING" and n.host not in spec.exclude_nodes)
        if not allowed and spec.exclude_nodes:
            raise SpecError("exclude_nodes: no RUNNING node is left to run the job; exclude fewer nodes")
        return allowed

    def submit(self, spec: JobSpec, progress: Callable[[str], None] = lambda _m: None) -> str:
        """Check the job fits the cluster, ship its environment if asked, submit; return the application id."""
        self.admit(spec, progress)
        if spec.inputs or spec.outputs:
            from tfyarn.preflight import check_paths  # pyarrow and hdfs-native load only when needed

            check_paths(spec, self.hadoop.conf_dir)
        kerberized = hadoop_env.kerberized(self.hadoop.conf_dir)
        ctx = dataclasses.replace(
            PlanContext.for_spec(spec, self.hadoop.conf_dir),
            kerberized=kerberized,
            owner=credentials.user_name(self.hadoop.conf_dir) if kerberized else "",
            nodes=self.placement_nodes(spec, progress),
            renewal=renewal_for(self.hadoop.conf_dir) if kerberized else None,
        )
        if ctx.env_choice is not None:
            progress(ctx.env_choice.warning or ctx.env_choice.line())
        if ctx.shipped_env or ctx.shipped_code:
            from tfyarn import pyenv

            if ctx.shipped_env:
                pyenv.ensure_uploaded(ctx.shipped_env, progress)
            if ctx.shipped_code:  # its archive is written from the same scan, or refused if the dir changed
                progress(f"Shipping code: {ctx.shipped_code.summary} to every task's working dir")
                pyenv.ensure_uploaded(ctx.shipped_code, progress)
        app_spec = plan(spec, ctx)
        app_spec.master.env[protocol.ENV_SUBMIT_TIME] = f"{time.time():.3f}"  # the timeline's origin
        app_spec.master.env[protocol.ENV_RM_WEB] = hadoop_env.rm_web(self.hadoop.conf_dir)
        with _skein_errors():
            return self._skein.submit(app_spec)

    # -- following ------------------------------------------------------------
    def report(self, app_id: str) -> JobReport:
        """YARN's report; for a job the RM has forgotten, what its saved status document says (tfyarn.history)."""
        unknown = self._unknown(app_id)
        try:
            with _skein_errors(unknown):
                return yarn_report(self._skein.application_report(app_id))
        except TfyarnError as e:
            doc = history.read_saved(credentials.user_name(self.hadoop.conf_dir), app_id) if e is unknown else None
            if doc is None:
                raise
            return history.report_of(doc)

    def history(self, user: str = "") -> tuple[list[history.HistoryEntry], list[str]]:
        """The RM's tfyarn jobs and those ``user`` (default: you) saved on HDFS, newest first; and warnings.

        An unreachable RM leaves the saved jobs, an unreadable HDFS the RM's: each says so in a warning.
        """
        user = user or credentials.user_name(self.hadoop.conf_dir)
        reports, docs, warnings = [], {}, []
        try:
            reports = [r for r in self.list_jobs() if r.user == user]
        except TfyarnError as e:
            warnings.append(f"the ResourceManager did not answer ({e}): only the jobs saved on HDFS are listed")
        try:
            docs = history.saved_docs(user)
        except Exception as e:
            where = protocol.job_dir(user, "").rstrip("/")
            warnings.append(f"could not list {where} ({type(e).__name__}: {e}): only the RM's jobs are listed")
        return history.entries(reports, docs), warnings

    def wait(
        self,
        app_id: str,
        total_tasks: int | None = None,
        progress: Callable[[str], None] | None = None,
        poll_s: float = 1.0,
    ) -> JobReport:
        """Follow job ``app_id`` until it ends and return its final report; it never raises for FAILED/KILLED.

        ``progress`` gets each changed progress line (``[  12.3s] RUNNING: containers 2/2 allocated, ...``);
        ``total_tasks`` None takes the count from the AM's status document. Interrupting the wait
        (KeyboardInterrupt) leaves the job running: ``kill`` stops it.
        """
        return follow(self, app_id, total_tasks, progress, poll_s, watch=lambda: open_watch(self._skein, app_id))

    def list_jobs(self) -> list[JobReport]:
        """tfyarn's applications (by tag), newest first."""
        with _skein_errors():
            apps = self._skein.get_applications(states=_ALL_APP_STATES)
        return sorted(
            (yarn_report(a) for a in apps if TAG in (a.tags or ())), key=lambda r: r.start_time_ms, reverse=True
        )

    def status_doc(self, app_id: str) -> StatusDoc | None:
        """The AM's status document: from its page while it runs, else the copy it saved on HDFS."""
        rep = self.report(app_id)
        if not rep.state.is_terminal():
            doc = self.live_doc(rep)
            if doc is not None:
                return doc
            rep = self.report(app_id)
            if not rep.state.is_terminal():
                return None  # the AM has not started serving yet
        return self._saved_doc(rep)

    def live_doc(self, rep: JobReport) -> StatusDoc | None:
        """/api/status through the ResourceManager's proxy, else the AM's key-value copy."""
        if rep.tracking_url.startswith("http"):
            data = fetch_json(protocol.status_page_url(rep.tracking_url) + protocol.API_STATUS)
            try:
                doc = StatusDoc.from_dict(data)
                if doc.app_id == rep.app_id:
                    return doc
            except WireError:  # not served yet ({}), or the proxy's own page: the key-value copy says
                pass
        try:
            with _skein_errors():
                raw = self._skein.connect(rep.app_id, wait=False).kv.get(protocol.KV_STATUS)
        except TfyarnError:
            return None  # it ended meanwhile
        return _parse_doc(raw, rep.app_id, "its AM's key-value store") if raw else None

    def _saved_doc(self, rep: JobReport) -> StatusDoc | None:
        """The final status the AM saved on HDFS, else the line it left in its aggregated log."""
        where = f"{protocol.job_dir(rep.user, rep.app_id)}/{protocol.STATUS_FILE}"
        try:
            from tfyarn.storage import locate, parse_uri

            loc = locate(parse_uri(where))
            with loc.fs.open_input_stream(loc.path, compression=None) as f:
                raw = f.read()
        except Exception:  # not saved (AM died, HDFS unreachable): fall back to the AM's log
            raw = None
        if raw:  # empty: an older AM's write that failed half-way; its log still has the line
            return _parse_doc(raw, rep.app_id, where)
        am_log = self._aggregated_logs(rep.app_id, "-am", "1", "-log_files", protocol.AM_LOG_FILE)
        for line in reversed(am_log.splitlines()):
            if line.startswith(protocol.AM_STATUS_LINE):
                return _parse_doc(line[len(protocol.AM_STATUS_LINE) :], rep.app_id, "its AM's log")
        return None

    def save(self, app_id: str, timeout_s: float = 600, progress: Callable[[str], None] = lambda _m: None) -> list[str]:
        """Ask the output tasks for a snapshot; return the URIs once published."""
        app = self.connect(app_id)
        with _skein_errors(self._unknown(app_id)):
            before = app.kv.get_prefix(protocol.KV_SNAPSHOT_PREFIX)
            app.kv[protocol.KV_SAVE] = str(time.time()).encode()
        progress(f"Snapshot requested from {app_id}; waiting for its output tasks ...")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with _skein_errors():
                now = app.kv.get_prefix(protocol.KV_SNAPSHOT_PREFIX)
            fresh = [SnapshotRecord.from_json(v) for k, v in now.items() if before.get(k) != v]
            if fresh:
                return [u for record in fresh for u in record.uris]
            time.sleep(1)
        raise TfyarnError(f"no snapshot from {app_id} within {timeout_s:.0f} s (does it declare --output?)")

    def connect(self, app_id: str) -> Any:
        """A skein client of the job's AM (its key-value store): only the job's owner's credentials open it."""
        with _skein_errors(self._unknown(app_id)):
            return self._skein.connect(app_id, wait=False)

    def kill(self, app_id: str) -> None:
        try:
            with _skein_errors(self._unknown(app_id)):
                self._skein.kill_application(app_id)
        except TfyarnError as e:
            if "failed to kill" not in str(e).lower():
                raise
            # YARN gives no reason to a user it denies: say what it checks.
            raise TfyarnError(
                f"YARN did not kill {app_id}: only its owner, the users its --modify-acl names and the "
                "queue's administrators may, and only while it runs (tfyarn status shows both)"
            ) from None

    # -- logs -----------------------------------------------------------------
    def logs(self, app_id: str) -> str:
        """Aggregated logs through ``yarn logs`` (skein's reader predates Hadoop 3.3's layout); right after
        the end, once YARN has collected every container's: until then it shows only some, with exit 0."""
        deadline = time.monotonic() + 90  # report(): an id the RM does not know says so, not "could not locate"
        while self.report(app_id).state.is_terminal() and self._aggregating(app_id) and time.monotonic() < deadline:
            time.sleep(1.0)
        return self._yarn_logs(app_id)

    def task_log(self, app_id: str, task: TaskStatus, running: bool) -> str | None:
        """One task's output: from its NodeManager while it keeps the file, else from the aggregated logs.

        None while the job runs but the task's container has ended: its NodeManager
        no longer serves the file and YARN aggregates it only when the job ends.
        After the job, this waits while YARN is still aggregating.
        """
        filename = f"{task.role}.log"
        cid = task.yarn_container_id
        if task.node_http_address and cid:
            raw = fetch(f"http://{task.node_http_address}/ws/v1/node/containerlogs/{cid}/{filename}")
            if raw is not None:  # the same framing as `yarn logs`
                return _log_contents(raw.decode(errors="replace"))
        if not cid:
            return None
        args = ("-containerId", cid, "-log_files", filename)
        if running:
            try:
                return _log_contents(self._yarn_logs(app_id, *args))
            except TfyarnError:
                return None
        return _log_contents(self._aggregated_logs(app_id, *args))

    def _aggregated_logs(self, app_id: str, *args: str, wait_s: float = 90) -> str:
        """``yarn logs`` of an ended job, waiting while YARN still aggregates them."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return self._yarn_logs(app_id, *args)
            except TfyarnError:
                if time.monotonic() > deadline or not self._aggregating(app_id):
                    raise
            time.sleep(1.0)

    def _aggregating(self, app_id: str) -> bool:
        """Whether YARN is still collecting the logs of ended job ``app_id``."""
        data = fetch_json(f"{hadoop_env.rm_web(self.hadoop.conf_dir)}/ws/v1/cluster/apps/{app_id}")
        if data is None:  # the RM does not know it (any more): nothing is aggregating
            return False
        state = (data.get("app") or {}).get("logAggregationStatus")
        return state in (None, "NOT_START", "RUNNING")

    def _yarn_logs(self, app_id: str, *args: str) -> str:
        proc = subprocess.run(["yarn", "logs", "-applicationId", app_id, *args], capture_output=True, text=True)
        if proc.returncode != 0 and "-appOwner" not in args:  # a job the RM forgot: its owner finds its logs
            rep = self.report(app_id)
            if not rep.yarn_state:
                return self._yarn_logs(app_id, *args, "-appOwner", rep.user)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise TfyarnError(f"`yarn logs` failed for {app_id}: {last}")
        return proc.stdout


def _check_queue(spec: JobSpec, queues: list[Any] | None) -> None:
    if queues is not None:  # None: a scheduler that takes any queue name
        check_queue(spec.queue, queues)


def _check_queue_labels(spec: JobSpec, queues: list[Any] | None) -> None:
    if queues is not None:
        check_queue_labels(spec, queues)


def _parse_doc(raw: str | bytes, app_id: str, where: str) -> StatusDoc:
    """The status document in ``raw``; one this tfyarn cannot read is an error that says why."""
    try:
        return StatusDoc.from_json(raw)
    except WireError as e:
        raise TfyarnError(f"the status document of {app_id} ({where}) is unreadable: {e}") from None


def _log_contents(text: str) -> str:
    """The body of a single file in ``yarn logs`` output (between LogContents: and End of LogType)."""
    body, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("LogContents:"):
            inside = True
        elif line.startswith("End of LogType:"):
            inside = False
        elif inside:
            body.append(line)
    return "".join(body)
