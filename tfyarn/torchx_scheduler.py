"""torchx's ``yarn`` scheduler: ``torchx run -s yarn dist.ddp -j 2x1 --script train.py`` runs through tfyarn.

Registered under the ``torchx.schedulers`` entry point, so torchx finds it
once tfyarn is installed. An AppDef of one role becomes a tfyarn job of one
worker per replica: a ``torchrun`` command gets the ``pytorch`` framework, so
``MASTER_ADDR`` (torchx's ``rank0_env``) names replica 0's host; anything
else runs as framework ``none``. torchx's ``app_id`` and ``replica_id``
macros become the task's ``$TFYARN_APP_ID`` and ``$TFYARN_TASK_INDEX``
(known only in the container, so the command goes through ``bash -c``).
A script named by a relative path is shipped with the current dir as
``--code``, as torchx ships its workspace. Everything else is tfyarn's own:
admission, python_env auto, status, logs, kill.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler, Stream, filter_regex
from torchx.specs import AppDef, AppDryRunInfo, AppState, CfgVal, Role, macros, runopts

from tfyarn import protocol, scripts
from tfyarn.errors import TfyarnError
from tfyarn.spec import JobSpec
from tfyarn.status import JobState

BACKEND = "yarn"
RANK0_ENV = "MASTER_ADDR"  # set on every task of a pytorch job to replica 0's host
_APP_ID = "\0tfyarn-app-id\0"  # stand-ins for what only the container knows
_REPLICA = "\0tfyarn-replica\0"
_IN_CONTAINER = {_APP_ID: protocol.ENV_APP_ID, _REPLICA: protocol.ENV_TASK_INDEX}
_STATES = {
    JobState.SUBMITTED: AppState.SUBMITTED,
    JobState.ACCEPTED: AppState.PENDING,
    JobState.RUNNING: AppState.RUNNING,
    JobState.SUCCEEDED: AppState.SUCCEEDED,
    JobState.FAILED: AppState.FAILED,
    JobState.KILLED: AppState.CANCELLED,
}
Cfg = Mapping[str, CfgVal]
Listing = list[ListAppResponse]  # named here: inside the class, `list` is the method


def _word(text: str) -> str:
    """One argv word as shell text: quoted, its stand-ins as (double-quoted) variables."""
    out, rest = [], text
    while rest:
        at = [(rest.find(m), m) for m in _IN_CONTAINER if m in rest]
        if not at:
            out.append(shlex.quote(rest))
            break
        i, mark = min(at)
        if i:
            out.append(shlex.quote(rest[:i]))
        out.append(f'"${{{_IN_CONTAINER[mark]}}}"')
        rest = rest[i + len(mark) :]
    return "".join(out) or "''"


def _in_script(script: str) -> str:
    """A shell script's stand-ins as variables, each written for the quoting it sits in."""
    out, state, i = [], "", 0  # state: "" outside quotes, "'" or '"' inside them
    while i < len(script):
        mark = next((m for m in _IN_CONTAINER if script.startswith(m, i)), None)
        if mark is not None:
            var = f"${{{_IN_CONTAINER[mark]}}}"
            out.append({"": f'"{var}"', "'": f"'\"{var}\"'", '"': var}[state])
            i += len(mark)
            continue
        c = script[i]
        if c == "\\" and state != "'" and i + 1 < len(script):
            out.append(script[i : i + 2])
            i += 2
            continue
        if c in "'\"" and state in ("", c):
            state = "" if state else c
        out.append(c)
        i += 1
    return "".join(out)


def command_of(argv: list[str], exports: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The task's command: as given, or through ``bash -c`` where a macro needs the container's value.

    ``exports``: variables whose values hold a macro, set by that shell before the command runs.
    """
    exports = exports or {}
    if not exports and not any(m in a for a in argv for m in _IN_CONTAINER):
        return tuple(argv)
    prefix = "".join(f"export {name}={_word(value)}; " for name, value in exports.items())
    if len(argv) >= 3 and os.path.basename(argv[0]) in ("bash", "sh") and argv[1] == "-c":
        return (argv[0], "-c", prefix + _in_script(argv[2]), *argv[3:])
    return ("bash", "-c", prefix + "exec " + " ".join(_word(a) for a in argv))


def _words(command: tuple[str, ...]) -> tuple[str, ...]:
    """The words a command runs, a ``bash -c`` script's included (where torchx puts dist.ddp's script)."""
    if len(command) >= 3 and os.path.basename(command[0]) in ("bash", "sh") and command[1] == "-c":
        try:
            return (*command[:2], *shlex.split(command[2]), *command[3:])
        except ValueError:
            return command
    return command


def to_spec(app: AppDef, cfg: Cfg, cwd: str | None = None) -> JobSpec:
    """The tfyarn job for a one-role AppDef; ValueError names what the yarn scheduler does not take."""
    if len(app.roles) != 1:
        raise ValueError(
            f"the yarn scheduler runs apps of one role (dist.ddp, utils.python ...); {app.name!r} has "
            f"{len(app.roles)}: {', '.join(r.name for r in app.roles)}"
        )
    role: Role = macros.Values(img_root="", app_id=_APP_ID, replica_id=_REPLICA, rank0_env=RANK0_ENV).apply(
        app.roles[0]
    )
    if role.max_retries:
        raise ValueError("max_retries: not supported by the yarn scheduler yet; use 0")
    # A variable holding a macro (torchx's runner sets TORCHX_JOB_ID=yarn://.../${app_id}) is set by the shell.
    exports = {k: v for k, v in role.env.items() if any(m in v for m in _IN_CONTAINER)}
    env = {k: v for k, v in role.env.items() if k not in exports}
    command = command_of([role.entrypoint, *role.args], exports)
    words = _words(command)
    torchrun = any(w == "torchrun" or w.endswith("/torchrun") or w == "torch.distributed.run" for w in words)
    here = cwd or os.getcwd()
    code = str(cfg.get("code") or "") or (here if scripts.local_scripts(words, here) else "")
    worker: dict[str, Any] = {"instances": role.num_replicas}
    if role.resource.memMB > 0:
        worker["memory_mb"] = int(role.resource.memMB)
    if role.resource.cpu > 0:
        worker["vcores"] = max(1, int(role.resource.cpu))
    worker["gpus"] = max(0, int(role.resource.gpu))
    doc: dict[str, Any] = {
        "name": app.name or role.name,
        "framework": "pytorch" if torchrun else "none",
        "command": list(command),
        "env": env,
        "roles": {"worker": worker},
        "tags": ["torchx"],
        "python_env": str(cfg.get("python_env") or "auto"),
        "code": code,
    }
    for key in ("queue", "node_label"):
        if cfg.get(key):
            doc[key] = str(cfg[key])
    return JobSpec.from_dict(doc)


class YarnScheduler(Scheduler[Cfg]):
    """torchx's view of tfyarn: AppDef in, YARN application id out."""

    def __init__(self, session_name: str) -> None:
        super().__init__(BACKEND, session_name)

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("queue", type_=str, help="YARN queue (tfyarn --queue)", default=None)
        opts.add("node_label", type_=str, help="YARN node label (tfyarn --node-label)", default=None)
        opts.add("python_env", type_=str, help="auto | local | packed | ARCHIVE (tfyarn --python-env)", default="auto")
        opts.add("code", type_=str, help="a dir shipped into every task (default: this dir, if the script is in it)")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: Cfg) -> AppDryRunInfo[JobSpec, Cfg]:
        import yaml

        spec = to_spec(app, cfg).validate()
        return AppDryRunInfo(spec, lambda s: yaml.safe_dump(s.to_dict(), sort_keys=False))

    def schedule(self, dryrun_info: AppDryRunInfo[JobSpec, Cfg]) -> str:
        from tfyarn.client import Client

        with Client() as client:
            return client.submit(dryrun_info.request, progress=lambda m: print(m, file=sys.stderr))

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        from tfyarn.client import Client

        try:
            with Client() as client:
                rep = client.report(app_id)
        except TfyarnError:
            return None
        return DescribeAppResponse(
            app_id=app_id, state=_STATES[rep.state], msg=rep.diagnostics, ui_url=rep.tracking_url
        )

    def list(self, cfg: Cfg | None = None) -> Listing:
        from tfyarn.client import Client

        with Client() as client:
            jobs = client.list_jobs()
        return [
            ListAppResponse(
                app_id=j.app_id,
                state=_STATES[j.state],
                app_handle=f"{BACKEND}://{self.session_name}/{j.app_id}",
                name=j.name,
            )
            for j in jobs
        ]

    def _cancel_existing(self, app_id: str) -> None:
        from tfyarn.client import Client

        with Client() as client:
            client.kill(app_id)

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        should_tail: bool = False,
        streams: Stream | None = None,
    ) -> Iterable[str]:
        """Replica ``k``'s output (stdout and stderr together, as tfyarn keeps it), through `tfyarn logs`."""
        argv = [sys.executable, "-m", "tfyarn", "logs", app_id, "--task", f"worker:{k}"]
        if should_tail:
            argv.append("--follow")
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "tfyarn logs failed")
        lines: Iterable[str] = proc.stdout.splitlines(keepends=True)
        return filter_regex(regex, lines) if regex else lines


def create_scheduler(session_name: str, **kwargs: object) -> YarnScheduler:
    """The ``torchx.schedulers`` entry point: ``yarn = tfyarn.torchx_scheduler:create_scheduler``."""
    return YarnScheduler(session_name)
