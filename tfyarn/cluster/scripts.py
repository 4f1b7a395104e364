"""The ``yarn``, ``hdfs`` and ``hadoop`` commands of a local cluster.

Hadoop's own shell launchers come only in the tarball, which is not on
Maven Central. These small scripts map the same subcommands to the same
main classes, run on the cached jars, so skein (which shells out to
``yarn classpath --glob``) and users' muscle memory both work.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster.java import CLIENT_FLAGS, JAVA17_FLAGS, java_home
from tfyarn.cluster.layout import ClusterLayout

# subcommand -> (main class, whether the subcommand itself stays argv[0])
_YARN = {
    "application": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
    "applicationattempt": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
    "container": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
    "logs": ("org.apache.hadoop.yarn.client.cli.LogsCLI", False),
    "node": ("org.apache.hadoop.yarn.client.cli.NodeCLI", False),
    "queue": ("org.apache.hadoop.yarn.client.cli.QueueCLI", False),
    "rmadmin": ("org.apache.hadoop.yarn.client.cli.RMAdminCLI", False),
    "classpath": ("org.apache.hadoop.util.Classpath", False),
    "version": ("org.apache.hadoop.util.VersionInfo", False),
}
_HDFS = {
    "dfs": ("org.apache.hadoop.fs.FsShell", False),
    "dfsadmin": ("org.apache.hadoop.hdfs.tools.DFSAdmin", False),
    "getconf": ("org.apache.hadoop.hdfs.tools.GetConf", False),
    "fsck": ("org.apache.hadoop.hdfs.tools.DFSck", False),
    "classpath": ("org.apache.hadoop.util.Classpath", False),
    "version": ("org.apache.hadoop.util.VersionInfo", False),
}
_HADOOP = {
    "fs": ("org.apache.hadoop.fs.FsShell", False),
    "classpath": ("org.apache.hadoop.util.Classpath", False),
    "version": ("org.apache.hadoop.util.VersionInfo", False),
}
COMMANDS: dict[str, dict[str, tuple[str, bool]]] = {"yarn": _YARN, "hdfs": _HDFS, "hadoop": _HADOOP}


def comment_safe(text: str) -> str:
    """``text`` fit for a ``#`` comment: a newline in a path would end the comment and run the rest."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def render(name: str, layout: ClusterLayout) -> str:
    """The bash text of one command.

    Every path is assigned once, single-quoted by shlex.quote, and used only
    as a quoted variable: a dir named ``$(...)``, with a space or a quote
    is data, never shell code.
    """
    table = COMMANDS[name]
    cases = "\n".join(f"  {sub}) cls={cls}; {'' if keep else 'shift; '};;" for sub, (cls, keep) in table.items())
    flags = " ".join(shlex.quote(f) for f in [*CLIENT_FLAGS, *JAVA17_FLAGS])
    subs = " ".join(table)
    q, conf = shlex.quote, protocol.ENV_HADOOP_CONF_DIR
    return f"""#!/usr/bin/env bash
# {name}: written by `tfyarn cluster up` for the local cluster in {comment_safe(str(layout.root))}.
# Runs the real Hadoop {name} subcommands on the cached Hadoop jars.
tfyarn_java_home={q(str(java_home()))}
tfyarn_conf_dir={q(str(layout.conf_dir))}
tfyarn_lib_dir={q(str(layout.lib_dir))}
export JAVA_HOME="${{JAVA_HOME:-$tfyarn_java_home}}"
export {conf}="${{{conf}:-$tfyarn_conf_dir}}"
CP="${conf}:$tfyarn_lib_dir/*"
# As Hadoop's own launcher: a bare `classpath` prints it; with options the Classpath class runs.
if [ "${{1:-}}" = classpath ] && [ $# -eq 1 ]; then echo "$CP"; exit 0; fi
case "${{1:-}}" in
{cases}
  ""|-h|--help|help) echo "usage: {name} SUBCOMMAND [ARGS...]   subcommands: {subs}"; exit 0;;
  *) echo "{name}: unknown subcommand '$1' (one of: {subs})" >&2; exit 1;;
esac
# Java reads no KRB5_CONFIG of its own: hand it over as the property, as tfyarn does for its JVMs.
exec "$JAVA_HOME/bin/java" {flags} ${{TFYARN_CLIENT_OPTS:-}} \\
  ${{KRB5_CONFIG:+"-Djava.security.krb5.conf=$KRB5_CONFIG"}} \\
  -Dhadoop.root.logger="${{HADOOP_ROOT_LOGGER:-WARN,console}}" \\
  -cp "$CP" "$cls" "$@"
"""


def write_scripts(layout: ClusterLayout) -> list[Path]:
    """Write bin/yarn, bin/hdfs, bin/hadoop; return their paths."""
    layout.bin_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in COMMANDS:
        path = layout.bin_dir / name
        part = path.with_name(f".{name}.{os.getpid()}.part")
        part.write_text(render(name, layout))
        part.chmod(0o755)
        os.replace(part, path)  # whole at once: another process may be running the old one
        paths.append(path)
    return paths
