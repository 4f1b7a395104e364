"""``tfyarn fetch``: bring a job's published outputs (or any HDFS path) to this machine."""
from __future__ import annotations

import os

import click

from tfyarn.status import is_app_id

def _sources(source: str) -> list[tuple[str, str]]:
    """(URI, local sub-dir name) pairs: a job's declared outputs, or the one URI given."""
    if not is_app_id(source):
        from tfyarn.hadoop_env import discover
        from tfyarn.preflight import check_namenode
        from tfyarn.storage import parse_uri

        hadoop = discover()
        hadoop.apply()  # hdfs-native finds the cluster through HADOOP_CONF_DIR
        uri = parse_uri(source, "SOURCE")
        if uri.scheme == "hdfs":
            check_namenode(uri, hadoop.conf_dir)
        return [(source, "")]
    from tfyarn.client import Client

    with Client() as client:
        rep = client.report(source)
        doc = client.task_status(source)
    outputs = (doc or {}).get("outputs")
    if outputs is None:
        raise click.ClickException(f"{source}: its outputs are not known yet (YARN is still aggregating the "
                                   "job's logs); try again in a few seconds, or fetch the hdfs:// path")
    if not outputs:
        raise click.ClickException(f"{source} declared no outputs (tfyarn submit --output DIR:URI)")
    if rep.state.value != "SUCCEEDED":
        raise click.ClickException(f"{source} ended {rep.state.value}: its outputs were not published")
    several = len(outputs) > 1
    return [(o["dest"], os.path.basename(o["dest"].rstrip("/")) if several else "") for o in outputs]


@click.command()
@click.argument("source")
@click.argument("dest", required=False, type=click.Path(file_okay=False))
@click.option("--list", "list_only", is_flag=True, help="Show what would be fetched, fetch nothing.")
@click.option("--threads", type=click.IntRange(min=1), default=10, show_default=True, help="Parallel downloads.")
def fetch(source: str, dest: str | None, list_only: bool, threads: int) -> None:
    """Copy SOURCE into the local dir DEST: a job's outputs (SOURCE = APP_ID) or a URI (hdfs:///models/run1).

    \b
    Resume-safe: files already complete in DEST are skipped, and a file only
    appears under its name once it is complete. Examples:
      tfyarn fetch application_1712345678901_0042 ./model
      tfyarn fetch application_1712345678901_0042 --list
      tfyarn fetch hdfs:///models/run1 ./model
    """
    from tfyarn.storage import copy_tree, list_files, locate, parse_uri

    if not list_only and dest is None:
        raise click.UsageError("missing DEST (or pass --list)")
    for uri, sub in _sources(source):
        src = locate(parse_uri(uri, "SOURCE"))
        files = list_files(src)
        total = sum(f.size for f in files)
        if list_only:
            for f in files:
                click.echo(f"{f.size:>14,}  {uri.rstrip('/')}/{f.rel}")
            click.echo(f"{len(files)} file(s), {total:,} bytes in {uri}")
            continue
        target = os.path.join(dest or ".", sub)
        with click.progressbar(length=total, label=f"{uri} -> {target}", file=click.get_text_stream("stderr"),
                               show_pos=False, show_percent=True) as bar:
            last = [0]

            def advance(done: int, _total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            report = copy_tree(src, locate(parse_uri(os.path.abspath(target))), files, threads=threads,
                               progress=advance)
        click.echo(f"Fetched {report.files} file(s), {report.bytes:,} bytes into {target} in {report.seconds:.1f} s"
                   + (f" ({report.skipped} already there)" if report.skipped else ""))
