"""The AM's own GPU binding, where YARN counts GPUs but binds none.

Under the DefaultContainerExecutor (as on the local cluster) YARN binds no
devices, and tfyarn's AM gives its own containers on each node disjoint
devices from the node's list. That fallback cannot see other applications'
containers.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field


@dataclass
class DevicePool:
    """The AM's fallback binding: per node, which devices its tasks hold."""

    held: dict[str, dict[int, str]] = field(default_factory=dict)  # host -> device -> task name

    def bind(
        self, host: str, task: str, count: int, devices: list[int], busy: Collection[int] = frozenset()
    ) -> list[int]:
        """``count`` free devices of ``devices`` for ``task``; fewer if the node has fewer free."""
        mine = self.held.setdefault(host, {})
        free = [d for d in devices if d not in mine and d not in busy]
        chosen = free[:count]
        for d in chosen:
            mine[d] = task
        return chosen

    def release(self, host: str, task: str) -> None:
        mine = self.held.get(host, {})
        for d in [d for d, t in mine.items() if t == task]:
            del mine[d]
