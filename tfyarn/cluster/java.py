"""How to start a Hadoop JVM on Java 17 from the jar cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tfyarn.errors import ClusterError

# Hadoop's own launcher adds these on Java 17: Hadoop reflects into JDK internals.
_OPENS = [
    "java.io",
    "java.lang",
    "java.lang.reflect",
    "java.math",
    "java.net",
    "java.nio",
    "java.text",
    "java.util",
    "java.util.concurrent",
    "java.util.concurrent.atomic",
    "java.util.regex",
    "java.util.zip",
    "sun.nio.ch",
    "sun.security.util",
    "sun.security.x509",
]
JAVA17_FLAGS: list[str] = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    "-Djava.net.preferIPv4Stack=true",
    *[f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in _OPENS],
]
# Short-lived CLI JVMs (yarn, hdfs): start fast rather than run fast.
CLIENT_FLAGS: list[str] = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def java_home() -> Path:
    """``$JAVA_HOME``, else the JDK behind ``java`` on PATH."""
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "java").exists():
        return Path(env)
    java = shutil.which("java")
    if not java:
        raise ClusterError("no Java found: install Java 17 or newer, or set JAVA_HOME")
    return Path(java).resolve().parent.parent
