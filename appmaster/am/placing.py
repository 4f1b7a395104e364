"""The AM's side of placement: which skein service each container request names.

The plan declares a ``<role>@<host>`` service per role and allowed node
(tfyarn.placement) on multi-node clusters. With ``placement: yarn`` skein
asks for the gang's first containers itself and YARN places them; with
spread or pack the AM asks for each one from the node ``assign`` picks.
Every restart asks from a node ``choose`` picks: RUNNING, allowed, with
room, and not one where a container of the job was lost or failed to start.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

from appmaster.am.tasks import Task, TaskTable
from tfyarn import logfmt, placement, protocol, rmnodes
from tfyarn.spec import JobSpec

log = logging.getLogger(logfmt.AM_LOGGER)


def answers(http_address: str, timeout_s: float = 2.0) -> bool:
    """Whether a NodeManager's web server answers at all (any HTTP status counts); True if unknown."""
    host, _, port = http_address.rpartition(":")
    if not (host and port.isdigit()):
        return True
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return True
    except OSError:
        return False


class Placer:
    def __init__(self, spec: JobSpec, hosts: tuple[str, ...], rm_web: str, home: str):
        self.spec, self.hosts, self.rm_web, self.home = spec, hosts, rm_web, home
        self.lost_hosts: set[str] = set()  # where a container of the job was lost or never started
        self.targets: dict[str, str] = {}  # task name -> the host its pending request names
        self.last_host: dict[str, str] = {}  # task name -> where its last container ran

    @classmethod
    def from_env(cls, spec: JobSpec, env: Mapping[str, str] = os.environ) -> Placer:
        hosts = tuple(h for h in env.get(protocol.ENV_NODE_HOSTS, "").split(",") if h)
        return cls(spec, hosts, env.get(protocol.ENV_RM_WEB, ""), env.get(protocol.ENV_NM_HOST, ""))

    @property
    def places_initial(self) -> bool:
        """Whether the AM asks for the gang's first containers (else skein did, from the spec)."""
        return self.spec.placement != placement.YARN

    def _service(self, role: str, host: str) -> str:
        return placement.node_service(role, host) if host and host in self.hosts else role

    def _nodes(self) -> list[rmnodes.NodeCapacity] | None:
        return rmnodes.fetch_nodes(self.rm_web) if self.rm_web and self.hosts else None

    def initial(self, table: TaskTable) -> dict[str, str]:
        """Task name -> the service to ask its first container from."""
        nodes = self._nodes()
        where = placement.assign(self.spec, nodes or [], self.hosts, self.spec.placement, self.home)
        services = {t.name: self._service(t.role, where.get((t.role, t.index), "")) for t in table.tasks}
        log.info(
            f"placement {self.spec.placement}: "
            + ", ".join(f"{t.name} on {where.get((t.role, t.index)) or 'any node'}" for t in table.tasks)
        )
        return services

    def note_failure(self, task: Task) -> None:
        """A container that ended without the executor's exit record (lost node, failed launch,
        killed by YARN) marks its node: the job's restarts go elsewhere while they can."""
        if task.host:
            self.last_host[task.name] = task.host
        if task.exit_code is None and task.host and task.host not in self.lost_hosts:
            self.lost_hosts.add(task.host)
            log.warning(f"{task.name}'s container on {task.host} ended without an exit record; restarts avoid it")

    def restart_service(self, task: Task, table: TaskTable) -> str:
        """The service to ask ``task``'s next container from."""
        if not self.hosts:
            return task.role
        spread = self.spec.placement == placement.SPREAD
        counts: dict[str, int] = {}
        for t in table.tasks:
            host = t.host or self.targets.get(t.name, "")  # requested, not yet allocated: where it will go
            if host and t is not task and not t.state.is_terminal() and (t.role == task.role or not spread):
                counts[host] = counts.get(host, 0) + 1
        role = self.spec.roles[task.role]
        nodes = self._nodes()
        while True:
            host = placement.choose(
                role,
                nodes,
                self.hosts,
                self.spec.placement,
                self.lost_hosts,
                counts,
                self.home,
                prefer=self.last_host.get(task.name, ""),
            )
            node = next((n for n in nodes or [] if n.host == host), None)
            if node is None or answers(node.http_address):
                break
            # The RM still lists it RUNNING until its expiry (minutes on real clusters): its
            # NodeManager not answering is the earlier sign that a restart there would be lost too.
            self.lost_hosts.add(host)
            log.warning(f"{host}'s NodeManager does not answer at {node.http_address}; restarts avoid it")
        self.targets[task.name] = host
        log.info(f"{task.name} restarts on {host or 'any node YARN picks'}")
        return self._service(task.role, host)
