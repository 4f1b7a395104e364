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
