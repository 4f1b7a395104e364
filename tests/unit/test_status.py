import pytest

from tfyarn.status import JobState, TaskState, job_state


@pytest.mark.parametrize("yarn,final,expected", [
    ("NEW", "UNDEFINED", JobState.SUBMITTED),
    ("ACCEPTED", "UNDEFINED", JobState.ACCEPTED),
    ("RUNNING", "UNDEFINED", JobState.RUNNING),
    ("FINISHED", "SUCCEEDED", JobState.SUCCEEDED),
    ("FINISHED", "FAILED", JobState.FAILED),
    ("FINISHED", "UNDEFINED", JobState.FAILED),
    ("FAILED", "FAILED", JobState.FAILED),
    ("KILLED", "KILLED", JobState.KILLED),
    ("SOMETHING_NEW", "?", JobState.FAILED),
])
def test_yarn_states_map_to_job_states(yarn, final, expected):
    assert job_state(yarn, final) is expected


def test_terminal_states():
    assert {s for s in JobState if s.is_terminal()} == {JobState.SUCCEEDED, JobState.FAILED, JobState.KILLED}
    assert {s for s in TaskState if s.is_terminal()} == {TaskState.SUCCEEDED, TaskState.FAILED, TaskState.KILLED}


# What YARN reported for a job whose worker asked 10 GiB of an 8 GiB scheduler (local cluster, Hadoop 3.5),
# frames cut down to four.
_REAL_DIAGNOSTICS = (
    "Failure in container allocator:\n"
    "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed "
    "allocation. Requested resource type=[memory-mb], Requested resource=<memory:10240, vCores:1>\n"
    "\tat org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils.throwInvalidResourceException"
    "(SchedulerUtils.java:527)\n"
    "\tat org.apache.hadoop.yarn.server.resourcemanager.DefaultAMSProcessor.allocate(DefaultAMSProcessor.java:253)\n"
    "\tat java.base/java.security.AccessController.doPrivileged(AccessController.java:712)\n"
    "\tat org.apache.hadoop.util.concurrent.SubjectInheritingThread.run(SubjectInheritingThread.java:209)\n"
)


def test_diagnostics_lose_java_frames_and_keep_the_message():
    from tfyarn.status import trim_diagnostics

    assert trim_diagnostics(_REAL_DIAGNOSTICS) == (
        "Failure in container allocator:\n"
        "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum "
        "allowed allocation. Requested resource type=[memory-mb], Requested resource=<memory:10240, vCores:1>")


def test_diagnostics_keep_causes_and_drop_jvm_noise():
    from tfyarn.status import trim_diagnostics

    text = ("SLF4J: Class path contains multiple SLF4J bindings.\n"
            "java.io.IOException: boom\n\tat a.B.c(B.java:1)\n"
            "Caused by: java.net.ConnectException: Connection refused\n    at x.Y.z(Y.java:2)\n\t... 12 more\n"
            "For more detailed output, check the application tracking page: http://rm:8088/cluster/app/x\n")
    assert trim_diagnostics(text) == ("java.io.IOException: boom\n"
                                      "Caused by: java.net.ConnectException: Connection refused")
    assert trim_diagnostics("  plain message, no trace  ") == "plain message, no trace"
    assert trim_diagnostics("") == ""


def test_diagnostics_after_an_rm_failover_keep_the_ams_message_on_its_own_line():
    """YARN appends the AM's message to its recovery note with no break (seen on the local HA pair)."""
    from tfyarn.status import trim_diagnostics

    raw = "Attempt recovered after RM restartall 2 worker task(s) succeeded"
    assert trim_diagnostics(raw) == "Attempt recovered after RM restart\nall 2 worker task(s) succeeded"
    assert trim_diagnostics("Attempt recovered after RM restart") == "Attempt recovered after RM restart"
