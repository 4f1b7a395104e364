"""Fetch the Hadoop jars from Maven Central into tfyarn's jar cache, once."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import ClusterError

_MARKER = ".complete"


def _pom_text() -> str:
    return resources.files("tfyarn.cluster").joinpath("pom.xml").read_text()


def _unpack_webapps(lib: Path, webroot: Path) -> None:
    """Move HDFS's web UIs out of its tests jar onto their own classpath dir.

    The daemons need ``webapps/hdfs`` and ``webapps/datanode`` as classpath
    resources; keeping the test classes off the classpath avoids surprises.
    """
    tests_jars = list(lib.glob("hadoop-hdfs-*-tests.jar"))
    if not tests_jars:
        raise ClusterError("Maven fetched no hadoop-hdfs tests jar; the HDFS web apps are missing")
    shutil.rmtree(webroot, ignore_errors=True)
    with zipfile.ZipFile(tests_jars[0]) as zf:
        zf.extractall(webroot, [n for n in zf.namelist() if n.startswith("webapps/")])
    for jar in tests_jars:
        jar.unlink()


def jars_ready(layout: ClusterLayout) -> bool:
    """True when the cache holds a complete copy made from the current pom."""
    marker = layout.lib_dir / _MARKER
    digest = hashlib.sha256(_pom_text().encode()).hexdigest()
    return marker.exists() and marker.read_text().strip() == digest


def ensure_jars(layout: ClusterLayout, progress: Callable[[str], None]) -> Path:
    """Copy Hadoop's jars and dependencies into ``layout.lib_dir`` unless cached.

    Maven's own ~/.m2 keeps the downloads, so a second cache dir costs a copy,
    not a download. The copy lands in a temporary dir and is renamed into
    place, so an interrupted fetch never looks complete.
    """
    if jars_ready(layout):
        return layout.lib_dir
    mvn = shutil.which("mvn")
    if not mvn:
        raise ClusterError(
            "Maven (mvn) is not on PATH: install Maven 3, or point "
            f"{protocol.ENV_JAR_CACHE} at a dir whose lib/ holds the Hadoop jars"
        )
    pom_text = _pom_text()
    layout.jar_cache.mkdir(parents=True, exist_ok=True)
    pom = layout.jar_cache / "pom.xml"
    pom.write_text(pom_text)
    tmp = layout.jar_cache / "lib.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    progress(f"Fetching Hadoop jars with Maven into {layout.lib_dir} (first time only) ...")
    cmd = [
        mvn,
        "-B",
        "-q",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={tmp}",
        "-DincludeScope=runtime",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ClusterError(
            f"Maven could not fetch the Hadoop jars (exit {proc.returncode}); "
            f"check access to Maven Central. Maven said:\n{tail}"
        )
    _unpack_webapps(tmp, layout.webroot)
    shutil.rmtree(layout.lib_dir, ignore_errors=True)
    tmp.rename(layout.lib_dir)
    digest = hashlib.sha256(pom_text.encode()).hexdigest()
    (layout.lib_dir / _MARKER).write_text(digest + "\n")
    count = sum(1 for _ in layout.lib_dir.glob("*.jar"))
    progress(f"Fetched {count} jars.")
    return layout.lib_dir
