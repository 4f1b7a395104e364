"""Every name the client, the ApplicationMaster and the executor share.

Environment variables and key-value keys are defined once here; no other
module spells them out, so the two sides of the wire cannot drift apart.
The AM and executor import this module, never the client's runtime code.
"""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

# --- client-side environment -------------------------------------------------
ENV_CLUSTER_DIR = "TFYARN_CLUSTER_DIR"  # where `tfyarn cluster` keeps a local cluster
ENV_DEFAULTS = "TFYARN_DEFAULTS"  # the per-user defaults file (tfyarn.cli.jobfile.defaults_path)
ENV_OWN_DRIVER = "TFYARN_OWN_DRIVER"  # set: never reuse a skein global driver (tfyarn.skeindriver)
HISTORY_PORT = 19890  # `tfyarn history serve`'s default; the local cluster's history page listens here
ENV_SKEIN_CONFIG = "SKEIN_CONFIG"  # skein's config dir (credentials, global driver); `cluster env` sets it
ENV_SKEIN_DRIVER_JAVA_OPTIONS = "SKEIN_DRIVER_JAVA_OPTIONS"  # skein's: extra JVM flags for its driver
ENV_PREFIX = "TFYARN"  # click's auto_envvar_prefix: TFYARN_<COMMAND>_<OPTION> sets a flag's default
ENV_JAR_CACHE = "TFYARN_JAR_CACHE"  # where the Hadoop jars are cached
ENV_HADOOP_CONF_DIR = "HADOOP_CONF_DIR"  # the Hadoop client config the client reads (YARN sets it on containers too)
ENV_YARN_CONF_DIR = "YARN_CONF_DIR"  # where Hadoop's scripts look for the client config next
ENV_HADOOP_HOME = "HADOOP_HOME"  # a Hadoop install: its etc/hadoop is the config, its bin/ has `yarn`
ENV_PRINCIPAL = "TFYARN_PRINCIPAL"  # Kerberos principal handed to skein (tfyarn --principal)
ENV_KEYTAB = "TFYARN_KEYTAB"  # its keytab (tfyarn --keytab)
ENV_KRB5_CONFIG = "KRB5_CONFIG"  # MIT Kerberos' config file; tfyarn hands it to its JVMs as java.security.krb5.conf
ENV_CA_FILE = "TFYARN_CA_FILE"  # a PEM CA that tfyarn's HTTPS calls trust besides the system's
ENV_KRB5_CLIENT_KTNAME = "KRB5_CLIENT_KTNAME"  # MIT: the keytab GSS-API gets initial tickets from on demand
ENV_KRB5CCNAME = "KRB5CCNAME"  # the Kerberos ticket cache (kinit's), e.g. FILE:/tmp/krb5cc_1000

# --- set by skein on every container -------------------------------------------
ENV_SKEIN_CONTAINER_ID = "SKEIN_CONTAINER_ID"  # "<service>_<instance>", e.g. "worker_0"
ENV_SKEIN_APP_ID = "SKEIN_APPLICATION_ID"
ENV_SKEIN_VCORES = "SKEIN_RESOURCE_VCORES"  # the container's vcores

# --- set by YARN on every container (its NodeManager's launch script) -----------
ENV_YARN_CONTAINER_ID = "CONTAINER_ID"  # container_[e<epoch>_]<ts>_<app>_<attempt>_<n>
ENV_NM_HOST = "NM_HOST"  # the node the container runs on
ENV_NM_PORT = "NM_PORT"  # its NodeManager's RPC port
ENV_NM_HTTP_PORT = "NM_HTTP_PORT"  # its NodeManager's web port (the GPU answer: tfyarn.nodegpus)
ENV_LOCAL_DIRS = "LOCAL_DIRS"  # the application's local dirs on the node, comma-separated
ENV_LOG_DIRS = "LOG_DIRS"  # the container's log dirs, comma-separated (what `tfyarn logs` shows)
ENV_LOCAL_USER_DIRS = "LOCAL_USER_DIRS"  # the user's local dirs on the node, comma-separated
ENV_USER = "USER"  # the user the container runs as (the job's owner)
ENV_HADOOP_USER_NAME = "HADOOP_USER_NAME"  # not YARN's but Hadoop's simple-auth user: read where USER is unset
ENV_HADOOP_TOKEN_FILE = "HADOOP_TOKEN_FILE_LOCATION"  # the container's delegation tokens
ENV_JVM_PID = "JVM_PID"  # the launch script's pid
ENV_APP_WEB_PROXY_BASE = "APPLICATION_WEB_PROXY_BASE"  # the AM's path behind the RM's web proxy
# The names YARN sets that a job's --env may not (tfyarn.fields): YARN would override them, or they
# would mislead the container about itself.
YARN_CONTAINER_ENV = (
    ENV_YARN_CONTAINER_ID,
    ENV_NM_HOST,
    ENV_NM_PORT,
    ENV_NM_HTTP_PORT,
    ENV_LOCAL_DIRS,
    ENV_LOG_DIRS,
    ENV_LOCAL_USER_DIRS,
    ENV_HADOOP_TOKEN_FILE,
    ENV_JVM_PID,
    ENV_APP_WEB_PROXY_BASE,
)

# --- set by the plan on the ApplicationMaster container ----------------------
ENV_JOB = "TFYARN_JOB"  # the job spec, encode_env()d (task containers get it too: see tfyarn.taskenv)
ENV_SUBMIT_TIME = "TFYARN_SUBMIT_TIME"  # epoch seconds when the client submitted (the timeline's origin)
ENV_RM_WEB = "TFYARN_RM_WEB"  # the ResourceManager's web address: the AM asks it what the cluster has free
ENV_NODE_HOSTS = "TFYARN_NODE_HOSTS"  # the AM's: the job's allowed nodes, one <role>@<host> service each
# Submitted with --principal/--keytab on a Kerberized cluster: the AM renews the job's HDFS
# delegation token with that keytab, localized into its container only (appmaster.renewal).
ENV_RENEW_PRINCIPAL = "TFYARN_RENEW_PRINCIPAL"
ENV_RENEW_WEBHDFS = "TFYARN_RENEW_WEBHDFS"  # the default filesystem's NameNode web addresses, comma-separated
RENEW_KEYTAB_FILE = "tfyarn-renewal.keytab"  # the keytab's name in the AM's working dir

# --- set by the AM on each task container it asks for (tfyarn.taskenv) ---------
# The gang's first containers, which YARN starts from the application spec, derive them.
ENV_ROLE = "TFYARN_ROLE"  # e.g. "worker"
ENV_TASK_INDEX = "TFYARN_TASK_INDEX"  # 0-based index within the role
ENV_NUM_TASKS = "TFYARN_NUM_TASKS"  # instances of this role
ENV_COMMAND = "TFYARN_COMMAND"  # the user's argv, encode_env()d
ENV_APP_ID = "TFYARN_APP_ID"
ENV_FRAMEWORK = "TFYARN_FRAMEWORK"
ENV_NPROC_PER_NODE = "TFYARN_NPROC_PER_NODE"  # pytorch: processes in this container
ENV_STAGING = "TFYARN_STAGING"  # this task's inputs, shard and outputs, encode_env()d
ENV_TENSORBOARD_URI = "TFYARN_TENSORBOARD_URI"  # --tensorboard: where this task's summaries are mirrored
ENV_PREVIOUS_ADDRESS = "TFYARN_PREVIOUS_ADDRESS"  # a restarted task's old host:port, reused where it can
# elastic pytorch workers: "MIN:MAX:RESTARTS", torchrun's --nnodes MIN:MAX and --max-restarts
ENV_ELASTIC = "TFYARN_ELASTIC"
ENV_PROGRESS_TIMEOUT = "TFYARN_PROGRESS_TIMEOUT"  # seconds: the hang watchdog's limit (appmaster.executor.watchdog)
# The job's --env settings, encode_env()d: set by the executor on the user process, never written
# into YARN's launch script (which quotes nothing: a value such as $(cmd) would run there).
ENV_USER_ENV = "TFYARN_USER_ENV"
# A task of a role with a Docker image: how it runs there (tfyarn.docker): "executor", the executor
# runs the command with `docker run`; "yarn", YARN started this whole container in the image.
ENV_DOCKER_RUNTIME = "TFYARN_DOCKER_RUNTIME"

# --- set by the AM on its --on-event command (appmaster.am.events), with ENV_APP_ID ---
ENV_EVENT = "TFYARN_EVENT"  # the event's JSON, also on the command's stdin (not ENV_EVENTS, the executor's file)

# --- set by the executor on the user process ----------------------------------
ENV_PYTHONPATH = "PYTHONPATH"  # the executor puts appmaster/executor/stdio first: line-buffered stdio
ENV_OMP_THREADS = "OMP_NUM_THREADS"  # vcores / processes per container, unless the user set it
ENV_INPUT = "TFYARN_INPUT"  # absolute local dir of the first --input
ENV_INPUTS = "TFYARN_INPUTS"  # every input's local dir, os.pathsep-separated
ENV_EVENTS = "TFYARN_EVENTS"  # a file the user's script reports milestones to (tfyarn.report)
ENV_TENSORBOARD_DIR = "TFYARN_TENSORBOARD_DIR"  # --tensorboard: write summaries here; tfyarn mirrors them
ENV_GPUS = "TFYARN_GPUS"  # the physical GPU indices of this container, comma-separated ("" for none)
# The frameworks' own variables (TF_CONFIG, torchrun's MASTER_ADDR, RANK, ...) are
# built in one place, tfyarn.frameworks, under the names the frameworks define.


def encode_env(value: object) -> str:
    """JSON, base64-encoded: YARN writes env values into a shell script unescaped."""
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode()


def decode_env(text: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(text.encode()))


# --- names of localized resources in every container --------------------------
PYENV_DIR = "pyenv"  # a shipped Python environment (--python-env packed|ARCHIVE)
CODE_DIR = "tfyarn-code"  # a shipped --code dir; the executor links its entries into the task's dir

# --- key-value store (skein's, on the AM) -------------------------------------
KV_PREFIX = "tfyarn/"
KV_EXIT_PREFIX = f"{KV_PREFIX}exit/"  # + task name: the executor's exit record
KV_ADDR_PREFIX = f"{KV_PREFIX}addr/"  # + task name: "host:port" a task reserved
KV_CLUSTER = f"{KV_PREFIX}cluster"  # the AM's cluster view once every task registered (gang)
KV_STATUS = f"{KV_PREFIX}status"  # the AM's job status (JSON), rewritten on every change
KV_SAVE = f"{KV_PREFIX}save"  # `tfyarn save` puts here: output tasks publish a snapshot now
KV_SNAPSHOT_PREFIX = f"{KV_PREFIX}snapshot/"  # + task name: the last snapshot published (JSON)
# `tfyarn save` by a user other than the owner (its --modify-acl): YARN signals the AM's container
# (RM REST POST /ws/v1/cluster/containers/<id>/signal/<command>, allowed to the owner and the modify
# ACL), and the AM, which keeps this signal (SIGQUIT) blocked, puts KV_SAVE for them.
SAVE_SIGNAL = "OUTPUT_THREAD_DUMP"
KV_GPUS_PREFIX = f"{KV_PREFIX}gpus/"  # + task name: the GPU indices the AM bound it to (JSON list)
KV_EVENTS_PREFIX = f"{KV_PREFIX}events/"  # + task name: {stage: epoch seconds} of its startup timeline
KV_TELEMETRY_PREFIX = f"{KV_PREFIX}telemetry/"  # + task name: its GPUs' utilisation and memory (JSON)
KV_PROGRESS_PREFIX = f"{KV_PREFIX}progress/"  # + task name: its script's last heartbeat and metrics (JSON)
KV_MEMBERSHIP_PREFIX = f"{KV_PREFIX}membership/"  # + task name: an elastic task's last rendezvous round (JSON)
# In an elastic job's cluster view (KV_CLUSTER), under this pseudo-role: the c10d rendezvous store's
# "host:port", hosted by the AM (appmaster.am.rendezvous). Role names start with a letter: no clash.
VIEW_RENDEZVOUS = "_rendezvous"
# Not under KV_PREFIX, so no scan of the job's records reads it: the AM's renewed delegation tokens,
# a whole credentials file (appmaster.renewal). Secret: never shown, logged or saved.
KV_TOKENS = "tfyarn-secret/hdfs-tokens"
# `tfyarn exec` (tfyarn/execclient.py <-> appmaster/executor/execagent.py). A session's streams are
# not under KV_PREFIX either, so the AM's scan of the job's records never reads its bytes; only its
# small record (KV_EXEC_RECORD_PREFIX + session) is, for the job's events. Keys under kv_exec_in:
# SESSION/request (an ExecRequest), SESSION/in/SEQ (stdin bytes), SESSION/eof, SESSION/resize
# ("ROWS COLS"), SESSION/signal (a number). Under kv_exec_out(SESSION): accepted, refused (the
# reason), oSEQ / eSEQ (stdout / stderr bytes; a terminal's all come as o), exit (an ExecExit).
KV_EXEC_PREFIX = "tfyarn-exec/"
KV_EXEC_RECORD_PREFIX = f"{KV_PREFIX}exec/"
EXEC_ANSWER_S = 30  # the client's wait for the task's agent to accept or refuse a session
AM_STATUS_LINE = "tfyarn-final-status: "  # prefix of the AM log line holding the final status JSON
AM_LOG_FILE = "application.driver.log"  # where skein puts the AM script's output


def task_name(role: str, index: int) -> str:
    """The one spelling of a task: ``worker:0``."""
    return f"{role}:{index}"


def kv_task_exit(role: str, index: int) -> str:
    """Key under which a task's executor stores its exit record (JSON)."""
    return f"{KV_EXIT_PREFIX}{task_name(role, index)}"


def kv_task_addr(role: str, index: int) -> str:
    """Key under which a task's executor registers the address it reserved."""
    return f"{KV_ADDR_PREFIX}{task_name(role, index)}"


def parse_task_name(name: str) -> tuple[str, int]:
    """``worker:1`` -> ("worker", 1); ValueError if malformed."""
    role, sep, index = name.partition(":")
    if not sep or not role or not index.isdigit():
        raise ValueError(f"{name!r} is not ROLE:INDEX (e.g. worker:1)")
    return role, int(index)


def kv_exec_in(task: str) -> str:
    """The prefix a task's exec agent watches: requests and input for its sessions."""
    return f"{KV_EXEC_PREFIX}in/{task}/"


def kv_exec_out(session: str) -> str:
    """The prefix an exec session's answers and output go under; the client watches it."""
    return f"{KV_EXEC_PREFIX}out/{session}/"


def kv_task_snapshot(role: str, index: int) -> str:
    return f"{KV_SNAPSHOT_PREFIX}{task_name(role, index)}"


def snapshot_uri(dest: str, name: str) -> str:
    """Where a mid-run snapshot of an output goes: beside the final destination (name: snapshot_name)."""
    return f"{snapshots_uri(dest)}/{name}"


def snapshots_uri(dest: str) -> str:
    """The dir holding every snapshot of the output published to ``dest``."""
    return f"{dest.rstrip('/')}.snapshots"


SAVE_EVENT_SEP = " published a snapshot: "  # a `save` event of one task: "<task><SEP><uri> <uri>..."


def save_event_message(task: str, uris: tuple[str, ...] | list[str]) -> str:
    return f"{task}{SAVE_EVENT_SEP}{' '.join(uris)}"


def save_event_uris(message: str) -> list[str]:
    """The URIs a save_event_message names; [] for any other message."""
    _task, sep, rest = message.partition(SAVE_EVENT_SEP)
    return rest.split() if sep else []


SNAPSHOT_STAMP = "%Y%m%dT%H%M%SZ"  # UTC, so names sort by time
_SNAPSHOT_NAME_RE = re.compile(r"([0-9]{8}T[0-9]{6}Z)-(application_[0-9]+_[0-9]+)")


def snapshot_name(app_id: str, when: float) -> str:
    """A snapshot's dir name: ``<UTC stamp>-<app id>``, e.g. 20261203T194501Z-application_1733250000000_0003."""
    return f"{time.strftime(SNAPSHOT_STAMP, time.gmtime(when))}-{app_id}"


def parse_snapshot_name(name: str) -> tuple[str, str] | None:
    """(UTC stamp, app id) of a snapshot_name; None for anything else (an upload in progress, a stray dir)."""
    m = _SNAPSHOT_NAME_RE.fullmatch(name)
    return (m.group(1), m.group(2)) if m else None


def kv_task_gpus(role: str, index: int) -> str:
    return f"{KV_GPUS_PREFIX}{task_name(role, index)}"


def kv_task_events(role: str, index: int) -> str:
    return f"{KV_EVENTS_PREFIX}{task_name(role, index)}"


def kv_task_telemetry(role: str, index: int) -> str:
    return f"{KV_TELEMETRY_PREFIX}{task_name(role, index)}"


def kv_task_progress(role: str, index: int) -> str:
    return f"{KV_PROGRESS_PREFIX}{task_name(role, index)}"


# --- the AM's web pages (skein's UI proxies them under <tracking URL>pages/<route>/) ---
# They listen on loopback only: skein's Java AM, in the same container, proxies them, and nobody on
# the network can reach them around the ResourceManager's proxy and the job's view ACL.
UI_BIND_HOST = "127.0.0.1"
UI_STATUS_ROUTE = "tfyarn"  # the status page; its JSON at UI_STATUS_ROUTE/API_STATUS
UI_TENSORBOARD_ROUTE = "tensorboard"
API_STATUS = "api/status"
API_METRICS = "metrics"  # Prometheus text, at UI_STATUS_ROUTE/API_METRICS


def status_page_url(tracking_url: str) -> str:
    return f"{tracking_url.rstrip('/')}/pages/{UI_STATUS_ROUTE}/"


# --- a job's files on HDFS ------------------------------------------------------
def job_dir(user: str, app_id: str) -> str:
    """Where a job keeps its final status and TensorBoard summaries."""
    return f"hdfs:///user/{user}/.tfyarn/jobs/{app_id}"


STATUS_FILE = "status.json"  # the final status document, in job_dir
TENSORBOARD_SUBDIR = "tensorboard"  # in job_dir: one sub-dir per task


# Startup timeline stages, in order. The AM stamps the first three and
# "rendezvous"; executors the per-task ones; the user's script "first_step".
STAGES = (
    "submitted",
    "am_started",
    "allocated",
    "localized",
    "inputs_staged",
    "registered",
    "rendezvous",
    "process_started",
    "first_step",
)
STAGE_RESTORED = "restored"  # only a restarted output task that got its latest snapshot (--resume)


def kv_task_membership(role: str, index: int) -> str:
    return f"{KV_MEMBERSHIP_PREFIX}{task_name(role, index)}"


def kv_task_keys(role: str, index: int) -> tuple[str, ...]:
    """Every key one incarnation of a task writes or reads; cleared before it restarts."""
    return (
        kv_task_addr(role, index),
        kv_task_exit(role, index),
        kv_task_events(role, index),
        kv_task_gpus(role, index),
        kv_task_telemetry(role, index),
        kv_task_progress(role, index),
        kv_task_membership(role, index),
        kv_task_snapshot(role, index),
    )


# Records the executor writes (registration, exit, events, telemetry) carry the YARN
# container id under this field: the AM ignores those of a container it has replaced.
RECORD_CONTAINER = "container"


# Executor exit codes that are not the user command's own.
EXIT_STAGING_FAILED = 121  # inputs could not be staged: the user command never started
EXIT_OUTPUT_FAILED = 122  # the command succeeded but its outputs could not be published
EXIT_NO_PROGRESS = 123  # the hang watchdog stopped the command: no progress for progress_timeout_s
EXIT_COMMAND_NOT_FOUND = 127  # as a shell reports it
STDERR_TAIL_LINES = 20  # lines of a failed task's stderr carried into diagnostics
