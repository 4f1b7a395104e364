"""``tfyarn doctor``: would a submit work here? tfyarn.doctor's checks against the real world.

The checks are pure given a Probe; the real one is built here: commands run
with a timeout, TCP connections, the RM's REST API, and one empty dir made
and removed on HDFS through tfyarn's storage layer (which a submit's
uploads use). No skein driver is started: the doctor must work where it
would not.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from tfyarn import doctor, envchoice, hadoopconf, protocol, rest, rmnodes
from tfyarn.cli.params import default_help
from tfyarn.cluster.layout import ClusterLayout

CONNECT_TIMEOUT_S = 3.0
REST_TIMEOUT_S = 10.0
HDFS_TIMEOUT_S = 60.0  # an HDFS client retrying a NameNode that does not answer must not hang the doctor


def run_command(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> doctor.Ran:
    """Run ``argv`` (no stdin) to its end: (exit status, stdout + stderr); TimeoutExpired past ``timeout``."""
    done = subprocess.run(
        list(argv), env=dict(env), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, done.stdout + done.stderr


def connect(host: str, port: int) -> None:
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
        pass


def hdfs_probe(conf_dir: Path, uri: str) -> None:
    """Create the dir ``uri`` and delete it again, as ``conf_dir``'s cluster; TimeoutError past HDFS_TIMEOUT_S.

    The storage layer's HDFS clients read the cluster from HADOOP_CONF_DIR, so it is set here, as
    tfyarn.client does before a submit.
    """
    os.environ[protocol.ENV_HADOOP_CONF_DIR] = str(conf_dir)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            from tfyarn.storage import locate, parse_uri

            where = locate(parse_uri(uri, "doctor"))
            where.fs.create_dir(where.path, recursive=True)
            try:
                if not where.exists():
                    raise OSError(f"{uri} is not there right after it was created")
            finally:
                where.fs.delete_dir(where.path)
            outcome.append(None)
        except BaseException as e:  # handed to the caller's thread
            outcome.append(e)

    worker = threading.Thread(target=attempt, name="tfyarn-doctor-hdfs", daemon=True)
    worker.start()
    worker.join(HDFS_TIMEOUT_S)
    if not outcome:
        raise TimeoutError(f"HDFS did not answer within {HDFS_TIMEOUT_S:.0f} s")
    if outcome[0] is not None:
        raise outcome[0]


def real_probe() -> doctor.Probe:
    """The probe of this machine, its environment and the cluster it is configured for."""
    layout = ClusterLayout()
    return doctor.Probe(
        environ=dict(os.environ),
        local_conf_dir=layout.conf_dir,
        local_bin_dir=layout.bin_dir,
        python_env=envchoice.choose,
        run=run_command,
        connect=connect,
        get=lambda url: rest.get(url, timeout=REST_TIMEOUT_S),
        info=hadoopconf.http_fetch,
        nodes=lambda url: rmnodes.get_nodes(url, timeout=REST_TIMEOUT_S),
        hdfs_probe=hdfs_probe,
    )


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one {name, outcome, detail, fix} per check.")
@click.option(
    "--queue",
    default=None,
    metavar="NAME",
    help=f"The queue to check, as `submit --queue` would use it. {default_help('queue')}",
)
def doctor_cmd(as_json: bool, queue: str | None) -> None:
    """Check that a submit would work from here, and say how to fix what would stop it.

    \b
    Each check prints one line: OK, WARN (works, with a limit), FAIL (a submit
    would fail; the line ends with the fix) or SKIP (with why; "needs <check>"
    when an earlier check it depends on did not pass). In order:
      config           the Hadoop client config (HADOOP_CONF_DIR, else YARN_CONF_DIR,
                       else $HADOOP_HOME/etc/hadoop, else the local cluster's) parses
      yarn             a `yarn` command, and `yarn classpath --glob` works (skein runs it)
      resourcemanager  the ResourceManager takes connections; of an HA set, which is active
      namenode         fs.defaultFS's NameNode takes connections
      hdfs-home        an empty dir under hdfs:///user/<you>/.tfyarn/ is created and deleted
                       (on a Kerberized cluster only with a ticket or keytab: SKIP without)
      kerberos         on a Kerberized cluster: a ticket (klist -s) or TFYARN_KEYTAB
      gpus             the yarn.io/gpu resource type, and GPUs per RUNNING node
      queues           the leaf queues that take jobs, and whether --queue is one
      python-env       the Python a default submit's containers run (--python-env)
      docker           whether the NodeManagers allow the Docker runtime

    \b
    Exit codes:
      0  no FAIL: a submit would work (WARN lines say what it would not do)
      1  some check FAILed: a submit would fail
      2  usage error

    \b
    Examples:
      tfyarn doctor
      HADOOP_CONF_DIR=/etc/hadoop/conf tfyarn doctor --queue research
      tfyarn doctor --json | jq '.[] | select(.outcome == "FAIL")'
    """
    probe = real_probe()
    if as_json:
        results = doctor.run_checks(probe, queue or "")
        click.echo(doctor.to_json(results))
    else:
        results = doctor.run_checks(probe, queue or "", on_result=lambda r: click.echo(doctor.render_line(r)))
    code = doctor.exit_code(results)
    if not as_json:
        failed = [r.name for r in results if r.outcome == doctor.Outcome.FAIL]
        verdict = f"a submit would fail: fix {', '.join(failed)} first" if failed else "a submit would work"
        click.echo(f"tfyarn doctor: {verdict}", err=True)
    if code:
        raise click.exceptions.Exit(code)
