"""Docker in the spec and the plan: checks, the executor runtime's `docker run`, YARN's runtime variables.

The real engine runs in tests/integration/test_docker.py; the `yarn` runtime
cannot run on the local cluster (no native container-executor on Maven
Central), so its plan is pinned here as a golden dry run.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tfyarn import docker
from tfyarn.cli.main import cli
from tfyarn.docker import DockerTask, check_image, check_mount, passed_names, resolve_runtime, run_argv
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec, RoleSpec

GOLDEN = Path(__file__).parent / "golden" / "docker_yarn_runtime.txt"
NO_CLUSTER = {"HADOOP_CONF_DIR": "/nonexistent", "TFYARN_CLUSTER_DIR": "/nonexistent"}


@pytest.mark.parametrize("ref", ["tfyarn-tf", "tfyarn-tf:2.21", "registry.example:5000/team/tf:cpu-1.0",
                                 "tf@sha256:" + "a" * 64, "a__b/c-d.e:x"])
def test_image_references_docker_takes(ref):
    assert check_image(ref, "docker_image") == ref


@pytest.mark.parametrize("ref", ["TF", "tf:", "-tf", "tf tf", "tf;rm", "/tf", "tf//x", "tf@sha256:abc", 7])
def test_image_references_docker_refuses(ref):
    with pytest.raises(SpecError, match="docker_image"):
        check_image(ref, "docker_image")


@pytest.mark.parametrize("text,parts", [("/a:/b", ("/a", "/b", "rw")), ("/a:/b:ro", ("/a", "/b", "ro"))])
def test_mounts(text, parts):
    assert check_mount(text, "m") == parts


@pytest.mark.parametrize("text", ["a:/b", "/a", "/a:/b:rx", "/a:/b,/c:/d", "/a b:/b", "/a:b"])
def test_bad_mounts_are_named(text):
    with pytest.raises(SpecError, match="is not SRC:DST"):
        check_mount(text, "docker_mounts[0]")


def spec(**kw) -> JobSpec:
    roles = {"worker": RoleSpec("worker", 2, memory_mb=1024, vcores=2, docker_image=kw.pop("worker_image", ""))}
    return JobSpec(name="j", command=("python", "train.py"), roles=roles, **kw).validate()


def test_a_roles_image_wins_over_the_jobs():
    assert spec(docker_image="tf").image_for("worker") == "tf"
    assert spec(docker_image="tf", worker_image="torch").image_for("worker") == "torch"
    assert spec().image_for("worker") == ""


@pytest.mark.parametrize("kw,msg", [
    ({"docker_runtime": "podman"}, "docker_runtime: 'podman' is not one of auto, executor, yarn"),
    ({"docker_env": {"PATH": "/x"}}, "docker_env: PATH is set inside the image"),
    ({"docker_env": {"1A": "x"}}, "docker_env: '1A' is not a valid environment variable name"),
    ({"docker_mounts": ("data:/data",)}, "docker_mounts[0]"),
])
def test_bad_docker_keys_are_named(kw, msg):
    with pytest.raises(SpecError) as e:
        spec(**kw)
    assert msg in str(e.value)


def test_run_argv_limits_mounts_and_passes_values_by_name_only():
    task = DockerTask(image="tf:1", name="tfyarn-container_1_0001_01_000002", workdir="/nm/c2", memory_mb=1024,
                      vcores=2, gpus=(2, 3), user="1000:1000", mounts=("/data:/data:ro",), env={"SECRET": "s3"})
    argv = run_argv(task, ["python", "train.py"], ["TF_CONFIG", "CUDA_VISIBLE_DEVICES"], docker="/usr/bin/docker")
    text = " ".join(argv)
    assert argv[:4] == ["/usr/bin/docker", "run", "--rm", "--init"]
    assert "--name tfyarn-container_1_0001_01_000002 --network host" in text
    assert "--memory 1024m --memory-swap 1024m --cpus 2" in text
    assert "-v /nm/c2:/nm/c2 -w /nm/c2 --user 1000:1000 -v /data:/data:ro" in text
    assert '--gpus "device=2,3" -e CUDA_VISIBLE_DEVICES=0,1' in text  # renumbered inside
    assert "-e TF_CONFIG" in text and "-e SECRET" in text and "s3" not in text  # values stay off the argv
    assert argv[-3:] == ["tf:1", "python", "train.py"]
    assert docker.run_env(task, {"TF_CONFIG": "{}"}) == {"TF_CONFIG": "{}", "SECRET": "s3"}


def test_tfyarns_own_code_is_mounted_read_only_and_first_on_the_images_path():
    task = DockerTask(image="py", name="n", workdir="/w", memory_mb=512, vcores=1, code_root="/site",
                      pythonpath="/w/lib")
    text = " ".join(run_argv(task, ["python", "x.py"], ["PYTHONPATH", "TF_CONFIG"]))
    assert "-v /site/tfyarn:/opt/tfyarn-node/tfyarn:ro -v /site/appmaster:/opt/tfyarn-node/appmaster:ro" in text
    assert text.count("-e PYTHONPATH") == 1
    env = docker.run_env(task, {"PYTHONPATH": "/node/venv/stdio", "TF_CONFIG": "{}"})
    assert env["PYTHONPATH"] == "/opt/tfyarn-node/appmaster/executor/stdio:/opt/tfyarn-node:/w/lib"


def test_localized_files_are_mounted_where_their_links_point(tmp_path):
    """--file train.py is a symlink into the NodeManager's filecache: the link must resolve in the image."""
    from appmaster.executor.dockertask import localized

    cache, work = tmp_path / "filecache" / "10", tmp_path / "c2"
    cache.mkdir(parents=True)
    work.mkdir()
    (cache / "train.py").write_text("print(1)")
    (work / "train.py").symlink_to(cache / "train.py")
    (work / "own").mkdir()
    (work / "inner").symlink_to(work / "own")  # inside the workdir: already mounted
    (work / "gone").symlink_to(tmp_path / "missing")
    assert localized(str(work)) == (str(cache / "train.py"),)
    task = DockerTask(image="py", name="n", workdir=str(work), memory_mb=512, vcores=1,
                      localized=localized(str(work)))
    assert f"-v {cache}/train.py:{cache}/train.py:ro" in " ".join(run_argv(task, ["python", "train.py"], []))


def test_the_nodes_paths_stay_out_of_the_image():
    env = {"PATH": "/usr/bin", "PYTHONPATH": "/venv/stdio", "JAVA_HOME": "/jdk", "TFYARN_ROLE": "worker",
           "HADOOP_TOKEN_FILE_LOCATION": "/nm/c2/container_tokens", "TF_CONFIG": "{}", "MINE": "1"}
    assert passed_names(env, ["TF_CONFIG", "MINE", "PATH", "ABSENT"]) == [
        "HADOOP_TOKEN_FILE_LOCATION", "MINE", "TFYARN_ROLE", "TF_CONFIG"]


def test_container_names_come_from_the_yarn_container():
    assert docker.container_name("container_e07_1_0001_01_000002") == "tfyarn-container_e07_1_0001_01_000002"


@pytest.mark.parametrize("conf,want", [
    (None, "executor"),
    ({}, "executor"),
    ({"yarn.nodemanager.runtime.linux.allowed-runtimes": "default,docker"}, "executor"),  # no LCE
    ({"yarn.nodemanager.container-executor.class": docker._LCE,
      "yarn.nodemanager.runtime.linux.allowed-runtimes": "default, Docker"}, "yarn"),
])
def test_auto_is_yarn_only_where_the_cluster_allows_its_docker_runtime(conf, want):
    assert resolve_runtime("auto", conf) == want
    assert resolve_runtime("executor", conf) == "executor"


def dry(*args: str):
    return CliRunner().invoke(cli, ["submit", "--dry-run=yarn", "--python-env", "local", *args], env=NO_CLUSTER)


def test_the_dry_run_says_which_image_and_runtime_each_role_uses():
    res = dry("--chief", "--num-ps", "1", "--framework", "tensorflow", "--docker-image", "tfyarn-tf",
              "--ps-docker-image", "tfyarn-base", "--", "python", "train.py")
    assert res.exit_code == 0, res.output
    assert "# chief: 1 x (2048 MiB, 1 vcore(s), 0 GPU(s)) in image tfyarn-tf (executor runtime)" in res.output
    assert "# ps: 1 x (2048 MiB, 1 vcore(s), 0 GPU(s)) in image tfyarn-base (executor runtime)" in res.output
    assert "YARN_CONTAINER_RUNTIME" not in res.output  # the executor runtime asks YARN for nothing special


def test_bad_docker_flags_are_one_error_line():
    res = dry("--docker-mount", "data:/data", "--", "true")
    assert res.exit_code == 2 and res.output.startswith("Error: --docker-mount: 'data:/data' is not SRC:DST")
    res = dry("--worker-docker-image", "Bad Image", "--", "true")
    assert res.exit_code == 2 and "--worker-docker-image: 'Bad Image' is not a Docker image reference" in res.output


def golden_text() -> str:
    """The yarn runtime's plan, as `submit --dry-run` prints it (the AM's encoded spec and paths left out)."""
    env = {**os.environ, **NO_CLUSTER}
    proc = subprocess.run(
        [sys.executable, "-m", "tfyarn", "submit", "--dry-run=yarn", "--python-env", "local", "--framework", "tensorflow",
         "--chief", "--num-workers", "2", "--num-ps", "1", "--docker-runtime", "yarn", "--docker-image",
         "tfyarn-tf:latest", "--chief-docker-image", "team/chief:1", "--docker-mount", "/data:/data:ro",
         "--docker-mount", "/scratch:/scratch", "--", "python", "train.py"],
        capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    comments = [line for line in lines if line.startswith("# ") and "python_env" not in line]
    doc = yaml.safe_load("\n".join(line for line in lines if not line.startswith("#")))
    doc["tags"].sort()  # skein keeps them in a set
    for service in (doc["master"], *doc["services"].values()):
        service["env"].pop("TFYARN_JOB", None)  # the spec itself: tests/unit/test_plan.py
    text = "\n".join(comments) + "\n" + json.dumps(doc, indent=1, sort_keys=True) + "\n"
    return text.replace(sys.executable, "<python>")


def test_the_yarn_runtime_plan_matches_its_golden():
    """Hadoop's DockerLinuxContainerRuntime reads these variables; the image's python starts the executor."""
    text = golden_text()
    assert '"YARN_CONTAINER_RUNTIME_TYPE": "docker"' in text and "exec python -m appmaster.executor" in text
    assert text == GOLDEN.read_text()


if __name__ == "__main__":  # regenerate after an intended change
    GOLDEN.write_text(golden_text())
