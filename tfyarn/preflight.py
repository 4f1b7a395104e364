"""Checks at submit time that need the cluster's storage: inputs exist, outputs are free.

They run before anything is submitted, so a typo in a path costs a second,
not a container allocation. Errors name the spec key (the CLI rewords it
to the flag).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from tfyarn import protocol
from tfyarn.errors import SpecError, UnreachableError
from tfyarn.hadoop_env import read_conf
from tfyarn.spec import JobSpec
from tfyarn.storage import Location, StorageUri, locate, parse_uri

_HOW = f"start the local cluster with `tfyarn cluster up`, or check fs.defaultFS in {protocol.ENV_HADOOP_CONF_DIR}"


def namenode_addresses(uri: StorageUri, conf_dir: Path) -> list[tuple[str, int]]:
    """The RPC addresses behind an hdfs:// URI: its host:port, or its (HA) nameservice's NameNodes."""
    authority = uri.authority
    if not authority:
        default = read_conf(conf_dir, "core-site.xml").get("fs.defaultFS", "")
        authority = default.split("://", 1)[1].split("/", 1)[0] if "://" in default else ""
    if not authority:
        return []
    hdfs = read_conf(conf_dir, "hdfs-site.xml")
    names = hdfs.get(f"dfs.ha.namenodes.{authority}")
    if names:  # an HA nameservice
        addrs = [hdfs.get(f"dfs.namenode.rpc-address.{authority}.{n.strip()}", "") for n in names.split(",")]
    else:
        addrs = [authority if ":" in authority else f"{authority}:8020"]
    return [(a.rsplit(":", 1)[0], int(a.rsplit(":", 1)[1])) for a in addrs if ":" in a]


def check_namenode(uri: StorageUri, conf_dir: Path, timeout_s: float = 3.0) -> None:
    """Raise UnreachableError fast when no NameNode of ``uri`` accepts a connection.

    hdfs-native retries a dead NameNode for minutes; a TCP probe answers in seconds.
    """
    addrs = namenode_addresses(uri, conf_dir)
    for host, port in addrs:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError:
            continue
    if addrs:
        where = ", ".join(f"{h}:{p}" for h, p in addrs)
        raise UnreachableError(f"the NameNode of {uri} at {where} is unreachable; {_HOW}")


def _exists(loc: Location) -> bool:
    try:
        return loc.exists()
    except Exception as e:  # hdfs-native and libhdfs raise their own types for a dead NameNode
        raise UnreachableError(
            f"the filesystem of {loc.uri} is unreachable ({type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else 'no answer'}); {_HOW}"
        ) from None


def check_paths(spec: JobSpec, conf_dir: Path | None = None) -> None:
    conf = conf_dir or Path(os.environ.get(protocol.ENV_HADOOP_CONF_DIR, "."))
    uris = [parse_uri(i.src, f"inputs[{n}].src") for n, i in enumerate(spec.inputs)]
    uris += [parse_uri(o.dest, f"outputs[{n}].dest") for n, o in enumerate(spec.outputs)]
    for uri in {u for u in uris if u.scheme == "hdfs"}:
        check_namenode(uri, conf)
    for i, inp in enumerate(spec.inputs):
        loc = locate(parse_uri(inp.src, f"inputs[{i}].src"))
        if not _exists(loc):
            raise SpecError(f"inputs[{i}].src: {loc.uri} does not exist")
    for i, out in enumerate(spec.outputs):
        loc = locate(parse_uri(out.dest, f"outputs[{i}].dest"))
        if _exists(loc) and not spec.overwrite:
            raise SpecError(
                f"outputs[{i}].dest: {loc.uri} already exists; pass --overwrite to replace it or choose another path"
            )
