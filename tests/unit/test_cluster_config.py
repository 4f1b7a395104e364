"""The local cluster's settings that the issue and Hadoop's quirks require."""
from pathlib import Path

from tfyarn.cluster import ClusterLayout, ClusterOptions
from tfyarn.cluster.config import capacity_scheduler, config_files, yarn_site
from tfyarn.cluster.scripts import render

LAYOUT = ClusterLayout(root=Path("/c"), jar_cache=Path("/j"))


def test_yarn_site_has_the_settings_a_small_loopback_node_needs():
    y = yarn_site(LAYOUT, ClusterOptions(memory_mb=8192, vcores=4, gpus=2))
    assert y["yarn.resourcemanager.hostname"] == "127.0.0.1"
    assert y["yarn.nodemanager.vmem-check-enabled"] == "false"
    assert float(y["yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage"]) > 90
    assert y["yarn.log-aggregation-enable"] == "true"
    assert y["yarn.application.classpath"] == "/c/conf,/j/lib/*"
    assert y["yarn.nodemanager.resource.memory-mb"] == "8192"
    assert y["yarn.nodemanager.resource-plugins"] == "yarn.io/gpu"
    assert y["yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables"] == "/c/gpu-discovery/nvidia-smi"


def test_no_gpu_plugin_without_gpus():
    assert "yarn.nodemanager.resource-plugins" not in yarn_site(LAYOUT, ClusterOptions(gpus=0))
    assert Path("/c/gpu-discovery/nvidia-smi") not in config_files(LAYOUT, ClusterOptions(gpus=0))


def test_two_queues_and_the_dominant_resource_calculator():
    cs = capacity_scheduler()
    assert cs["yarn.scheduler.capacity.root.queues"] == "default,research"
    assert cs["yarn.scheduler.capacity.resource-calculator"].endswith("DominantResourceCalculator")
    total = sum(int(cs[f"yarn.scheduler.capacity.root.{q}.capacity"]) for q in ("default", "research"))
    assert total == 100


def test_all_config_files_are_written_under_conf():
    names = {p.name for p in config_files(LAYOUT, ClusterOptions())}
    assert {"core-site.xml", "hdfs-site.xml", "yarn-site.xml", "capacity-scheduler.xml",
            "resource-types.xml", "log4j.properties", "nvidia-smi"} <= names


def test_yarn_script_keeps_argv0_for_application_only():
    text = render("yarn", LAYOUT)
    assert "application) cls=org.apache.hadoop.yarn.client.cli.ApplicationCLI; ;;" in text
    assert "logs) cls=org.apache.hadoop.yarn.client.cli.LogsCLI; shift; ;;" in text
    assert "classpath) cls=org.apache.hadoop.util.Classpath; shift; ;;" in text
