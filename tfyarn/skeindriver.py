"""Reuse a running skein global driver (``skein driver start``) instead of starting a Java driver per command.

Each tfyarn command that talks to YARN needs skein's Java driver; starting
one costs a JVM start and a Hadoop login (benchmarks/driver.py measures it).
A global driver, started once with ``skein driver start``, is used instead
when it serves this very cluster: its process's HADOOP_CONF_DIR is the
config tfyarn found (read from ``/proc/<pid>/environ``), and the command
brings no credentials of its own (``--principal``/``--keytab``). Anything
else, or any doubt, starts a driver of the command's own, as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import skein

from tfyarn import hadoop_env, protocol

ENV_OWN_DRIVER = protocol.ENV_OWN_DRIVER


def driver_file() -> Path:
    """Where skein records its global driver's address and pid."""
    return Path(skein.properties.config_dir) / "driver"


def recorded() -> tuple[str, int] | None:
    """The global driver's (address, pid) as skein recorded it, or None."""
    try:
        data = json.loads(driver_file().read_text())
        return str(data["address"]), int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def environ_of(pid: int) -> dict[str, str] | None:
    """A process's environment, or None if it cannot be read (gone, another user's)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def why_not(conf_dir: Path, environ: dict[str, str] | None = None) -> str | None:
    """Why the global driver cannot serve a command against ``conf_dir``; None when it can."""
    env = os.environ if environ is None else environ
    if env.get(ENV_OWN_DRIVER):
        return f"{ENV_OWN_DRIVER} is set"
    if env.get(protocol.ENV_PRINCIPAL) or env.get(protocol.ENV_KEYTAB):
        return "this command logs in with its own --principal/--keytab"
    found = recorded()
    if found is None:
        return "no global driver is recorded (`skein driver start` starts one)"
    theirs = environ_of(found[1])
    if theirs is None:
        return f"the global driver's process {found[1]} is gone or not yours"
    conf = theirs.get(protocol.ENV_HADOOP_CONF_DIR, "")
    if not conf or Path(conf).resolve() != conf_dir.resolve():
        return f"the global driver serves {protocol.ENV_HADOOP_CONF_DIR}={conf or '(unset)'}, not {conf_dir}"
    user = protocol.ENV_HADOOP_USER_NAME
    if (env.get(user) or None) != (theirs.get(user) or None):  # simple auth: the driver acts as its own user
        mine, its = env.get(user) or "(unset)", theirs.get(user) or "(unset)"
        return f"this command acts as {user}={mine}, the global driver as {its}"
    if hadoop_env.kerberized(conf_dir):
        # It acts as whoever it logged in as when it started: not necessarily this command's user.
        return "the cluster is Kerberized, and the global driver keeps the login it started with"
    return None


def connect(conf_dir: Path) -> skein.Client | None:
    """A client of the global driver when it serves ``conf_dir`` and answers; else None."""
    if why_not(conf_dir) is not None:
        return None
    found = recorded()
    if found is None:
        return None
    try:
        return skein.Client(address=found[0])
    except (skein.exceptions.ConnectionError, skein.exceptions.DriverError, OSError):
        return None
