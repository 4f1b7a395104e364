"""Which physical GPUs a container may use, and how busy they are.

YARN's GPU plugin assigns devices only under the LinuxContainerExecutor
with cgroups; then the NodeManager's REST resource endpoint lists each
container's devices. Under Docker, NVIDIA_VISIBLE_DEVICES names them.
Elsewhere (the DefaultContainerExecutor, as on the local cluster) YARN
counts GPUs but binds none, and tfyarn's AM binds them itself: it gives
its own containers on each node disjoint devices from the node's list
(DevicePool). That fallback cannot see other applications' containers.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from tfyarn import protocol
from tfyarn.rest import fetch_json

GPU_RESOURCE_PATH = "/ws/v1/node/resources/yarn.io%2Fgpu"


def node_gpu_info(node_http_address: str) -> dict[str, Any] | None:
    return fetch_json(f"http://{node_http_address}{GPU_RESOURCE_PATH}")


def node_devices(info: dict[str, Any] | None) -> list[int]:
    """The node's GPU minor numbers as its NodeManager discovered them."""
    gpus = ((info or {}).get("gpuDeviceInformation") or {}).get("gpu") or []
    return sorted(int(g["minor_number"]) for g in gpus if "minor_number" in g)


def yarn_assigned(info: dict[str, Any] | None, yarn_container_id: str) -> list[int] | None:
    """Devices YARN itself bound to the container, or None when YARN binds none."""
    found = [int(d["minorNumber"]) for d in (info or {}).get("assignedGpuDevices") or []
             if d.get("containerId") == yarn_container_id]
    return sorted(found) or None


def yarn_busy(info: dict[str, Any] | None) -> set[int]:
    """Devices YARN bound to any container on the node (never handed out by the fallback)."""
    return {int(d["minorNumber"]) for d in (info or {}).get("assignedGpuDevices") or []}


def docker_assigned(env: dict[str, str]) -> list[int] | None:
    """NVIDIA_VISIBLE_DEVICES as the NVIDIA container runtime sets it, when it lists indices."""
    value = env.get("NVIDIA_VISIBLE_DEVICES", "").strip()
    if not value or value in ("all", "none", "void"):
        return None
    parts = [p.strip() for p in value.split(",")]
    return [int(p) for p in parts] if all(p.isdigit() for p in parts) else None


@dataclass
class DevicePool:
    """The AM's fallback binding: per node, which devices its tasks hold."""

    held: dict[str, dict[int, str]] = field(default_factory=dict)  # host -> device -> task name

    def bind(self, host: str, task: str, count: int, devices: list[int],
             busy: Collection[int] = frozenset()) -> list[int]:
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


def cuda_env(devices: list[int]) -> dict[str, str]:
    """What a process needs to see exactly ``devices``, numbered as nvidia-smi numbers them.

    With several processes per container (torchrun), local rank i uses the
    i-th of them: ``torch.cuda.set_device(LOCAL_RANK)``.
    """
    ids = ",".join(str(d) for d in devices)
    return {"CUDA_VISIBLE_DEVICES": ids, "CUDA_DEVICE_ORDER": "PCI_BUS_ID", protocol.ENV_GPUS: ids}


def telemetry(devices: list[int]) -> list[dict[str, Any]] | None:
    """Utilisation and memory of ``devices`` through NVML, or None where NVML is absent."""
    if not devices:
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # no driver, no GPU, no bindings: degrade silently
        return None
    try:
        out = []
        for d in devices:
            h = pynvml.nvmlDeviceGetHandleByIndex(d)
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            out.append({"index": d, "util_pct": util.gpu, "mem_used_mib": mem.used // 2**20,
                        "mem_total_mib": mem.total // 2**20})
        return out
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
