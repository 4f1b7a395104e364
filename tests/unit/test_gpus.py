"""GPU binding: where a container's devices come from, and the AM's fallback pool."""
from __future__ import annotations

import sys

from appmaster.am.gpus import DevicePool
from appmaster.executor import gpus
from tfyarn import nodegpus

NM_INFO = {"gpuDeviceInformation": {"gpu": [{"minor_number": n} for n in (0, 1, 2, 3)]},
           "assignedGpuDevices": [{"index": 2, "minorNumber": 2, "containerId": "container_9"}]}


def test_devices_yarn_assigned_win_and_are_never_handed_out_again():
    assert nodegpus.node_devices(NM_INFO) == [0, 1, 2, 3]
    assert nodegpus.yarn_assigned(NM_INFO, "container_9") == [2]
    assert nodegpus.yarn_assigned(NM_INFO, "container_8") is None
    pool = DevicePool()
    got = pool.bind("n1", "worker:0", 3, nodegpus.node_devices(NM_INFO), nodegpus.yarn_busy(NM_INFO))
    assert got == [0, 1, 3]


def test_a_resources_gpus_are_its_yarn_gpu_entries_only():
    total = {"memory": 8192, "resourceInformations": {"resourceInformation": [
        {"name": "memory-mb", "value": 8192}, {"name": "vcores", "value": 8}, {"name": nodegpus.GPU, "value": 2}]}}
    assert nodegpus.resource_gpus(total) == 2
    assert nodegpus.resource_gpus({"memory": 8192}) == 0  # a cluster without the GPU resource type
    assert nodegpus.resource_gpus(None) == 0
    assert nodegpus.GPU_RESOURCE_PATH == "/ws/v1/node/resources/yarn.io%2Fgpu"


def test_pool_gives_disjoint_devices_per_node_and_reuses_released_ones():
    pool = DevicePool()
    a = pool.bind("n1", "worker:0", 1, [0, 1, 2, 3])
    b = pool.bind("n1", "worker:1", 1, [0, 1, 2, 3])
    c = pool.bind("n2", "worker:2", 1, [0, 1])
    assert a != b and not set(a) & set(b) and c == [0]
    assert pool.bind("n1", "worker:3", 5, [0, 1, 2, 3]) == [2, 3]  # only what is left
    pool.release("n1", "worker:0")
    assert pool.bind("n1", "worker:4", 1, [0, 1, 2, 3]) == a


def test_docker_visible_devices_only_when_they_are_indices():
    assert gpus.docker_assigned({"NVIDIA_VISIBLE_DEVICES": "1,3"}) == [1, 3]
    for value in ("all", "none", "", "GPU-abc"):
        assert gpus.docker_assigned({"NVIDIA_VISIBLE_DEVICES": value}) is None


def test_cuda_env_empty_for_no_devices_and_pci_order():
    assert gpus.cuda_env([])["CUDA_VISIBLE_DEVICES"] == ""
    env = gpus.cuda_env([2, 0])
    assert env["CUDA_VISIBLE_DEVICES"] == "2,0" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_telemetry_degrades_to_none_without_devices_or_nvml(monkeypatch):
    assert gpus.telemetry([]) is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # the bindings missing: import fails
    assert gpus.telemetry([0]) is None
