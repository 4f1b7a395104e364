"""Which physical GPUs this container may use, and how busy they are.

YARN binds devices itself under the LinuxContainerExecutor with cgroups
(see tfyarn.nodegpus); under Docker, NVIDIA_VISIBLE_DEVICES names them;
elsewhere the AM binds them (appmaster.am.gpus) and publishes the choice.
"""

from __future__ import annotations

from typing import Any

from tfyarn import protocol


def docker_assigned(env: dict[str, str]) -> list[int] | None:
    """NVIDIA_VISIBLE_DEVICES as the NVIDIA container runtime sets it, when it lists indices."""
    value = env.get("NVIDIA_VISIBLE_DEVICES", "").strip()
    if not value or value in ("all", "none", "void"):
        return None
    parts = [p.strip() for p in value.split(",")]
    return [int(p) for p in parts] if all(p.isdigit() for p in parts) else None


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
            out.append(
                {
                    "index": d,
                    "util_pct": util.gpu,
                    "mem_used_mib": mem.used // 2**20,
                    "mem_total_mib": mem.total // 2**20,
                }
            )
        return out
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
