"""YARN's GPUs as its REST answers tell them: a resource's GPU count, and a NodeManager's devices.

``GPU`` is the one spelling of YARN's GPU resource type. ``resource_gpus``
reads the count out of any resource record of the RM's or NM's answers
(a node's total or available resource). YARN's GPU plugin assigns devices
only under the LinuxContainerExecutor with cgroups; then the NodeManager's
REST resource endpoint lists each container's devices. Both wings read it:
the executor for its own devices, the AM to bind devices itself where YARN
binds none.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from tfyarn.rest import fetch_json

GPU = "yarn.io/gpu"  # YARN's resource type for GPUs (resource-types.xml, the GPU plugin, container asks)
GPU_RESOURCE_PATH = f"/ws/v1/node/resources/{urllib.parse.quote(GPU, safe='')}"


def resource_gpus(resource: dict[str, Any] | None) -> int:
    """The GPUs in a resource record: ``{"resourceInformations": {"resourceInformation": [...]}}``."""
    infos = ((resource or {}).get("resourceInformations") or {}).get("resourceInformation") or []
    return sum(int(i.get("value", 0)) for i in infos if i.get("name") == GPU)


def node_gpu_info(node_http_address: str) -> dict[str, Any] | None:
    return fetch_json(f"http://{node_http_address}{GPU_RESOURCE_PATH}")


def node_devices(info: dict[str, Any] | None) -> list[int]:
    """The node's GPU minor numbers as its NodeManager discovered them."""
    gpus = ((info or {}).get("gpuDeviceInformation") or {}).get("gpu") or []
    return sorted(int(g["minor_number"]) for g in gpus if "minor_number" in g)


def yarn_assigned(info: dict[str, Any] | None, yarn_container_id: str) -> list[int] | None:
    """Devices YARN itself bound to the container, or None when YARN binds none."""
    found = [
        int(d["minorNumber"])
        for d in (info or {}).get("assignedGpuDevices") or []
        if d.get("containerId") == yarn_container_id
    ]
    return sorted(found) or None


def yarn_busy(info: dict[str, Any] | None) -> set[int]:
    """Devices YARN bound to any container on the node (never handed out by the fallback)."""
    return {int(d["minorNumber"]) for d in (info or {}).get("assignedGpuDevices") or []}
