"""The sweep's loop: keep ``parallel`` trials running as tfyarn jobs until ``trials`` have ended.

Each poll reads every running trial's status document: its objective metric's new values go to
Optuna (``trial.report``, one step per value the script reported), and a trial the pruner gives up
is killed and told PRUNED. A trial whose job ends is told its objective (the metric's last value),
or FAIL with the reason: its job's diagnostics, or that the metric was never reported. A stop (Ctrl-C,
or `sweep stop`, which marks the study) kills the running trials and marks them stopped: they do not
count, and a resume runs them again. The client is tfyarn's (submit, report, live_doc, status_doc,
kill), so a unit test can drive the loop with a stand-in and the integration test with the cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfyarn.status import JobState
from tfyarn.sweep import study as studies
from tfyarn.sweep.spec import SweepSpec
from tfyarn.sweep.trialjob import trial_job
from tfyarn.wire import StatusDoc

POLL_S = 3.0


@dataclass
class Running:
    trial: Any  # optuna.Trial
    app_id: str
    reported: int = 0  # values of the objective metric already handed to Optuna


@dataclass
class Outcome:
    complete: int = 0
    pruned: int = 0
    failed: int = 0
    stopped: bool = False
    messages: list[str] = field(default_factory=list)


def metric_values(doc: StatusDoc | None, metric: str, task: str) -> tuple[int, tuple[float, ...]]:
    """(how many values were reported in all, the recent ones) of ``metric``, from ``task`` or the first
    task that reports it."""
    for t in doc.tasks if doc else ():
        if task and t.name != task:
            continue
        p = t.progress
        if p and metric in p.series:
            return p.counts.get(metric, len(p.series[metric])), p.series[metric]
    return 0, ()


def counted(st: Any) -> tuple[int, int, int]:
    """(complete, pruned, failed) trials of study ``st`` so far; trials a stop killed do not count."""
    import optuna

    s = optuna.trial.TrialState
    gone = studies.stopped(st)
    done = [t for t in st.get_trials(deepcopy=False) if t.number not in gone]
    return (
        sum(t.state == s.COMPLETE for t in done),
        sum(t.state == s.PRUNED for t in done),
        sum(t.state == s.FAIL for t in done),
    )


class Runner:
    def __init__(self, spec: SweepSpec, sweep_id: str, client: Any, study: Any, say: Callable[[str], None] = print):
        self.spec, self.id, self.client, self.study, self.say = spec, sweep_id, client, study, say
        self.running: dict[int, Running] = {}
        self.space = studies.distributions(spec.params)

    def run(self, poll_s: float = POLL_S) -> Outcome:
        """Until ``trials`` trials have ended (or too many failed, or a stop): the outcome."""
        try:
            while True:
                if self.study.user_attrs.get(studies.STUDY_STOP):
                    return self.stop("`tfyarn sweep stop` asked for it")
                complete, pruned, failed = counted(self.study)
                ended = complete + pruned + failed
                limit = self.spec.max_failures or self.spec.trials
                if failed >= limit and not complete:
                    self.stop_all("too many trials failed")
                    return Outcome(complete, pruned, failed, messages=[f"{failed} trial(s) failed, none completed"])
                if ended >= self.spec.trials and not self.running:
                    return Outcome(complete, pruned, failed)
                while len(self.running) < self.spec.parallel and ended + len(self.running) < self.spec.trials:
                    self.start()
                self.poll()
                time.sleep(poll_s)
        except KeyboardInterrupt:
            return self.stop("interrupted (Ctrl-C)")

    def start(self) -> None:
        trial = self.study.ask(self.space)
        job = trial_job(self.spec, self.id, trial.number, trial.params)
        app_id = self.client.submit(job)
        trial.set_user_attr(studies.TRIAL_APP, app_id)
        self.running[trial.number] = Running(trial, app_id)
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in trial.params.items())
        self.say(f"trial {trial.number}: {app_id} ({shown})")

    def poll(self) -> None:
        import optuna

        o = self.spec.objective
        for number, r in list(self.running.items()):
            rep = self.client.report(r.app_id)
            if not rep.state.is_terminal():
                count, recent = metric_values(self.client.live_doc(rep), o.metric, o.task)
                for step in range(max(r.reported, count - len(recent)), count):
                    r.trial.report(recent[step - (count - len(recent))], step)
                r.reported = max(r.reported, count)
                if r.reported and r.trial.should_prune():
                    self.client.kill(r.app_id)
                    studies.tell(self.study, r.trial, state=optuna.trial.TrialState.PRUNED)
                    del self.running[number]
                    self.say(f"trial {number}: pruned at step {r.reported - 1} (median pruner); {r.app_id} killed")
                continue
            del self.running[number]
            doc = self.client.status_doc(r.app_id)
            count, recent = metric_values(doc, o.metric, o.task)
            if rep.state == JobState.SUCCEEDED and recent:
                studies.tell(self.study, r.trial, recent[-1])
                self.say(f"trial {number}: {o.metric} = {recent[-1]:.6g}")
                continue
            why = (
                f"its job {rep.state.value}: {rep.diagnostics}"
                if rep.state != JobState.SUCCEEDED
                else f"the objective metric {o.metric!r} was never reported (tfyarn.report.metric({o.metric!r}, value))"
            )
            r.trial.set_user_attr(studies.TRIAL_WHY, why)
            studies.tell(self.study, r.trial, state=optuna.trial.TrialState.FAIL)
            self.say(f"trial {number}: FAILED: {why}")

    def stop_all(self, why: str) -> None:
        import optuna

        for r in self.running.values():
            self.client.kill(r.app_id)
            r.trial.set_user_attr(studies.TRIAL_WHY, f"stopped: {why}")
        studies.mark_stopped(self.study, list(self.running))
        for r in self.running.values():
            studies.tell(self.study, r.trial, state=optuna.trial.TrialState.FAIL)
        self.running.clear()

    def stop(self, why: str) -> Outcome:
        self.stop_all(why)
        complete, pruned, failed = counted(self.study)
        return Outcome(complete, pruned, failed, stopped=True, messages=[f"sweep {self.id} stopped: {why}"])
