"""The frameworks tfyarn runs, one object each, and how to find one by its name.

``get(job.framework)`` answers every framework question (roles, rules,
default commands, processes per container, the task's environment and
command, the reserved port) for the spec, the plan and the executor alike.
"""

from __future__ import annotations

from tfyarn.frameworks.base import ClusterView, Framework
from tfyarn.frameworks.none import NONE
from tfyarn.frameworks.pytorch import PYTORCH
from tfyarn.frameworks.tensorflow import TENSORFLOW

__all__ = ["ClusterView", "ENV_NAMES", "Framework", "KNOWN_ROLES", "NAMES", "NONE", "PYTORCH", "TENSORFLOW", "get"]

_BY_NAME: dict[str, Framework] = {f.name: f for f in (NONE, TENSORFLOW, PYTORCH)}
NAMES: tuple[str, ...] = tuple(_BY_NAME)  # none, tensorflow, pytorch: the order users see them in
# Every role some framework gives meaning to, in the CLI's order (chief, worker, ps, evaluator).
KNOWN_ROLES: tuple[str, ...] = tuple(dict.fromkeys(r for f in (TENSORFLOW, NONE, PYTORCH) for r in f.roles))
# Every variable some framework sets in a task (TF_CONFIG, torchrun's MASTER_ADDR, RANK, ...).
ENV_NAMES: tuple[str, ...] = tuple(dict.fromkeys(n for f in _BY_NAME.values() for n in f.env_names))


def get(name: str) -> Framework:
    """The framework called ``name``; a spec checks the name first, so an unknown one is a bug here."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no framework {name!r}; frameworks are {', '.join(NAMES)}") from None
