import json

from appmaster.executor.runtimes import pytorch_command, pytorch_env, tensorflow_env

VIEW = {"chief": ["h0:1000"], "worker": ["h1:1001", "h2:1002"], "ps": ["h3:1003"], "evaluator": ["h4:1004"]}


def test_tf_config_lists_every_server_but_not_the_evaluator():
    cfg = json.loads(tensorflow_env("worker", 1, VIEW)["TF_CONFIG"])
    assert cfg == {"cluster": {"chief": ["h0:1000"], "worker": ["h1:1001", "h2:1002"], "ps": ["h3:1003"]},
                   "task": {"type": "worker", "index": 1}}


def test_the_evaluator_knows_itself_but_is_not_in_the_cluster():
    cfg = json.loads(tensorflow_env("evaluator", 0, VIEW)["TF_CONFIG"])
    assert cfg["task"] == {"type": "evaluator", "index": 0}
    assert "evaluator" not in cfg["cluster"]


def test_pytorch_env_is_what_torchrun_sets_for_one_process_per_container():
    env = pytorch_env(1, {"worker": ["a:29500", "b:29501"]}, nproc=1)
    assert env == {"MASTER_ADDR": "a", "MASTER_PORT": "29500", "RANK": "1", "WORLD_SIZE": "2",
                   "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "GROUP_RANK": "1", "NODE_RANK": "1",
                   "ROLE_RANK": "1", "ROLE_WORLD_SIZE": "2"}


def test_several_processes_go_through_torchrun_with_c10d_on_rank_0():
    view = {"worker": ["a:29500", "b:29501"]}
    env = pytorch_env(0, view, nproc=4)
    assert "RANK" not in env and env["NODE_RANK"] == "0"  # torchrun sets per-process ranks
    cmd = pytorch_command(["python3", "train.py", "--lr", "1"], 1, view, 4, "app_7")
    assert cmd == ["python", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=4", "--node-rank=1",
                   "--rdzv-backend=c10d", "--rdzv-endpoint=a:29500", "--rdzv-id=app_7", "train.py", "--lr", "1"]
    assert pytorch_command(["./run.sh"], 0, view, 2, "x")[-2:] == ["--no-python", "./run.sh"]
    assert pytorch_command(["python", "-m", "pkg.train"], 0, view, 2, "x")[-2:] == ["-m", "pkg.train"]
    assert pytorch_command(["python", "t.py"], 0, view, 1, "x") == ["python", "t.py"]


def test_threads_follow_the_containers_vcores_split_among_its_processes():
    from appmaster.executor.runtimes import thread_env

    assert thread_env({"SKEIN_RESOURCE_VCORES": "8"}, 1) == {"OMP_NUM_THREADS": "8"}
    assert thread_env({"SKEIN_RESOURCE_VCORES": "8"}, 2) == {"OMP_NUM_THREADS": "4"}
    assert thread_env({"SKEIN_RESOURCE_VCORES": "1"}, 4) == {"OMP_NUM_THREADS": "1"}  # never 0
    assert thread_env({"SKEIN_RESOURCE_VCORES": "8", "OMP_NUM_THREADS": "3"}, 1) == {}  # the user's wins
    assert thread_env({}, 1) == {}  # not in a skein container: nothing to go by
