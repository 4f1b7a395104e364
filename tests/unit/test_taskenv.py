"""The two ways a task learns who it is must agree: from the AM (restarts) and from its own container."""
from tfyarn import protocol, taskenv
from tfyarn.spec import InputSpec, JobSpec, OutputSpec, RoleSpec
from tfyarn.taskenv import StagingPlan


def ps_job() -> JobSpec:
    roles = {"chief": RoleSpec("chief", 1), "worker": RoleSpec("worker", 3), "ps": RoleSpec("ps", 1)}
    return JobSpec(name="j", command=("python", "train.py"), framework="tensorflow", roles=roles,
                   inputs=(InputSpec("hdfs:///data/x"),), outputs=(OutputSpec("./model", "hdfs:///m"),),
                   tensorboard=True).validate()


def test_an_initial_container_derives_exactly_what_the_am_would_pass():
    job = ps_job()
    environ = {protocol.ENV_SKEIN_CONTAINER_ID: "worker_2", protocol.ENV_SKEIN_APP_ID: "application_1_0007",
               protocol.ENV_JOB: protocol.encode_env(job.to_dict()), "USER": "alice"}
    derived = taskenv.from_container(environ)
    assert derived == taskenv.task_env(job, "worker", 2, "application_1_0007")
    assert derived[protocol.ENV_ROLE] == "worker" and derived[protocol.ENV_TASK_INDEX] == "2"
    assert derived[protocol.ENV_NUM_TASKS] == "3"
    assert StagingPlan.from_env(derived[protocol.ENV_STAGING]).shard == (2, 3)  # its slice of the input
    assert derived[protocol.ENV_TENSORBOARD_URI].endswith("/application_1_0007/tensorboard/worker-2")


def test_a_container_the_am_asked_for_keeps_its_variables():
    assert taskenv.from_container({protocol.ENV_ROLE: "worker", protocol.ENV_SKEIN_CONTAINER_ID: "worker_5"}) == {}


def test_role_names_with_underscores_split_at_the_last_one():
    job = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 2)}).validate()
    environ = {protocol.ENV_SKEIN_CONTAINER_ID: "worker_1", protocol.ENV_SKEIN_APP_ID: "a",
               protocol.ENV_JOB: protocol.encode_env(job.to_dict())}
    assert taskenv.from_container(environ)[protocol.ENV_TASK_INDEX] == "1"
    assert taskenv.initial_container_id("worker", 1) == "worker_1"


def test_only_the_output_task_publishes_and_a_restart_keeps_its_address():
    job = ps_job()
    chief = StagingPlan.from_env(taskenv.task_env(job, "chief", 0, "a")[protocol.ENV_STAGING])
    worker = StagingPlan.from_env(taskenv.task_env(job, "worker", 0, "a")[protocol.ENV_STAGING])
    assert len(chief.outputs) == 1 and not worker.outputs and chief.shard is None
    assert taskenv.task_env(job, "ps", 0, "a", "h:1")[protocol.ENV_PREVIOUS_ADDRESS] == "h:1"


def test_a_tensorflow_task_with_gpus_is_one_process_and_gets_all_its_threads():
    """OMP_NUM_THREADS was vcores / GPUs for TF, which runs one process per container."""
    from appmaster.executor.threads import thread_env

    job = JobSpec(name="j", command=("python", "t.py"), framework="tensorflow",
                  roles={"worker": RoleSpec("worker", 2, vcores=4, gpus=2)}).validate()
    env = taskenv.task_env(job, "worker", 0, "application_1_0001")
    assert env[protocol.ENV_NPROC_PER_NODE] == "1"
    nproc = int(env[protocol.ENV_NPROC_PER_NODE])
    assert thread_env({protocol.ENV_SKEIN_VCORES: "4"}, nproc) == {protocol.ENV_OMP_THREADS: "4"}
    torch_job = JobSpec(name="j", command=("python", "t.py"), framework="pytorch",
                        roles={"worker": RoleSpec("worker", 2, vcores=4, gpus=2)}).validate()
    assert taskenv.task_env(torch_job, "worker", 0, "application_1_0001")[protocol.ENV_NPROC_PER_NODE] == "2"
