"""tfyarn's ApplicationMaster: the Python side of the AM container.

skein's Java AM handles YARN's protocol; this script, run as its master
script, decides everything job-specific: it follows the gang's containers
(YARN starts one per task from the application spec), asks for new ones
on restarts, publishes the cluster view once every task has registered (gang
start), follows the tasks, stops the ones still running when the job is
decided, and ends the application with the job's real outcome. It never
lets the application end SUCCEEDED unless the job's rules say so.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

import skein

from appmaster.am import events, fit, gpus, placing, saverequest
from appmaster.am.rendezvous import RendezvousStore
from appmaster.am.tasks import DROP, RESTART, RESTART_ALL, Task, TaskTable
from appmaster.am.tensorboard import TensorBoard
from appmaster.am.web import StatusServer
from tfyarn import logfmt, nodegpus, protocol, taskenv, wire
from tfyarn.fields import duration_text
from tfyarn.renewal import Renewer
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState

log = logging.getLogger(logfmt.AM_LOGGER)

POLL_S = 0.25  # while the gang starts or a task restarts: every step of the start shows at once
# While every task trains: each poll is two RPCs to the AM's JVM, on the training's cores. 2 s, not 1:
# the platform's CPU while the DDP example trains fell from 2.8% of the training's (benchmarks/ddp_overhead.py);
# a task's end is seen up to 1 s later.
STEADY_POLL_S = 2.0
DOC_REFRESH_S = 2.0  # the status document's refresh while nothing changes (its duration, the page's clock)
# The key-value copy is pushed to the owner's `wait` (tfyarn.docwatch): a change of a task's state,
# address or events goes at once; a heartbeat's or telemetry's alone at most this often.
KV_LIVE_EVERY_S = 5.0
_ALL_STATES = ["WAITING", "REQUESTED", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"]


def am_attempt() -> int:
    """This AM's attempt number, from its container id (container_[e<epoch>_]<ts>_<app>_<attempt>_<n>)."""
    parts = os.environ.get(protocol.ENV_YARN_CONTAINER_ID, "").split("_")
    try:
        return int(parts[-2])
    except (IndexError, ValueError):
        return 1


def request_container(app: skein.ApplicationClient, job: JobSpec, task: Task, now: float, service: str = "") -> None:
    """Ask YARN for one container running ``task``'s executor, from ``service`` (a <role>@<host> one
    names its node; tfyarn.placement), else from the role's own."""
    env = taskenv.task_env(job, task.role, task.index, app.id, task.previous_address)
    container = app.add_container(service or task.role, env=env)
    task.container_id = container.id
    task.state = TaskState.REQUESTED
    task.requested_at, task.restart_at = now, None


def adopt_initial(table: TaskTable, now: float) -> None:
    """Take on the containers skein asked for at the AM's start, one per task (see plan.plan).

    They are requested before this script has even started, so the gang's
    allocation overlaps the AM's own start-up instead of following it.
    """
    for task in table.tasks:
        task.container_id = taskenv.initial_container_id(task.role, task.index)
        task.state = TaskState.REQUESTED
        task.requested_at = now


def sync(app: skein.ApplicationClient, table: TaskTable) -> dict[str, bytes]:
    """Fold skein's container states, registrations and exit records into the table.

    An exit record decides a task as soon as the executor writes it, seconds
    before YARN reports the container finished; a container that ended
    without one (killed, lost, out of memory) is decided by YARN's state.
    """
    kv = app.kv.get_prefix(protocol.KV_PREFIX)
    by_container = {t.container_id: t for t in table.tasks}  # one lookup per container, not a scan
    for c in app.get_containers(states=_ALL_STATES):
        task = by_container.get(c.id)
        if task is None or task.state.is_terminal():
            continue
        task.yarn_container_id = c.yarn_container_id or ""
        task.node_http_address = c.yarn_node_http_address or ""
        task.host = task.node_http_address.rsplit(":", 1)[0]
        task.state = TaskState(str(c.state))
        if task.state.is_terminal():
            task.exit_message = c.exit_message or ""
        if c.start_time and "allocated" not in task.timeline:
            task.timeline["allocated"] = c.start_time.timestamp()
    for task in table.tasks:
        mine = wire.TaskRecords.read(kv, task.role, task.index, task.yarn_container_id)
        reg = mine.registration
        if reg and not task.address:
            task.address, task.staging_s, task.staging_bytes = reg.address, reg.staging_s, reg.staging_bytes
            if reg.gpus is not None:  # YARN or Docker bound them
                task.gpus, task.gpu_binding = list(reg.gpus), reg.gpu_binding or "yarn"
        if mine.events:
            task.timeline.update(mine.events.stages)
        if mine.telemetry:
            task.telemetry = mine.telemetry.gpus
        if mine.progress:
            task.progress = mine.progress.progress
        if mine.membership:
            task.membership = mine.membership
        record = mine.exit
        if record and task.exit_code is None and task.state != TaskState.RESTARTING:
            task.exit_code, task.stderr_tail = record.code, record.stderr_tail
            task.state = TaskState.SUCCEEDED if task.exit_code == 0 else TaskState.FAILED
    return kv


def bind_gpus(app: skein.ApplicationClient, table: TaskTable, pool: gpus.DevicePool, bound: set[str]) -> None:
    """Tell every newly registered task its devices before the gang starts.

    Devices YARN or Docker bound (the task's registration says so) are
    kept; otherwise the AM binds the task's count from its node's devices.
    """
    info: dict[str, Any] = {}
    for task in table.tasks:
        if task.name in bound or not task.address:
            continue
        if task.gpus_asked and not task.gpu_binding:
            if task.node_http_address not in info:
                info[task.node_http_address] = nodegpus.node_gpu_info(task.node_http_address)
            node = info[task.node_http_address]
            task.gpus = pool.bind(
                task.host, task.name, task.gpus_asked, nodegpus.node_devices(node), nodegpus.yarn_busy(node)
            )
            task.gpu_binding = "tfyarn"
            if len(task.gpus) < task.gpus_asked:
                log.warning(
                    f"{task.name} asked {task.gpus_asked} GPU(s) but {task.host} has only "
                    f"{len(task.gpus)} unbound; it gets those"
                )
        task.gpu_binding = task.gpu_binding or "none"
        assignment = wire.GpuAssignment(tuple(task.gpus))
        app.kv[protocol.kv_task_gpus(task.role, task.index)] = assignment.to_json().encode()
        bound.add(task.name)


def forget(app: skein.ApplicationClient, task: Task, pool: gpus.DevicePool, bound: set[str]) -> None:
    """Clear what the task's last container left: its keys, its GPUs."""
    for key in protocol.kv_task_keys(task.role, task.index):
        app.kv.discard(key)
    pool.release(task.host, task.name)
    bound.discard(task.name)


def handle_failures(app: skein.ApplicationClient, job: Job, pool: gpus.DevicePool, bound: set[str], now: float) -> None:
    """Apply each failed task's restart policy: restart it, restart everything, or let the job fail."""
    table = job.table
    for t in table.failed():
        action = table.failure_action(t)
        job.events.failure(t)
        if action == DROP:
            t.dropped = True
            job.events.dropped(t, len(table.members()), table.elastic.min_instances if table.elastic else 0)
            forget(app, t, pool, bound)
        elif action == RESTART:
            delay = table.backoff_s(t, t.restarts)
            log.warning(
                f"{t.name} failed (exit code {t.exit_code}); restarting it in {delay:.0f} s (restart {t.restarts + 1})"
            )
            job.events.restart(t, delay, t.restarts + 1)
            forget(app, t, pool, bound)
            t.reset(now + delay, keep_address=True)
        elif action == RESTART_ALL:
            delay = table.backoff_s(t, table.job_restarts)
            table.job_restarts += 1
            log.warning(
                f"{t.name} failed (exit code {t.exit_code}); restarting all "
                f"{len(table.tasks)} task(s) in {delay:.0f} s with a fresh rendezvous "
                f"(job restart {table.job_restarts})"
            )
            job.events.restart(t, delay, table.job_restarts, len(table.tasks))
            app.kv.discard(protocol.KV_CLUSTER)
            job.timeline.pop("rendezvous", None)
            for other in table.tasks:
                if other.container_id and not other.state.is_terminal():
                    app.kill_container(other.container_id)
                forget(app, other, pool, bound)
                other.reset(now + delay, keep_address=False)
            return


def free_resources(rm_web: str, table: TaskTable) -> str:
    """What the cluster's running nodes have free, per node, and whether the unallocated tasks fit."""
    from tfyarn.rmnodes import fetch_nodes

    nodes = fetch_nodes(rm_web) if rm_web else None
    missing: dict[str, tuple[int, RoleSpec]] = {}
    for t in table.tasks:
        if t.state in (TaskState.WAITING, TaskState.REQUESTED) and t.role in table.roles:
            count, spec = missing.get(t.role, (0, table.roles[t.role]))
            missing[t.role] = (count + 1, spec)
    return fit.explain(nodes or [], missing)


def log_urls(task: Task, user: str) -> dict[str, str]:
    """Live links to the task's log on its NodeManager's web UI."""
    if not (task.node_http_address and task.yarn_container_id):
        return {}
    base = f"http://{task.node_http_address}/node/containerlogs/{task.yarn_container_id}/{user}"
    return {"log_url": f"{base}/{task.role}.log/?start=-65536", "logs_dir_url": base}


class Job:
    """Everything the AM knows about the job, and its status as one document."""

    def __init__(self, app_id: str, spec: JobSpec, table: TaskTable, started: float):
        self.app_id, self.spec, self.table = app_id, spec, table
        self.user = taskenv.job_user()
        submitted = float(os.environ.get(protocol.ENV_SUBMIT_TIME) or 0) or None
        self.timeline: dict[str, float | None] = {"submitted": submitted, "am_started": started}
        self.tensorboard: TensorBoard | None = None
        self.attempt = am_attempt()
        self.events = events.Events(spec.on_event, app_id)
        self.world_size = 0  # elastic: the newest rendezvous round's group size
        role = spec.elastic_role
        self.elastic = f"{role.min_instances}:{role.instances}" if role else ""

    def signature(self, live: bool = True) -> tuple[Any, ...]:
        """Changes whenever what the status shows of the tasks does (cheap: no document is built);
        ``live`` False leaves out what changes while tasks train (telemetry, heartbeats)."""
        return (
            self.table.job_restarts,
            self.events.count,
            self.world_size,
            tuple(self.timeline.items()),
            self.tensorboard.info() if self.tensorboard else None,
            *(
                (
                    t.state,
                    t.container_id,
                    t.yarn_container_id,
                    t.address,
                    t.exit_code,
                    t.restarts,
                    len(t.timeline),
                    tuple(t.gpus),
                    t.gpu_binding,
                    repr(t.telemetry) if live else None,
                    t.progress.time if live and t.progress else 0.0,
                )
                for t in self.table.tasks
            ),
        )

    def origin(self) -> float:
        """When the job's clock started: its submission, else (no client stamp) the AM's start."""
        return self.timeline["submitted"] or self.timeline["am_started"] or time.time()

    def status(self, state: str, diagnostics: str = "") -> wire.StatusDoc:
        """The job's status document: the page, `tfyarn status` and the saved history all show this."""
        now = time.time()
        origin = self.origin()
        tb = self.tensorboard
        return wire.StatusDoc(
            app_id=self.app_id,
            name=self.spec.name,
            framework=self.spec.framework,
            user=self.user,
            queue=self.spec.queue,
            state=state,
            diagnostics=diagnostics,
            time=now,
            attempt=self.attempt,
            job_restarts=self.table.job_restarts,
            duration_s=now - origin,
            timeline=dict(self.timeline),
            tasks=tuple(t.status(**log_urls(t, self.user)) for t in self.table.tasks),
            tensorboard=wire.TensorBoardStatus(tb.state, tb.uri) if tb else None,
            outputs=tuple(wire.OutputStatus(o.src, o.dest, self.spec.output_task(o)) for o in self.spec.outputs),
            events=self.events.recent(),
            elastic=self.elastic,
            world_size=self.world_size,
        )

    def follow_membership(self) -> None:
        """Elastic: take the newest round's world size; each change is an event (and on the chart)."""
        size = self.table.world_size()
        if size and size != self.world_size:
            self.events.membership(self.world_size, size)
            log.info(f"elastic group: world size {self.world_size or '-'} -> {size}")
            self.world_size = size


def run(app: skein.ApplicationClient, job: Job, web: StatusServer) -> tuple[str, str]:
    store = RendezvousStore(os.environ.get(protocol.ENV_NM_HOST) or "localhost") if job.table.elastic else None
    try:
        return follow(app, job, web, store)
    finally:
        if store:
            store.stop()


def follow(app: skein.ApplicationClient, job: Job, web: StatusServer, store: RendezvousStore | None) -> tuple[str, str]:
    """The AM's loop: follow the tasks until the job is decided; stop what still runs."""
    table, spec = job.table, job.spec
    placer = placing.Placer.from_env(spec)
    if placer.places_initial:  # the plan asked for none of them: they go where placement says
        first = placer.initial(table)
        for task in table.tasks:
            request_container(app, spec, task, time.time(), first[task.name])
    else:
        adopt_initial(table, time.time())
    log.info(f"following the {len(table.tasks)} container(s) of job {spec.name!r}")
    pool, bound = gpus.DevicePool(), set[str]()
    last: tuple[Any, ...] = ()
    kv_sig: tuple[Any, ...] = ()  # the key-value copy's (signature, shape) and when it was written
    kv_shape: tuple[Any, ...] = ()
    doc_at = kv_at = 0.0
    while (outcome := table.outcome()) is None:
        # Steady: every task trains (elastic: or waits for capacity, or was given up): slower polls.
        steady = "rendezvous" in job.timeline and all(
            t.state == TaskState.RUNNING or (table.elastic and (t.state == TaskState.REQUESTED or t.dropped))
            for t in table.tasks
        )
        time.sleep(STEADY_POLL_S if steady else POLL_S)
        now = time.time()
        kv = sync(app, table)
        hosts = {t.name: t.host for t in table.tasks}
        job.events.execs(kv, hosts)
        job.events.saves(kv, hosts)
        if saverequest.taken():  # `tfyarn save` by a --modify-acl user, through YARN
            log.info("YARN signalled the AM's container: asking the output tasks for a snapshot")
            app.kv[protocol.KV_SAVE] = str(time.time()).encode()
        for t in table.failed():
            placer.note_failure(t)
        handle_failures(app, job, pool, bound, now)
        for task in table.due_restarts(now):
            request_container(app, spec, task, now, placer.restart_service(task, table))
        bind_gpus(app, table, pool, bound)
        if store and store.error:
            outcome = ("FAILED", store.error)
            break
        if "rendezvous" not in job.timeline and table.ready() and (store is None or store.endpoint):
            view = table.cluster_view()
            if store:
                view[protocol.VIEW_RENDEZVOUS] = [store.endpoint]
            app.kv[protocol.KV_CLUSTER] = wire.ClusterView.of(view).to_json().encode()
            job.timeline["rendezvous"] = time.time()
            log.info(f"{len(table.members()) or len(table.tasks)} task(s) registered; cluster view published")
        job.follow_membership()
        if why := table.below_min(now, "rendezvous" in job.timeline):
            outcome = ("FAILED", why)
            break
        if table.timed_out(now, spec.allocation_timeout_s, spec.registration_timeout_s):
            why = table.timed_out(
                now,
                spec.allocation_timeout_s,
                spec.registration_timeout_s,
                free_resources(os.environ.get(protocol.ENV_RM_WEB, ""), table),
            )
            outcome = ("FAILED", why or "gang timeout")
            break
        if spec.max_runtime_s and now - job.origin() > spec.max_runtime_s:
            outcome = ("FAILED", over_max_runtime(spec.max_runtime_s, now - job.origin(), table))
            break
        # The document costs tens of ms at 1,000 tasks: rebuilt when a task changed, or every
        # DOC_REFRESH_S for its clock; copied to the key-value store on a change (KV_LIVE_EVERY_S).
        sig = job.signature()
        if sig != last or now - doc_at >= DOC_REFRESH_S:
            doc = job.status("RUNNING")
            web.update(doc)
            doc_at, last = now, sig
            if sig != kv_sig and ((shape := job.signature(live=False)) != kv_shape or now - kv_at >= KV_LIVE_EVERY_S):
                app.kv[protocol.KV_STATUS] = doc.to_json().encode()
                kv_sig, kv_shape, kv_at = sig, shape, now
    job.events.decided(table, outcome)
    # Decided: whatever still runs or waits (parameter servers, evaluator, the rest after a
    # failure, requests YARN never granted) is stopped and released.
    for t in table.tasks:
        if not t.state.is_terminal() and t.container_id:
            app.kill_container(t.container_id)
            t.state = TaskState.KILLED if t.exit_code is None else t.state
        elif t.state == TaskState.RESTARTING:  # its new container was never asked for
            t.state = TaskState.KILLED
    return outcome


def over_max_runtime(limit_s: int, elapsed_s: float, table: TaskTable) -> str:
    """The diagnostics of a job stopped by its --max-runtime: the limit, and what was still running."""
    running = [t.name for t in table.tasks if not t.state.is_terminal()]
    names = ", ".join(running[:8]) + (f" and {len(running) - 8} more" if len(running) > 8 else "")
    return (
        f"the job ran past its maximum runtime of {duration_text(limit_s)} (max_runtime_s {limit_s}, "
        f"--max-runtime) and was stopped {elapsed_s:.0f} s after submission"
        + (f"; still running: {names}" if running else "")
    )


def save_status(body: str, user: str, app_id: str, readers: tuple[str, ...] = (), attempts: int = 4) -> None:
    """Keep the final status document (serialized) on HDFS, where `tfyarn status` finds it after the job.

    In the job's dir, kept to its owner and ``readers``. Written beside it and renamed into place,
    so a reader never sees it half written; tried again on failure (a DataNode lost moments ago can
    still be handed to a writer; hdfs-native then fails).
    """
    from tfyarn.storage import locate, parse_uri
    from tfyarn.storage.permissions import private_job_dir
    from tfyarn.storage.transfer import PART, replace_file

    job_dir = locate(parse_uri(protocol.job_dir(user, app_id)))
    loc = locate(parse_uri(f"{protocol.job_dir(user, app_id)}/{protocol.STATUS_FILE}"))
    for attempt in range(attempts):
        try:
            private_job_dir(job_dir, readers)
            with loc.fs.open_output_stream(loc.path + PART, compression=None) as f:
                f.write(body.encode())
            replace_file(loc.fs, loc.path + PART, loc.path)
            return
        except Exception as e:
            if attempt == attempts - 1:
                raise
            log.warning(f"saving the final status failed ({type(e).__name__}: {e}); trying again")
            time.sleep(2**attempt)


def page_server() -> StatusServer:
    """The status page's server, on loopback: reached only through skein's proxy (and so the RM's ACL),
    never directly on the node's address, whatever NM_HOST says."""
    return StatusServer(protocol.UI_BIND_HOST)


def main() -> int:
    started = time.time()
    saverequest.block()  # before any thread starts: a save signal must never end the AM
    logfmt.setup(logfmt.AM_LOGGER)
    app = skein.ApplicationClient.from_current()
    job: Job | None = None
    renewer: Renewer | None = None
    web = page_server()
    try:
        spec = JobSpec.from_dict(protocol.decode_env(os.environ[protocol.ENV_JOB]))
        job = Job(app.id, spec, TaskTable.for_job(spec), started)
        web.update(job.status("STARTING"))
        if job.attempt > 1:  # YARN stopped the last attempt's containers: the whole job runs again
            log.info(f"attempt {job.attempt}: re-running the whole job from a clean state")
        app.ui.add_page(protocol.UI_STATUS_ROUTE, web.url, link_name="tfyarn status")
        renewer = Renewer.from_env(app)
        if renewer:
            renewer.start()
        if spec.tensorboard:
            tb_uri = taskenv.tensorboard_uri(app.id)
            job.tensorboard = TensorBoard(app, web.host, tb_uri, "tensorboard-logs", spec.output_readers)
            job.tensorboard.start()
        status, diagnostics = run(app, job, web)
    except Exception as e:  # the job must end FAILED, never hang or claim success
        log.exception("the AM failed")
        status, diagnostics = "FAILED", f"tfyarn AM error: {type(e).__name__}: {e}"
    (log.info if status == "SUCCEEDED" else log.error)(f"job {status}: {diagnostics}")
    if job is not None:
        job.events.job_end(status, diagnostics)
        if job.tensorboard:
            job.tensorboard.stop()
        doc = job.status(status, diagnostics)
        body = doc.to_json()  # one serialization: the page's JSON, the key-value copy, the log line, HDFS
        web.update(doc, body)
        app.kv[protocol.KV_STATUS] = body.encode()
        # Kept in the AM's aggregated log, and on HDFS: `tfyarn status` reads them after the job ends.
        print(protocol.AM_STATUS_LINE + body, flush=True)
        try:
            save_status(body, job.user, app.id, job.spec.output_readers)
        except Exception as e:
            hint = ""
            if renewer is None and ("GSS" in str(e) or "expired" in str(e).lower()):
                hint = (
                    "; if the job outlived its HDFS delegation token (the NameNode's max token lifetime), "
                    "submit with --principal/--keytab: the AM then renews it"
                )
            log.error(f"could not save the final status to HDFS: {type(e).__name__}: {e}{hint}")
    if renewer:
        renewer.stop()
    if job is not None:
        job.events.close()  # job_end's hook, and any still queued, run before the AM goes
    app.shutdown(status, diagnostics)
    web.close()
    return 0 if status == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
