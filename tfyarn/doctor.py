"""Would a submit work against this Hadoop cluster? ``tfyarn doctor``'s checks, as data.

A failed submit names only its first problem, often in Java's words. These
checks go through what a submit needs, in that order: each is OK, WARN (works,
with a limit worth knowing), FAIL (a submit would fail, and the fix) or SKIP
(why it could not run, or "needs <check>" that did not pass). A crashed check
is a FAIL: nothing passes silently. All that leaves the process (commands,
sockets, HTTP, HDFS) goes through a ``Probe``: tests pass fakes.
"""

from __future__ import annotations

import getpass
import json
import shutil
import subprocess
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

from tfyarn import credentials, docker, hadoop_env, hadoopconf, protocol
from tfyarn.admission import SchedulerLimits, Unreadable, check_queue, parse_conf, parse_queues
from tfyarn.envchoice import EnvChoice
from tfyarn.errors import SpecError
from tfyarn.nodegpus import GPU
from tfyarn.rest import FetchError
from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import spec_default

YARN_TIMEOUT_S = 60.0  # `yarn classpath --glob` starts a JVM; a hung one must not hang the doctor
KLIST_TIMEOUT_S = 10.0
NAMENODE_PORT = 8020  # HDFS's default RPC port, for an fs.defaultFS without one
DFS_FILES = ("core-site.xml", "hdfs-site.xml")  # what an HdfsConfiguration loads, in its order
SCHEDULER_PATH = "/ws/v1/cluster/scheduler"
RUNTIMES_KEY = "yarn.nodemanager.runtime.linux.allowed-runtimes"


class Outcome(StrEnum):
    OK = "OK"
    WARN = "WARN"  # a submit works, with a limit the user should know of
    FAIL = "FAIL"  # a submit would fail
    SKIP = "SKIP"  # the check could not run, or one it needs did not pass


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict: what ``--json`` prints of it."""

    name: str
    outcome: Outcome
    detail: str  # what was found, or why the check did not run
    fix: str = ""  # for FAIL and WARN: what to do

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "outcome": self.outcome.value, "detail": self.detail, "fix": self.fix}


@dataclass(frozen=True)
class Probe:
    """Everything the checks touch besides the config files; each call may raise as noted."""

    environ: Mapping[str, str]
    local_conf_dir: Path  # the local cluster's (`tfyarn cluster up`), whether or not it exists
    local_bin_dir: Path  # its `yarn`, which tfyarn falls back to as hadoop_env.discover does
    python_env: Callable[[Path | None], EnvChoice]  # what python_env auto is for a cluster (envchoice.choose)
    run: Callable[[Sequence[str], Mapping[str, str], float], Ran]  # (argv, env, timeout): OSError, TimeoutExpired
    connect: Callable[[str, int], None]  # open and close a TCP connection: OSError if it cannot
    get: Callable[[str], bytes]  # a REST answer (tfyarn.rest.get): FetchError
    info: hadoopconf.Fetch  # an RM's cluster info, redirects not followed (hadoopconf.http_fetch)
    nodes: Callable[[str], list[NodeCapacity]]  # RUNNING nodes of the RM at a web URL: FetchError, Unreadable
    hdfs_probe: Callable[[Path, str], None]  # with that conf dir, create then delete the dir at a URI


Ran = tuple[int, str]  # a finished command's exit status and output (stdout, then stderr)


class Verdict(NamedTuple):
    outcome: Outcome
    detail: str
    fix: str = ""


@dataclass
class Found:
    """What earlier checks found, for later ones."""

    queue: str  # the queue a submit would use
    conf_dir: Path | None = None
    source: str = ""  # what named conf_dir (hadoopconf.find_conf_dir)
    yarn: hadoopconf.Conf | None = None  # core-site + yarn-site
    dfs: hadoopconf.Conf | None = None  # core-site + hdfs-site
    rm_web: str = ""  # the (active) ResourceManager's web URL
    kerberized: bool = False  # hadoop.security.authentication is kerberos


def yarn_path(environ: Mapping[str, str], local_bin: Path) -> tuple[str, Path | None] | None:
    """The PATH skein would get (hadoop_env.discover's rule) and the dir tfyarn added to it, if any.

    PATH as it is if it has ``yarn``, else with ``$HADOOP_HOME/bin``, else the local cluster's
    bin dir, in front; None when none has a ``yarn``.
    """
    path = environ.get("PATH", "")
    home = environ.get(protocol.ENV_HADOOP_HOME)
    added = None
    for bin_dir in ([Path(home) / "bin"] if home else []) + [local_bin]:
        if not shutil.which("yarn", path=path) and (bin_dir / "yarn").exists():
            path, added = f"{bin_dir}:{path}", bin_dir
    return (path, added) if shutil.which("yarn", path=path) else None


def _split(message: str) -> tuple[str, str]:
    """A tfyarn error line, "what is wrong; what to do", as (detail, fix)."""
    what, sep, fix = message.rpartition("; ")
    return (what, fix) if sep else (message, "")


def _why(e: BaseException) -> str:
    return str(getattr(e, "strerror", None) or e) or type(e).__name__


def _is_local(found: Found, probe: Probe) -> bool:
    """Whether the config in use is the local cluster's (its nodes share this machine)."""
    return found.conf_dir is not None and found.conf_dir.resolve() == probe.local_conf_dir.resolve()


_ok, _warn, _fail, _skip = (partial(Verdict, o) for o in (Outcome.OK, Outcome.WARN, Outcome.FAIL, Outcome.SKIP))


def _unreachable(probe: Probe, addresses: Mapping[str, str]) -> dict[str, str]:
    """Of ``{label: host:port}``, each that takes no TCP connection, with why."""
    down = {}
    for label, addr in addresses.items():
        host, _, port = addr.rpartition(":")
        try:
            if not (host and port.isdigit()):
                raise ValueError(f"{addr or 'no address'} is not host:port")
            probe.connect(host, int(port))
        except ValueError as e:
            down[label] = str(e)
        except OSError as e:
            down[label] = f"unreachable ({_why(e)})"
    return down


# --- the checks, in the order a submit needs them ----------------------------------


def check_config(probe: Probe, found: Found) -> Verdict:
    """1. A Hadoop client config dir is found (as Hadoop's scripts look) and every file of it parses."""
    hit = hadoopconf.find_conf_dir(probe.environ, probe.local_conf_dir)
    var, yarn_var = protocol.ENV_HADOOP_CONF_DIR, protocol.ENV_YARN_CONF_DIR
    if hit is None:
        return _fail(
            f"no Hadoop client configuration: {var}, {yarn_var} and {protocol.ENV_HADOOP_HOME} are unset, "
            "and no local cluster is set up",
            f"export {var}=<the dir with your cluster's core-site.xml and yarn-site.xml, e.g. /etc/hadoop/conf>, "
            "or run `tfyarn cluster up` for a local cluster",
        )
    conf_dir, found.source = hit
    named = f"{found.source}={conf_dir}" if found.source in (var, yarn_var) else f"{conf_dir} ({found.source})"
    var = yarn_var if found.source == yarn_var else var  # the variable that changes the dir in use
    if not conf_dir.is_dir():
        return _fail(f"{named}: no such directory", f"export {var}=<an existing dir with your cluster's *-site.xml>")
    try:
        found.yarn = hadoopconf.load(conf_dir, hadoopconf.YARN_FILES, probe.environ)
        found.dfs = hadoopconf.load(conf_dir, DFS_FILES, probe.environ)
    except SpecError as e:
        what, fix = _split(str(e))
        return _fail(f"{named}: {what}", fix)
    found.conf_dir, found.kerberized = conf_dir, hadoop_env.kerberized(conf_dir)
    present = [f for f in hadoop_env.CONF_FILES if (conf_dir / f).exists()]
    absent = [f for f in hadoop_env.CONF_FILES if f not in present]
    if "yarn-site.xml" in absent:
        return _warn(
            f"{named} has no yarn-site.xml: YARN's defaults apply (a ResourceManager at 0.0.0.0:8032)",
            f"point {var} at the dir that holds your cluster's yarn-site.xml",
        )
    return _ok(f"{named}: {', '.join(present)} read" + (f" (no {', '.join(absent)})" if absent else ""))


def check_yarn(probe: Probe, found: Found) -> Verdict:
    """2. A `yarn` command is found, and `yarn classpath --glob` (how skein starts its driver) works."""
    hit = yarn_path(probe.environ, probe.local_bin_dir)
    home = protocol.ENV_HADOOP_HOME
    if hit is None:
        return _fail(
            f"no `yarn` on PATH, in ${home}/bin or in the local cluster's {probe.local_bin_dir} (skein runs "
            "`yarn classpath --glob` to start)",
            f"put your Hadoop client's bin dir first on PATH (export PATH=/path/to/hadoop/bin:$PATH), or set {home}",
        )
    path, added = hit
    yarn = shutil.which("yarn", path=path) or "yarn"
    env = {**probe.environ, "PATH": path}
    if found.conf_dir is not None:
        env[protocol.ENV_HADOOP_CONF_DIR] = str(found.conf_dir)
    cmd = f"`{yarn} classpath --glob`"
    fix = "put a working Hadoop client's `yarn` first on PATH, with JAVA_HOME set (skein needs it to start)"
    try:
        code, output = probe.run([yarn, "classpath", "--glob"], env, YARN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return _fail(f"{cmd} did not finish in {YARN_TIMEOUT_S:.0f} s", f"run it by hand to see why; {fix}")
    except OSError as e:
        return _fail(f"cannot run {yarn}: {_why(e)}", fix)
    if code != 0:
        return _fail(f"{cmd} exited {code}: {(output.strip().splitlines() or ['no output'])[-1]}", fix)
    return _ok(f"{yarn}" + (f" (not on PATH: tfyarn adds {added})" if added else "") + ": `classpath --glob` works")


def _ha_state(probe: Probe, rm: hadoopconf.ResourceManager) -> str:
    """An HA RM's own word on its state (ACTIVE, STANDBY), or why it gave none."""
    try:
        state = (json.loads(probe.info(rm.web + hadoopconf.CLUSTER_INFO)).get("clusterInfo") or {}).get("haState")
        return str(state).upper() if state else "unknown (its cluster info has no haState)"
    except (ValueError, AttributeError):
        return "unknown (its cluster info is not JSON)"
    except Exception as e:  # whatever the fetch raises, its text is the reason (hadoopconf.Fetch)
        return f"unknown (its web UI at {rm.web}: {_why(e)})"


def check_resourcemanager(probe: Probe, found: Found) -> Verdict:
    """3. The ResourceManager (each of an HA set) takes a connection; of an HA set, which is active."""
    assert found.yarn is not None
    try:
        rms = {str(rm): rm for rm in hadoopconf.resource_managers(found.yarn)}
    except SpecError as e:
        return _fail(*_split(str(e)))
    down = _unreachable(probe, {label: rm.address for label, rm in rms.items()})
    ha = len(rms) > 1
    states = {label: down.get(label) or (_ha_state(probe, rm) if ha else "reachable") for label, rm in rms.items()}
    listing = "; ".join(f"{label}{': ' if ha else ' is '}{state}" for label, state in states.items())
    key = "yarn.resourcemanager.address" + (".<id>" if ha else "")
    where = found.yarn.where("yarn.resourcemanager.ha.rm-ids" if ha else key)
    if len(down) == len(rms):
        start = "run `tfyarn cluster up`" if _is_local(found, probe) else "start the ResourceManager"
        what = f"no ResourceManager is reachable: {listing}" if ha else f"the ResourceManager at {listing}"
        return _fail(what, f"{start}, or set {key} in {where} to its host:port")
    up = [rm for label, rm in rms.items() if label not in down]
    active = next((rms[label] for label, state in states.items() if state in ("ACTIVE", "reachable")), None)
    found.rm_web = (active or up[0]).web
    if active is None and any(state.startswith("unknown") for state in states.values()):
        return _warn(
            f"{listing}: which is active is unknown (YARN's client fails over by itself)",
            f"see `yarn rmadmin -getAllServiceState`; tfyarn reads the REST API of {up[0]}",
        )
    if active is None:
        return _fail(
            f"no ResourceManager says it is active: {listing}",
            "make one active: see `yarn rmadmin -getAllServiceState`, the RMs' logs and ZooKeeper for failover",
        )
    said = f"{listing}: {active.id} is active" if ha else f"{listing} (web and REST: {active.web})"
    if down:
        return _warn(said, f"start the others (a failover needs them), or fix their {key} in {where}")
    return _ok(said)


def _namenodes(dfs: hadoopconf.Conf, host: str, port: int | None) -> dict[str, str]:
    """{label: host:port} of the NameNodes an fs.defaultFS authority means: an HA nameservice's, or itself."""
    services = [s.strip() for s in dfs.get("dfs.nameservices").split(",") if s.strip()]
    if port is not None or host not in services:
        return {f"{host}:{port or NAMENODE_PORT}": f"{host}:{port or NAMENODE_PORT}"}
    ids = [i.strip() for i in dfs.get(f"dfs.ha.namenodes.{host}").split(",") if i.strip()]
    return {i: dfs.get(f"dfs.namenode.rpc-address.{host}.{i}") for i in ids}


def check_namenode(probe: Probe, found: Found) -> Verdict:
    """4. fs.defaultFS is HDFS, and its NameNode (each of an HA nameservice) takes a connection."""
    assert found.dfs is not None
    value = found.dfs.get("fs.defaultFS", "file:///")
    fix = f"set fs.defaultFS in {found.dfs.where('fs.defaultFS')} to hdfs://<NameNode host>:<RPC port>"
    url = urlparse(value)
    if url.scheme != "hdfs":
        return _skip(f"fs.defaultFS is {value}, not hdfs://: no one NameNode to check")
    try:
        nns = _namenodes(found.dfs, url.hostname or "", url.port)
    except ValueError as e:
        return _fail(f"fs.defaultFS {value} has a bad port ({e})", fix)
    if not url.hostname or not nns:
        return _fail(f"fs.defaultFS {value} names no NameNode", fix)
    down = _unreachable(probe, nns)
    ha = any(label != addr for label, addr in nns.items())  # an HA nameservice: labels are NameNode ids
    states = {label: down.get(label, "reachable") for label in nns}
    listing = "; ".join(f"{n} at {nns[n]}: {st}" if ha else f"{n} is {st}" for n, st in states.items())
    listing += f" (fs.defaultFS {value})"
    start = "run `tfyarn cluster up`" if _is_local(found, probe) else "start the NameNode"
    if len(down) == len(nns):
        if ha:
            fix = f"fix dfs.namenode.rpc-address.{url.hostname}.<id> in {found.dfs.where('dfs.nameservices')}"
        return _fail(
            f"no NameNode is reachable: {listing}" if ha else f"the NameNode at {listing}", f"{start}, or {fix}"
        )
    if down:
        return _warn(listing, "start the others (a failover needs them), or fix their dfs.namenode.rpc-address")
    return _ok(listing)


def check_hdfs_home(probe: Probe, found: Found) -> Verdict:
    """5. The user's HDFS home takes files: tfyarn and skein stage every job under it."""
    assert found.conf_dir is not None
    if found.kerberized and not probe.environ.get(protocol.ENV_KEYTAB) and _no_ticket(probe):  # hdfs-native can SIGSEGV
        return _skip("cannot run: Kerberos is on, with no ticket or keytab to use (see kerberos)")
    simple = probe.environ.get(protocol.ENV_HADOOP_USER_NAME) or getpass.getuser()  # as simple auth names you
    user = credentials.user_name(found.conf_dir) if found.kerberized else simple  # Kerberos: the principal's
    uri = f"hdfs:///user/{user}/.tfyarn/doctor-{uuid.uuid4().hex[:12]}"
    try:
        probe.hdfs_probe(found.conf_dir, uri)
    except ImportError as e:
        return _skip(f"cannot run: tfyarn's HDFS client is not installed ({e})")
    except Exception as e:  # each HDFS client raises its own kinds; the text says what went wrong
        return _fail(
            f"cannot create and delete {uri} as {user}: {_why(e)}",
            f"have the HDFS superuser give you a home dir (`hdfs dfs -mkdir -p /user/{user} && hdfs dfs -chown "
            f"{user} /user/{user}`), or check that fs.defaultFS is the NameNode's RPC address"
            + ("; and hold a Kerberos ticket (see kerberos)" if found.kerberized else ""),
        )
    return _ok(f"created and deleted {uri} as {user}")


def _no_ticket(probe: Probe) -> str | None:
    """Why `klist -s` finds no valid ticket; None when it finds one."""
    try:
        code, _ = probe.run(["klist", "-s"], probe.environ, KLIST_TIMEOUT_S)
    except FileNotFoundError:
        return "there is no `klist` to find a ticket"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`klist -s` failed ({_why(e)})"
    return "there is no valid ticket (`klist -s` failed)" if code != 0 else None


def check_kerberos(probe: Probe, found: Found) -> Verdict:
    """6. On a Kerberized cluster, a valid ticket (klist -s) or a keytab to log in with."""
    if not found.kerberized:
        return _ok("simple auth (hadoop.security.authentication is not kerberos): no ticket needed")
    on = "Kerberos is on (hadoop.security.authentication=kerberos)"
    principal, keytab = protocol.ENV_PRINCIPAL, protocol.ENV_KEYTAB
    fix = f"run `kinit you@REALM`, or give a keytab: export {principal}=you@REALM {keytab}=/path/to/you.keytab"
    given = probe.environ.get(keytab)
    if given:
        if not Path(given).is_file():
            return _fail(f"{on}; {keytab}={given} is not a file", fix)
        if not probe.environ.get(principal):
            return _fail(f"{on}; {keytab} is set, {principal} is not", f"export {principal}=<the keytab's principal>")
        return _ok(f"keytab {given} for {probe.environ[principal]} ({keytab}): skein logs in with it")
    why = _no_ticket(probe)
    if why is not None:
        return _fail(f"{on}, no {keytab} is set and {why}", fix)
    return _ok("Kerberos: a valid ticket (klist -s)")


def check_gpus(probe: Probe, found: Found) -> Verdict:
    """7. The RM declares the GPU resource type; how many GPUs each RUNNING node offers."""
    url = found.rm_web
    try:
        nodes: list[NodeCapacity] | str = probe.nodes(url)
    except (FetchError, Unreadable) as e:
        nodes = f"cannot read its nodes from {url} ({e})"
    if nodes == []:
        return _fail(
            "the ResourceManager has no RUNNING NodeManager: no container can start",
            "start the NodeManagers; `tfyarn nodes` or `yarn node -list -all` shows why they are not RUNNING",
        )
    try:
        types = SchedulerLimits.from_conf(parse_conf(probe.get(f"{url}/conf"))).resource_types
    except (FetchError, Unreadable) as e:
        return _skip(f"cannot read the ResourceManager's configuration at {url}/conf ({e})")
    plugin = f"yarn.nodemanager.resource-plugins={GPU} on the GPU nodes"
    if GPU not in types:
        return _warn(
            f"no {GPU} resource type (yarn.resource-types: {','.join(sorted(types)) or 'unset'}): CPU jobs "
            "run, jobs asking for GPUs are refused",
            f"for GPU jobs, declare yarn.resource-types={GPU} in resource-types.xml of the ResourceManager "
            f"and NodeManagers, set {plugin}, and restart them",
        )
    if isinstance(nodes, str):
        return _skip(f"{GPU} is declared, but {nodes}")
    per_node = ", ".join(f"{n.host} {n.gpus}" for n in nodes)
    if not any(n.gpus for n in nodes):
        return _warn(f"{GPU} is declared, but no RUNNING node offers one ({per_node})", f"set {plugin}, restart them")
    return _ok(f"{GPU} declared; GPUs per RUNNING node: {per_node}")


def check_queues(probe: Probe, found: Found) -> Verdict:
    """8. The scheduler's leaf queues that take jobs, and whether the submit's queue is one of them."""
    url = f"{found.rm_web}{SCHEDULER_PATH}"
    try:
        queues = parse_queues(probe.get(url))
    except (FetchError, Unreadable) as e:
        return _skip(f"cannot read the scheduler's queues from {url} ({e})")
    if queues is None:
        return _ok(f"not the capacity scheduler: it places queue {found.queue!r} itself (unchecked)")
    taking = sorted(q.path.rsplit(".", 1)[-1] for q in queues if q.leaf and q.state == "RUNNING")
    listing = f"leaf queues that take jobs: {', '.join(taking) or 'none'}"
    if not taking:
        return _fail(listing, "ask the cluster's admin to start a leaf queue you may submit to")
    try:
        check_queue(found.queue, queues)
    except SpecError as e:
        return _fail(
            f"{listing}; {_split(str(e))[0].removeprefix('queue: ')}",
            f"submit with --queue {taking[0]} (or queue: in the job file); `tfyarn doctor --queue NAME` checks it",
        )
    return _ok(f"{listing}; queue {found.queue!r} takes jobs")


def check_python_env(probe: Probe, found: Found) -> Verdict:
    """9. The Python a default submit's containers get, and whether every node has it (tfyarn.envchoice)."""
    default = str(spec_default("python_env"))
    if default != "auto":
        return _ok(f"python_env {default} (the default)")
    choice = probe.python_env(found.conf_dir)
    if choice.warning:
        return _warn(
            choice.line(),
            "run tfyarn from a virtualenv or conda env without editable installs (it is then shipped), "
            "pass --python-env ENV.tar.gz (venv-pack/conda-pack), or install this environment at the "
            "same path on every node and pass --python-env local",
        )
    return _ok(choice.line())


def check_docker(probe: Probe, found: Found) -> Verdict:
    """10. Which Docker runtime --docker-image gets here (tfyarn.docker): YARN's, if the config allows it."""
    assert found.yarn is not None
    runtimes = ", ".join(r.strip() for r in found.yarn.get(RUNTIMES_KEY).split(",") if r.strip()) or "unset"
    if docker.yarn_runtime_allowed(found.yarn.props):
        return _ok(f"--docker-image runs with YARN's Docker runtime ({RUNTIMES_KEY}: {runtimes})")
    why = f"YARN's needs the LinuxContainerExecutor and docker in {RUNTIMES_KEY} ({runtimes})"
    return _skip(f"--docker-image runs with the executor runtime (`docker run`: Docker on each node); {why}")


Check = Callable[[Probe, Found], Verdict]
# (name, check, the checks it needs): in the order a submit needs them, and run in this order.
CHECKS: tuple[tuple[str, Check, tuple[str, ...]], ...] = (
    ("config", check_config, ()),
    ("yarn", check_yarn, ()),
    ("resourcemanager", check_resourcemanager, ("config",)),
    ("namenode", check_namenode, ("config",)),
    ("hdfs-home", check_hdfs_home, ("namenode",)),
    ("kerberos", check_kerberos, ("config",)),
    ("gpus", check_gpus, ("resourcemanager",)),
    ("queues", check_queues, ("resourcemanager",)),
    ("python-env", check_python_env, ("config",)),
    ("docker", check_docker, ("config",)),
)
NAMES = tuple(name for name, _, _ in CHECKS)
NAME_WIDTH = max(map(len, NAMES))


def run_checks(
    probe: Probe, queue: str = "", on_result: Callable[[CheckResult], None] | None = None
) -> list[CheckResult]:
    """Every check in order; one whose precondition did not pass is SKIP "needs <it>".

    ``queue``: the one a submit would use (default: the job spec's). ``on_result`` sees each
    result as it comes, so a terminal shows progress.
    """
    found = Found(queue=queue or str(spec_default("queue")))
    results: list[CheckResult] = []
    passed: set[str] = set()
    for name, check, needs in CHECKS:
        blocked = next((n for n in needs if n not in passed), None)
        if blocked is not None:
            verdict = _skip(f"needs {blocked}")
        else:
            try:
                verdict = check(probe, found)
            except Exception as e:  # a crashed check must not pass silently
                verdict = _fail(f"the check itself failed: {type(e).__name__}: {e}", "report it as a tfyarn bug")
        if verdict.outcome in (Outcome.OK, Outcome.WARN):
            passed.add(name)
        result = CheckResult(name, *verdict)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def render_line(result: CheckResult) -> str:
    """One check as one line: outcome, name, detail and, for FAIL and WARN, the fix."""
    line = f"{result.outcome.value:<4}  {result.name:<{NAME_WIDTH}}  {result.detail}"
    if result.fix and result.outcome in (Outcome.FAIL, Outcome.WARN):
        line += f"; fix: {result.fix}"
    return line


def render(results: Sequence[CheckResult]) -> list[str]:
    return [render_line(r) for r in results]


def to_json(results: Sequence[CheckResult]) -> str:
    return json.dumps([r.to_dict() for r in results], indent=2)


def exit_code(results: Sequence[CheckResult]) -> int:
    """0 when a submit would work (no FAIL; WARN and SKIP do not stop one), else 1."""
    return 1 if any(r.outcome == Outcome.FAIL for r in results) else 0
