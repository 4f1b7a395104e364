"""`tfyarn sweep`'s pure parts: the spec's checks, a trial's job, and the loop with a stand-in client.

Optuna is real (an in-memory study); the jobs are a stand-in whose "training" reports a loss curve
that depends on the trial's learning rate. The cluster run is tests/integration/test_sweep.py.
"""
from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import optuna
import pytest

from tfyarn.errors import SpecError
from tfyarn.status import JobState
from tfyarn.sweep import study as studies
from tfyarn.sweep.runner import Runner
from tfyarn.sweep.spec import SweepSpec
from tfyarn.sweep.trialjob import check, trial_job

JOB = {"framework": "pytorch", "roles": {"worker": {"instances": 1, "memory_mb": 256}},
       "command": ["python", "train.py", "--lr", "{lr}", "--batch-size", "{bs}"],
       "outputs": [{"src": "./model", "dest": "hdfs:///models/{sweep}/{trial}"}]}
SWEEP = {"job": JOB, "objective": {"metric": "val_loss"}, "trials": 8, "parallel": 2, "seed": 1,
         "params": {"lr": {"type": "float", "low": 1e-4, "high": 1.0, "log": True},
                    "bs": {"type": "categorical", "choices": [16, 32]}}}


def spec(**changes: Any) -> SweepSpec:
    return SweepSpec.from_dict({**SWEEP, **changes})


@pytest.mark.parametrize("changes, message", [
    ({"params": {"lr": {"type": "double", "low": 0, "high": 1}}}, "params.lr.type: 'double' is not one of"),
    ({"params": {"lr": {"type": "float", "low": 0, "high": 1, "log": True}}}, "needs low > 0"),
    ({"params": {"lr": {"type": "float", "low": 1, "high": 1}}}, "low (1) must be below high (1)"),
    ({"params": {"lr": {"type": "float", "low": 1e-3, "high": 1, "choices": [1]}}}, "'choices' is not a key"),
    ({"params": {"bs": {"type": "categorical", "choices": []}}}, "params.bs.choices: a non-empty list"),
    ({"params": {"trial": {"type": "int", "low": 1, "high": 3}}}, "not trial or sweep"),
    ({"params": {}}, "params: missing"),
    ({"objective": {"direction": "minimize"}}, "objective: give the metric"),
    ({"objective": {"metric": "loss", "direction": "down"}}, "objective.direction: 'down' is not one of"),
    ({"parallel": 0}, "parallel: a whole number, at least 1"),
    ({"sampler": "grid"}, "params.lr: the grid sampler needs values to enumerate"),
    ({"pruner": "hyperband"}, "pruner: 'hyperband' is not one of median, none"),
    ({"budget": 3}, "unknown sweep key 'budget'"),
    ({"job": "nowhere.yaml"}, "job: no job file"),
])
def test_bad_sweep_specs_get_one_line_naming_the_key(changes, message):  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec(**changes)


def test_every_parameter_must_reach_the_trial_and_every_placeholder_be_a_parameter():
    unused = spec(params={**SWEEP["params"], "wd": {"type": "float", "low": 0.0, "high": 0.1}})
    with pytest.raises(SpecError, match=r"params.wd: never used; put \{wd\} in the job's command"):
        check(unused)
    stray = spec(job={**JOB, "command": [*JOB["command"], "--seed", "{seed}"]})
    with pytest.raises(SpecError, match=r"\{seed\} is in the job template but is no parameter"):
        check(stray)
    check(spec(job={**JOB, "command": [*JOB["command"], "--json", '{"a": 1}', "${HOME}"]}))  # not placeholders
    check(spec(job={**JOB, "command": ["python", "train.py"]}, env={"LR": "{lr}", "BS": "{bs}"}))


def test_a_trial_job_is_the_template_filled_in_and_tagged(tmp_path: Path):
    job = trial_job(spec(env={"LR": "{lr}"}), "sw1", 3, {"lr": 0.00123, "bs": 32})
    assert job.command == ("python", "train.py", "--lr", "0.00123", "--batch-size", "32")
    assert job.env["LR"] == "0.00123"
    assert job.outputs[0].dest == "hdfs:///models/sw1/3"
    assert {"sweep:sw1", "trial:3"} <= set(job.tags) and job.name.endswith("-t3")


# -- the loop --------------------------------------------------------------------------------------------
class Jobs:
    """Stand-in client: each job reports val_loss once per poll, falling to |log10(lr) + 2| (best at lr 0.01)."""

    def __init__(self, epochs: int = 5, fail_when: Any = None, report: bool = True):
        self.jobs: dict[str, dict[str, Any]] = {}
        self.epochs, self.fail_when, self.report_metric = epochs, fail_when, report
        self.killed: list[str] = []
        self.current = ""

    def submit(self, job: Any) -> str:
        app = f"application_1_{len(self.jobs) + 1:04d}"
        lr = float(job.command[job.command.index("--lr") + 1])
        self.jobs[app] = {"lr": lr, "values": [], "state": JobState.RUNNING}
        return app

    def report(self, app: str) -> Any:
        self.current = app  # the runner reads a job's live document right after its report
        j = self.jobs[app]
        if j["state"] == JobState.RUNNING:
            if len(j["values"]) == self.epochs:
                j["state"] = JobState.FAILED if self.fail_when and self.fail_when(j["lr"]) else JobState.SUCCEEDED
            elif self.report_metric:
                epoch = len(j["values"]) + 1
                j["values"].append(abs(math.log10(j["lr"]) + 2) + 1.0 / epoch)
            else:
                j["values"].append(None)
        return SimpleNamespace(state=j["state"], diagnostics="worker:0 failed (exit code 3)")

    def live_doc(self, rep: Any) -> Any:
        return self._doc(self.current)

    def status_doc(self, app: str) -> Any:
        return self._doc(app)

    def _doc(self, app: str) -> Any:
        values = tuple(v for v in self.jobs[app]["values"] if v is not None)
        progress = SimpleNamespace(series={"val_loss": values} if values else {}, counts={"val_loss": len(values)})
        return SimpleNamespace(tasks=[SimpleNamespace(name="worker:0", progress=progress)])

    def kill(self, app: str) -> None:
        self.killed.append(app)
        self.jobs[app]["state"] = JobState.KILLED


def new_study(s: SweepSpec) -> Any:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(direction="minimize", sampler=studies.sampler(s), pruner=studies.pruner(s))


def test_a_sweep_runs_its_trials_two_at_a_time_prunes_and_finds_the_best() -> None:
    s, jobs = spec(trials=12, parallel=2), Jobs()
    study = new_study(s)
    runner = Runner(s, "sw", jobs, study, say=lambda m: None)
    original = jobs.report

    def report(app: str) -> Any:
        assert len(runner.running) <= 2  # never more than `parallel` jobs at once
        return original(app)
    jobs.report = report  # type: ignore[method-assign]
    out = runner.run(poll_s=0)
    assert (out.complete + out.pruned, out.failed, out.stopped) == (12, 0, False)
    assert out.pruned >= 1 and len(jobs.killed) == out.pruned  # a pruned trial's job is killed
    assert len(jobs.jobs) == 12
    best = study.best_trial
    assert 10 ** -3.5 < best.params["lr"] < 10 ** -0.5, best.params  # the curve's best is lr 0.01
    assert best.user_attrs[studies.TRIAL_APP].startswith("application_1_")


def test_failed_trials_do_not_stop_the_sweep_unless_all_fail() -> None:
    s = spec(trials=6, parallel=1, pruner="none", params={"lr": {"type": "float", "low": 1e-4, "high": 1.0,
                                                                 "log": True}, "bs": {"type": "categorical",
                                                                                      "choices": [16]}})
    jobs = Jobs(epochs=2, fail_when=lambda lr: lr > 0.01)
    study = new_study(s)
    out = Runner(s, "sw", jobs, study, say=lambda m: None).run(poll_s=0)
    assert out.complete + out.failed == 6 and out.failed >= 1 and out.complete >= 1
    failed = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert all(t.user_attrs[studies.TRIAL_WHY].startswith("its job FAILED: worker:0 failed") for t in failed)
    everything_fails = Jobs(epochs=1, fail_when=lambda lr: True)
    out = Runner(spec(trials=6, parallel=1, max_failures=2), "sw2", everything_fails, new_study(s),
                 say=lambda m: None).run(poll_s=0)
    assert (out.complete, out.failed) == (0, 2) and "2 trial(s) failed, none completed" in out.messages[0]


def test_a_metric_never_reported_fails_the_trial_saying_so() -> None:
    s = spec(trials=1, parallel=1, max_failures=1)
    jobs = Jobs(epochs=2, report=False)
    study = new_study(s)
    Runner(s, "sw", jobs, study, say=lambda m: None).run(poll_s=0)
    assert study.trials[0].user_attrs[studies.TRIAL_WHY] == (
        "the objective metric 'val_loss' was never reported (tfyarn.report.metric('val_loss', value))")


def stopped_run(s: SweepSpec, jobs: Any, study: Any) -> Any:
    """Run the sweep until its 6th poll, when `sweep stop` marks the study (the first two trials have
    ended, the next two run): the outcome."""
    runner = Runner(s, "sw", jobs, study, say=lambda m: None)
    polls = 0
    original = runner.poll

    def poll() -> None:
        nonlocal polls
        polls += 1
        original()
        if polls == 6:
            study.set_user_attr(studies.STUDY_STOP, True)
    runner.poll = poll  # type: ignore[method-assign]
    return runner.run(poll_s=0)


def test_a_stop_kills_the_running_trials_which_a_resume_runs_again() -> None:
    s = spec(trials=4, parallel=2, pruner="none")
    jobs = Jobs(epochs=3)
    study = new_study(s)
    out = stopped_run(s, jobs, study)
    assert out.stopped and out.complete == 2 and len(jobs.killed) == 2
    study.set_user_attr(studies.STUDY_STOP, False)  # what `sweep resume` does first
    again = Runner(s, "sw", jobs, study, say=lambda m: None).run(poll_s=0)
    assert (again.complete, again.stopped) == (4, False)  # the 2 finished kept, the 2 stopped run again
    assert len(jobs.jobs) == 6


def test_conf_sweep_yaml_documents_every_key_and_loads():
    import yaml as _yaml

    from tfyarn.sweep.spec import _KEYS

    conf = Path(__file__).resolve().parents[2] / "conf" / "sweep.yaml"
    data = _yaml.safe_load(conf.read_text())
    assert tuple(data) == _KEYS
    loaded = SweepSpec.from_dict({**data, "job": JOB, "params": SWEEP["params"]})
    defaults = SweepSpec(job={}, params=(), objective=loaded.objective)
    for key in ("trials", "parallel", "sampler", "pruner", "max_failures", "storage", "seed", "name", "env"):
        assert getattr(loaded, key) == getattr(defaults, key), key


def scheduler_answer(memory: int, vcores: int, gpus: int) -> bytes:
    """The capacity scheduler's /ws/v1/cluster/scheduler, trimmed, as Hadoop 3.5's RM sends it."""
    import json

    infos = [{"name": "memory-mb", "units": "Mi", "value": memory}, {"name": "vcores", "value": vcores},
             {"name": "yarn.io/gpu", "value": gpus}]
    leaf = {"type": "capacitySchedulerLeafQueueInfo", "queueName": "default", "queuePath": "root.default",
            "maxEffectiveCapacity": {"memory": memory, "vCores": vcores,
                                     "resourceInformations": {"resourceInformation": infos}}}
    return json.dumps({"scheduler": {"schedulerInfo": {
        "type": "capacityScheduler", "queueName": "root", "queuePath": "root",
        "queues": {"queue": [leaf]}}}}).encode()


def test_a_parallel_the_queue_cannot_hold_is_warned_with_the_numbers(tmp_path: Path) -> None:
    from tfyarn.rest import FetchError
    from tfyarn.sweep import room
    from tfyarn.sweep.trialjob import sample_job

    job = sample_job(spec(), "s")  # 1 worker of 256 MiB and the AM
    need = room.trial_need(job)
    assert need == room.Need(job.am_container_mb + 256, 2, 0)
    said: list[str] = []
    answer = scheduler_answer(memory=3 * need.memory_mb + 10, vcores=32, gpus=0)
    room.check(2, job, lambda path: ("url", answer), said.append)
    assert said == []  # 3 fit, 2 asked
    room.check(5, job, lambda path: ("url", answer), said.append)
    assert said and "parallel is 5, but queue default holds at most 3 trial(s)" in said[0], said
    assert f"each asks {need.memory_mb} MiB, 2 vcores" in said[0] and "Set parallel: 3" in said[0]
    said.clear()
    room.check(5, job, lambda path: ("url", scheduler_answer(10**6, 4, 0)), said.append)
    assert "holds at most 2 trial(s)" in said[0]  # vcores bind: 4 // 2

    def down(path: str) -> tuple[str, bytes]:
        raise FetchError("connection refused")

    said.clear()
    room.check(5, job, down, said.append)
    assert said[0].startswith("Warning: could not read queue default's capacity") and "not checked" in said[0]
    said.clear()
    room.check(5, job, lambda path: ("url", b'{"scheduler": {"schedulerInfo": {"type": "fifoScheduler"}}}'),
               said.append)
    assert said[0].startswith("Note:") and "not checked" in said[0]  # never a silent pass


def test_dry_run_plans_the_sweep_and_its_first_trial_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import yaml
    from click.testing import CliRunner

    from tfyarn.cli.main import cli

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    conf = tmp_path / "sweep.yaml"
    conf.write_text(yaml.safe_dump({**SWEEP, "name": "plan-me", "job": {**JOB, "python_env": "local"}}))
    res = CliRunner().invoke(cli, ["sweep", "--conf", str(conf), "--dry-run"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "# sweep plan-me: 8 trial(s), 2 at a time, sampler tpe, pruner median; objective: minimize val_loss"
    assert "# param lr: float from 0.0001 to 1 (log scale)" in lines and "# param bs: one of 16, 32" in lines
    assert any("runs: python train.py --lr 0.0001 --batch-size 16" in line for line in lines), res.output
    assert "dest: hdfs:///models/plan-me/0" in res.output  # {sweep} and {trial} filled in
    assert not (tmp_path / "home").exists()  # no study, no saved spec


def test_a_grid_sweep_stopped_and_resumed_covers_its_grid_once_and_the_grid_end_is_no_error() -> None:
    # The grid sampler asks Optuna to stop the study when its grid is covered, which Optuna refuses
    # outside optimize(); and a resume runs the stopped trials' own grid points again.
    grid = {"lr": {"type": "categorical", "choices": [0.001, 0.01, 0.1, 1.0]},
            "bs": {"type": "categorical", "choices": [16]}}
    s = spec(trials=4, parallel=2, pruner="none", sampler="grid", params=grid)
    jobs = Jobs(epochs=3)
    study = new_study(s)
    assert stopped_run(s, jobs, study).stopped
    stopped_lrs = sorted(t.params["lr"] for t in study.trials if t.number in studies.stopped(study))
    assert len(stopped_lrs) == 2
    study.set_user_attr(studies.STUDY_STOP, False)
    assert studies.requeue_stopped(study) == 2
    assert studies.requeue_stopped(study) == 0  # once each
    again = Runner(s, "sw", jobs, study, say=lambda m: None).run(poll_s=0)
    assert (again.complete, again.failed, again.stopped) == (4, 0, False)
    counted = [t for t in study.trials if t.number not in studies.stopped(study)]
    assert sorted(t.params["lr"] for t in counted) == [0.001, 0.01, 0.1, 1.0]  # the grid, each point once
