"""How many threads a task's processes use: the container's vcores, whatever the framework."""

from __future__ import annotations

from collections.abc import Mapping

from tfyarn import protocol


def thread_env(environ: Mapping[str, str], nproc: int) -> dict[str, str]:
    """OMP_NUM_THREADS from the container's vcores, split among its processes, as torchrun does.

    Without it every process sizes its thread pools to the whole node and
    the containers of a node oversubscribe its cores. A value the user set
    (``--env OMP_NUM_THREADS=N``) is kept.
    """
    if protocol.ENV_OMP_THREADS in environ:
        return {}
    try:
        vcores = int(environ.get(protocol.ENV_SKEIN_VCORES, ""))
    except ValueError:
        return {}
    return {protocol.ENV_OMP_THREADS: str(max(1, vcores // max(1, nproc)))}
