"""Container logs on the local Kerberized cluster's NodeManagers, without libhadoop.

In secure mode a NodeManager opens container logs (to serve and to
aggregate them) only through Hadoop's SecureIOUtils, which needs libhadoop;
that is not on Maven Central. java_src/SecureIOUtils.java is tfyarn's own
pure-Java class of the same name: compiled once per machine (in the jar
cache, by its source's hash) and put before Hadoop's jars on the
NodeManagers' classpath, on a Kerberized local cluster only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from tfyarn.cluster.java import java_home
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import ClusterError

SOURCE = Path(__file__).parent / "java_src" / "SecureIOUtils.java"
CLASS = Path("org/apache/hadoop/io/SecureIOUtils.class")


def classes_dir(layout: ClusterLayout) -> Path:
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return layout.jar_cache / "secureio" / digest


def ensure(layout: ClusterLayout) -> Path:
    """The compiled class's dir (a classpath entry), compiled now unless it already is."""
    out = classes_dir(layout)
    if (out / CLASS).exists():
        return out
    tmp = out.with_name(f"{out.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    javac = java_home() / "bin" / "javac"
    cmd = [str(javac), "-J-Xmx256m", "-nowarn", "-cp", f"{layout.lib_dir}/*", "-d", str(tmp), str(SOURCE)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise ClusterError(f"no javac at {javac}: `cluster up --kerberos` needs a JDK, not only a JRE") from None
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        first = (proc.stderr.strip().splitlines() or ["no output"])[0]
        raise ClusterError(f"compiling {SOURCE.name} failed (exit {proc.returncode}): {first}")
    try:
        tmp.rename(out)
    except OSError:  # another cluster compiled it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return out
