"""``tfyarn submit``: options -> JobSpec (tfyarn.cli.jobfile) -> (dry run | submit [and follow]).

Flags given on the command line override the YAML job file, and
``--set key=value`` overrides both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tfyarn import docker, protocol
from tfyarn.cli.helpgroups import GroupedCommand, help_all
from tfyarn.cli.jobfile import build_spec, reworded
from tfyarn.cli.params import DURATION, EXIT_CODES, KEY_VALUE, MEMORY, WorkerCount, default_help
from tfyarn.errors import SpecError
from tfyarn.follow import progress_line as progress_line  # re-exported: tests/unit/test_page.py
from tfyarn.frameworks import KNOWN_ROLES as ROLES
from tfyarn.frameworks import NAMES as FRAMEWORKS
from tfyarn.nodegpus import GPU
from tfyarn.spec import INPUT_MODES, NO_PROGRESS_ROLES, PLACEMENTS, RESTART_POLICIES, TENSORBOARD_AM_MEMORY_MB


def _role_options(f: Any) -> Any:
    for role in reversed(ROLES):
        f = click.option(
            f"--{role}-progress-timeout",
            type=DURATION,
            default=None,
            help=f"Stop a {role} task that shows no progress this long (as --progress-timeout); "
            + ("it wins over --progress-timeout." if role not in NO_PROGRESS_ROLES else "--progress-timeout skips it."),
        )(f)
        f = click.option(
            f"--{role}-docker-image",
            default=None,
            metavar="IMAGE",
            help=f"Docker image for {role} tasks, instead of --docker-image.",
        )(f)
        f = click.option(
            f"--{role}-permanent-exit-codes",
            type=EXIT_CODES,
            default=None,
            metavar="N[,N...]",
            help=f"Exit codes of a {role} task that are never retried.",
        )(f)
        f = click.option(
            f"--{role}-restart-backoff",
            type=click.IntRange(min=0),
            default=None,
            metavar="SECONDS",
            help=f"Wait before restarting a {role} task, doubled each time. "
            f"{default_help(f'roles.{role}.restart_backoff_s')}",
        )(f)
        f = click.option(
            f"--{role}-max-restarts",
            type=click.IntRange(min=0),
            default=None,
            help=f"Restarts allowed per {role} task (per job for 'all'). {default_help(f'roles.{role}.max_restarts')}",
        )(f)
        f = click.option(
            f"--{role}-restart",
            type=click.Choice(RESTART_POLICIES),
            default=None,
            help=f"When a {role} task fails: never (job fails), on-failure (restart it; it "
            "rejoins), all (restart every task, new rendezvous). "
            f"{default_help(f'roles.{role}.restart_policy')}",
        )(f)
        f = click.option(f"--{role}-node-label", default=None, help=f"Node label for {role} containers.")(f)
        f = click.option(
            f"--{role}-gpus",
            type=click.IntRange(min=0),
            default=None,
            help=f"GPUs ({GPU}) per {role} container. {default_help(f'roles.{role}.gpus')}",
        )(f)
        f = click.option(
            f"--{role}-vcores",
            type=click.IntRange(min=1),
            default=None,
            help=f"Virtual cores per {role} container. {default_help(f'roles.{role}.vcores')}",
        )(f)
        f = click.option(
            f"--{role}-memory",
            type=MEMORY,
            default=None,
            help=f"Memory per {role} container, e.g. 512m, 4g. {default_help(f'roles.{role}.memory_mb')}",
        )(f)
    return f


@click.command(cls=GroupedCommand, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--help-all",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=help_all,
    help="Show this help with every role's options, and exit.",
)
@click.option(
    "--conf",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML job file; every key is documented in job.yaml, installed in tfyarn's package dir "
    "(conf/job.yaml in its repo). Flags override it.",
)
@click.option(
    "--set",
    "sets",
    type=KEY_VALUE,
    multiple=True,
    help="Override one job key, e.g. --set roles.worker.instances=3 (repeatable; value is YAML).",
)
@click.option(
    "--framework",
    type=click.Choice(FRAMEWORKS),
    default=None,
    help="tensorflow: TF_CONFIG for chief/worker/ps/evaluator; pytorch: torchrun's variables "
    f"for DDP; none: plain tasks. {default_help('framework')}",
)
@click.option("--name", default=None, help="Application name shown by YARN. [default: tfyarn-<program>]")
@click.option(
    "--num-workers",
    type=WorkerCount(),
    default=None,
    help="Worker containers; MIN:MAX for elastic pytorch workers (torchrun --nnodes MIN:MAX: training "
    "starts with MIN, containers up to MAX join as YARN grants them, a lost one is replaced alone). "
    f"{default_help('roles.worker.instances')}",
)
@click.option(
    "--num-ps",
    type=click.IntRange(min=0),
    default=None,
    help="TensorFlow parameter servers (ParameterServerStrategy; needs --chief).",
)
@click.option("--chief", count=True, help="TensorFlow: add the chief task (at most once).")
@click.option("--evaluator", count=True, help="TensorFlow: add an evaluator task (at most once).")
@click.option(
    "--evaluator-may-fail/--evaluator-must-succeed",
    default=None,
    help="Whether a failed evaluator fails the job. "
    + default_help("evaluator_may_fail", lambda may: "may fail" if may else "must succeed"),
)
@click.option(
    "--nproc-per-node",
    type=click.IntRange(min=1),
    default=None,
    help="PyTorch: processes per worker container, via torchrun. "
    + default_help("roles.worker.nproc_per_node", lambda n: str(n) if n else "its GPUs, or 1"),
)
@_role_options
@click.option("--queue", default=None, help=f"YARN queue. {default_help('queue')}")
@click.option(
    "--node-label",
    default=None,
    help="YARN node label for every container, the AM's too (e.g. gpu: `tfyarn nodes` shows each node's). "
    "Checked at submit: a RUNNING node must carry it and the queue may use it. YARN places labelled "
    "containers, so it does not go with --placement spread|pack or --exclude-node.",
)
@click.option("--env", "env", type=KEY_VALUE, multiple=True, help="NAME=VALUE for every task (repeatable).")
@click.option(
    "--docker-image",
    default=None,
    metavar="IMAGE",
    help="Run every task's command in this Docker image (a --ROLE-docker-image wins for its role). "
    "The task's dir is mounted at the same path, with YARN's memory and vcores as limits and the "
    "task's GPUs; TF_CONFIG, torchrun's variables and --env reach it.",
)
@click.option(
    "--docker-runtime",
    type=click.Choice(docker.RUNTIMES),
    default=None,
    help="executor: the executor runs `docker run` on the node (needs Docker on the nodes); yarn: "
    "YARN's Docker runtime starts the whole container in the image (LinuxContainerExecutor; the image "
    "needs Python and tfyarn); auto: yarn when the cluster's config allows it, else executor. "
    + default_help("docker_runtime"),
)
@click.option(
    "--docker-mount",
    "docker_mount",
    multiple=True,
    metavar="SRC:DST[:ro]",
    help="Also mount the node's SRC at DST in the image (repeatable).",
)
@click.option(
    "--docker-env",
    "docker_env",
    type=KEY_VALUE,
    multiple=True,
    help="NAME=VALUE set inside the Docker image only (repeatable).",
)
@click.option(
    "--file",
    "file",
    type=click.Path(exists=True),
    multiple=True,
    help="Local file or dir shipped into every task's working dir by base name (repeatable).",
)
@click.option(
    "--input",
    "input",
    multiple=True,
    metavar="URI[:DIR]",
    help="Data staged into every container before the command starts, e.g. hdfs:///data/mnist "
    "(to inputs/mnist; $TFYARN_INPUT has its absolute path) or hdfs:///data/mnist:./data. "
    "Repeatable.",
)
@click.option(
    "--input-mode",
    type=click.Choice(INPUT_MODES),
    default="copy",
    show_default=True,
    help="copy: every container gets all files; shard: each worker a disjoint slice.",
)
@click.option(
    "--output",
    "output",
    multiple=True,
    metavar="DIR:URI",
    help="Local dir published atomically when the task ends well, e.g. ./model:hdfs:///models/run1 "
    "(by the chief, else worker 0). Repeatable.",
)
@click.option("--overwrite", is_flag=True, default=None, help="Outputs may replace an existing destination.")
@click.option(
    "--output-mode",
    default=None,
    metavar="MODE",
    help="Permissions of the published outputs and snapshots: dirs MODE, files MODE without x; the default "
    "keeps them to you, 750 lets "
    "the destination's group read them. On HDFS each --view-acl and --modify-acl user also gets read "
    "access (an ACL entry; they need to reach the destination's parent dir too). " + default_help("output_mode"),
)
@click.option(
    "--save-every",
    type=click.IntRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Publish a snapshot of the outputs every SECONDS while the job runs, to <URI>.snapshots/<time> "
    "(also on demand: tfyarn save APP_ID).",
)
@click.option(
    "--resume/--no-resume",
    default=None,
    help="A restarted output task (its own restart, an 'all' restart, a new AM attempt) first gets the job's "
    "latest --save-every snapshot in its output dir; your script restores from it (docs/data.md: Checkpoints and "
    "models). --no-resume: it starts from an empty dir. Default: resume.",
)
@click.option(
    "--download-threads",
    type=click.IntRange(min=1),
    default=None,
    help=f"Parallel downloads per container. {default_help('download_threads')}",
)
@click.option(
    "--upload-threads",
    type=click.IntRange(min=1),
    default=None,
    help=f"Parallel uploads per output. {default_help('upload_threads')}",
)
@click.option(
    "--python-env",
    default=None,
    metavar="auto|local|packed|ARCHIVE",
    help="auto: local on the local cluster when its nodes see this interpreter, else packed (said at "
    "submit and in --dry-run); local: containers run this machine's interpreter path (a shared install); "
    "packed: this virtualenv or conda env is packed (venv-pack/conda-pack), cached on HDFS by its packages "
    "and unpacked in every container, and the current dir is shipped as --code; ARCHIVE: a "
    f"venv-pack/conda-pack .tar.gz to use instead. {default_help('python_env')}",
)
@click.option(
    "--code",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="A source dir shipped (packed, cached by content) into every task's working dir.",
)
@click.option(
    "--tensorboard",
    is_flag=True,
    default=None,
    help="Run TensorBoard for the job, linked from its status page: tasks write summaries to "
    f"$TFYARN_TENSORBOARD_DIR, mirrored to HDFS every few seconds (AM gets {TENSORBOARD_AM_MEMORY_MB} MiB more).",
)
@click.option("--tag", "tag", multiple=True, help="YARN application tag (repeatable).")
@click.option(
    "--am-memory", type=MEMORY, default=None, help=f"ApplicationMaster memory. {default_help('am_memory_mb')}"
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=None,
    help="YARN AM attempts; a second attempt re-runs the whole job from a clean state. " + default_help("max_attempts"),
)
@click.option(
    "--allocation-timeout",
    type=click.IntRange(min=1),
    default=None,
    metavar="SECONDS",
    help="Fail the job (releasing what it holds) unless YARN allocates all its containers in time. "
    + default_help("allocation_timeout_s"),
)
@click.option(
    "--max-runtime",
    type=DURATION,
    default=None,
    help="Fail the job this long after submission (90s, 30m, 2h, 1h30m), stopping every task: a job "
    "that hangs or runs away ends instead of holding its containers. 0: no limit. [default: 0]",
)
@click.option(
    "--progress-timeout",
    type=DURATION,
    default=None,
    help="Stop a task that shows no progress this long (90s, 30m, 2h); it fails, and its restart policy "
    "applies. Progress: a tfyarn.report call, or, for a script that reports nothing, new output on stdout "
    "or stderr. Every role but ps and evaluator (their own --ps-/--evaluator-progress-timeout). 0: off. [default: 0]",
)
@click.option(
    "--registration-timeout",
    type=click.IntRange(min=1),
    default=None,
    metavar="SECONDS",
    help="Fail the job if a task has not registered (inputs staged) this long after its container "
    "was allocated. " + default_help("registration_timeout_s"),
)
@click.option(
    "--view-acl",
    "view_acl",
    multiple=True,
    metavar="USER",
    help="Another user who may view the job and its logs, and read its HDFS outputs (repeatable; "
    "default: the owner only).",
)
@click.option(
    "--modify-acl",
    "modify_acl",
    multiple=True,
    metavar="USER",
    help="Another user who may kill the job, and read its HDFS outputs (repeatable; default: the owner only).",
)
@click.option(
    "--on-event",
    default=None,
    metavar="CMD",
    help="Run CMD (/bin/sh, in the AM's container) on each job event: task_restart, node_lost, "
    "task_failed, job_end. The event's JSON ({kind, time, task, host, message}) is on its stdin "
    "and in $TFYARN_EVENT; at most 30 s a run; a failing hook never fails the job. E.g. "
    "--on-event 'curl -sf -X POST --data-binary @- https://alerts.example/tfyarn'",
)
@click.option(
    "--placement",
    type=click.Choice(PLACEMENTS),
    default=None,
    help="Where tasks go: yarn (YARN decides), spread (a role's tasks on distinct nodes, e.g. one DDP "
    "rank group per node; a lost node takes as few as it can), pack (as few nodes as they fit on). "
    "spread and pack start from the AM's node. " + default_help("placement"),
)
@click.option(
    "--exclude-node",
    "exclude_node",
    multiple=True,
    metavar="HOST",
    help="Keep every task off this node, named as `tfyarn cluster status` or the RM lists it (repeatable). "
    "A restarted task also avoids nodes where a container of the job was lost.",
)
@click.option(
    "--dry-run",
    type=click.Choice(["job", "yarn"]),
    is_flag=False,
    flag_value="job",
    default=None,
    help="Contact no cluster, submit nothing: print the resolved job as YAML that --conf loads back "
    "(--dry-run or --dry-run=job), or the YARN application spec (--dry-run=yarn), after a summary in # lines.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="Follow the job; exit 0 only if it SUCCEEDED. Ctrl-C stops following, not the job (tfyarn wait APP_ID).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object on stdout: app_id, tracking_url, state (with --wait, when it ends: the final "
    "state, diagnostics and status, as `tfyarn wait --json`); progress stays on stderr.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def submit(
    ctx: click.Context,
    command: tuple[str, ...],
    conf: Path | None,
    sets: tuple[tuple[str, str], ...],
    dry_run: str | None,
    wait: bool,
    as_json: bool,
    **opts: Any,
) -> None:
    """Submit COMMAND (after `--`) to YARN: one container per task, cluster config written for you.

    \b
    Examples:
      # TF2 ParameterServerStrategy: you write the chief; ps and workers run a TF server
      tfyarn submit --framework tensorflow --chief --num-workers 2 --num-ps 1 \\
          --file train.py -- python train.py
      # TF MultiWorkerMirroredStrategy on 2 workers
      tfyarn submit --framework tensorflow --num-workers 2 --file train.py -- python train.py
      # PyTorch DDP: 2 containers x 2 processes (torchrun inside each)
      tfyarn submit --framework pytorch --num-workers 2 --nproc-per-node 2 --file train.py -- python train.py
      # a YAML job file, one key overridden, shown but not submitted
      tfyarn submit --conf job.yaml --set roles.worker.instances=4 --dry-run

    \b
    Layers, each over the one before: your defaults file (~/.config/tfyarn/defaults.yaml,
    or $TFYARN_DEFAULTS; job-file keys: tfyarn/job.yaml), --conf, flags or their
    variables (TFYARN_SUBMIT_<FLAG>, e.g. TFYARN_SUBMIT_QUEUE=research), then --set.

    \b
    Exit codes: 0 submitted (or SUCCEEDED with --wait), 2 bad input (nothing submitted),
    3 cluster unreachable, 4 job FAILED or KILLED (with --wait), 130 Ctrl-C during --wait
    (the job keeps running), 1 other errors.
    """
    if as_json and dry_run:
        raise click.UsageError("--json goes with a submission; --dry-run prints the plan as YAML")
    input_mode = opts.pop("input_mode")
    given = {k: v for k, v in opts.items() if ctx.get_parameter_source(k) != click.core.ParameterSource.DEFAULT}
    given = {k: v for k, v in given.items() if not (k in ("chief", "evaluator") and v == 0)}
    flagged: dict[str, str] = {}
    try:
        spec = build_spec(conf, given, sets, command, flagged, input_mode)
    except SpecError as e:
        raise reworded(e, env_named(ctx, flagged)) from None
    flagged = env_named(ctx, flagged)
    if dry_run:
        from tfyarn.cli import dryrun

        dryrun.show(spec, dry_run, flagged)
        return
    from tfyarn.cli.wait_cmd import detach_on_ctrl_c, follow_to_end, job_dict
    from tfyarn.client import Client

    def human(line: str) -> None:  # with --json, stdout carries only the JSON object
        click.echo(line, err=as_json)

    with Client() as client:
        try:
            app_id = client.submit(spec, progress=lambda m: click.echo(m, err=True))
        except SpecError as e:  # the cluster or environment cannot run it: named by the flag that asked
            raise reworded(e, flagged) from None
        with detach_on_ctrl_c(app_id):  # from here on, Ctrl-C says how to re-attach
            rep = client.report(app_id)
        human(f"Submitted {app_id} ({spec.name}: {spec.framework}, {spec.num_tasks} task(s), queue {spec.queue})")
        human(f"Tracking URL: {rep.tracking_url}")
        if rep.tracking_url:  # the AM's page, behind the RM's proxy: live while the job runs
            human(f"Status page: {protocol.status_page_url(rep.tracking_url)}")
        if not wait:
            human(f"Next: tfyarn status {app_id} | tfyarn logs {app_id} | tfyarn kill {app_id}")
            if as_json:
                click.echo(json.dumps(job_dict(rep)))
            return
        follow_to_end(client, app_id, spec.num_tasks, as_json)


def env_named(ctx: click.Context, flagged: dict[str, str]) -> dict[str, str]:
    """``flagged`` with a flag whose value came from its TFYARN_SUBMIT_* variable named as that variable."""
    by_flag = {f"--{p.name.replace('_', '-')}": p for p in ctx.command.params if isinstance(p, click.Option)}
    out = {}
    for key, flag in flagged.items():
        param = by_flag.get(flag)
        if param is not None and param.name:
            if ctx.get_parameter_source(param.name) == click.core.ParameterSource.ENVIRONMENT:
                flag = f"{_envvar(ctx, param)} ({flag})"
        out[key] = flag
    return out


def _envvar(ctx: click.Context, param: click.Option) -> str:
    """The variable click read ``param`` from (its own, or the TFYARN_SUBMIT_<FLAG> one)."""
    if param.envvar:
        return param.envvar if isinstance(param.envvar, str) else param.envvar[0]
    return f"{ctx.auto_envvar_prefix}_{(param.name or '').upper()}"
