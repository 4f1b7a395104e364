"""Placement: the plan's per-node services, assign (first containers), choose (restarts), the AM's Placer."""
from __future__ import annotations

import pytest

from appmaster.am.placing import Placer
from appmaster.am.tasks import TaskTable
from tfyarn import placement, protocol
from tfyarn.errors import SpecError
from tfyarn.plan import PlanContext, plan
from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState

GiB = 1024


def node(host: str, mem: int = 16 * GiB, gpus: int = 4, state: str = "RUNNING") -> NodeCapacity:
    return NodeCapacity(f"{host}:8041", mem, 16, gpus, state, free_memory_mb=mem, free_vcores=16, free_gpus=gpus)


def ps_job(workers: int = 2, mode: str = "spread", exclude: tuple[str, ...] = (), restart: str = "never") -> JobSpec:
    roles = {
        "chief": RoleSpec("chief", instances=1, memory_mb=GiB),
        "ps": RoleSpec("ps", instances=1, memory_mb=GiB),
        "worker": RoleSpec("worker", instances=workers, memory_mb=GiB, gpus=1, restart_policy=restart),
    }
    return JobSpec(name="j", command=("python", "t.py"), roles=roles, framework="tensorflow",
                   placement=mode, exclude_nodes=exclude).validate()


NODES = [node("localhost"), node("127.0.0.2"), node("127.0.0.3")]
HOSTS = ("localhost", "127.0.0.2", "127.0.0.3")


def test_spread_puts_each_roles_tasks_on_distinct_nodes_starting_from_the_ams():
    where = placement.assign(ps_job(workers=3), NODES, HOSTS, "spread", home="127.0.0.2")
    assert where[("chief", 0)] == where[("ps", 0)] == "127.0.0.2"
    assert {where[("worker", i)] for i in range(3)} == set(HOSTS)
    assert where[("worker", 0)] == "127.0.0.2"


def test_spread_wraps_round_when_a_role_has_more_tasks_than_nodes():
    where = placement.assign(ps_job(workers=4), NODES[:2], HOSTS[:2], "spread", home="localhost")
    hosts = [where[("worker", i)] for i in range(4)]
    assert sorted(hosts) == ["127.0.0.2", "127.0.0.2", "localhost", "localhost"]


def test_pack_fills_the_ams_node_first_and_moves_on_when_it_is_full():
    small = [node("localhost", mem=3 * GiB), node("127.0.0.2")]
    where = placement.assign(ps_job(workers=2), small, ("localhost", "127.0.0.2"), "pack", home="localhost")
    assert [where[k] for k in [("chief", 0), ("ps", 0), ("worker", 0)]] == ["localhost"] * 3
    assert where[("worker", 1)] == "127.0.0.2"


def test_gpus_decide_too_and_a_task_that_fits_nowhere_is_left_to_yarn():
    tight = [node("localhost", gpus=1), node("127.0.0.2", gpus=0)]
    where = placement.assign(ps_job(workers=2), tight, ("localhost", "127.0.0.2"), "spread", home="localhost")
    assert where[("worker", 0)] == "localhost" and where[("worker", 1)] == ""


def test_only_running_allowed_nodes_count():
    nodes = [node("localhost", state="LOST"), node("127.0.0.2"), node("127.0.0.3")]
    where = placement.assign(ps_job(), nodes, ("localhost", "127.0.0.2"), "spread", home="localhost")
    assert set(where.values()) == {"127.0.0.2"}


def test_choose_avoids_lost_nodes_and_falls_back_to_any_node():
    role = ps_job().roles["worker"]
    assert placement.choose(role, NODES, HOSTS, "spread", {"localhost"}, {"127.0.0.2": 1}) == "127.0.0.3"
    assert placement.choose(role, NODES, HOSTS, "yarn", {"localhost", "127.0.0.3"}, {}) == "127.0.0.2"
    assert placement.choose(role, NODES, HOSTS, "spread", set(HOSTS), {}) == ""
    assert placement.choose(role, None, HOSTS, "spread", (), {}) == ""


def test_plan_declares_a_strict_service_per_role_and_node_and_yarn_placement_keeps_its_instances():
    """Under YARN's placement they serve restarts (placed away from a lost node): a role that restarts."""
    ctx = PlanContext(python="/py", nodes=("localhost", "127.0.0.2"))
    app = plan(ps_job(mode="yarn", restart="on-failure"), ctx)
    assert app.services["worker"].instances == 2 and app.services["worker"].nodes == []
    svc = app.services["worker@127.0.0.2"]
    assert svc.instances == 0 and svc.nodes == ["127.0.0.2"] and not svc.relax_locality
    assert 'worker.log" 2>&1' in svc.script  # its log keeps the role's name
    assert app.master.env[protocol.ENV_NODE_HOSTS] == "localhost,127.0.0.2"


def test_spread_plans_no_container_of_its_own_and_excluded_nodes_get_no_service():
    ctx = PlanContext(python="/py", nodes=("localhost",))
    app = plan(ps_job(mode="spread", exclude=("127.0.0.2",)), ctx)
    assert app.services["worker"].instances == 0
    assert app.services["worker"].nodes == ["localhost"] and not app.services["worker"].relax_locality
    assert "worker@localhost" in app.services and not any("127.0.0.2" in s for s in app.services)


def test_under_yarns_placement_a_job_that_never_restarts_gets_no_service_per_node():
    """They would only slow skein's submit (a service each, with no container to ask for)."""
    app = plan(ps_job(mode="yarn"), PlanContext(python="/py", nodes=("localhost", "127.0.0.2")))
    assert set(app.services) == {"chief", "ps", "worker"} and protocol.ENV_NODE_HOSTS not in app.master.env
    assert app.services["worker"].instances == 2
    for restart in ("on-failure", "all"):
        assert "worker@127.0.0.2" in plan(ps_job(mode="yarn", restart=restart),
                                          PlanContext(python="/py", nodes=("localhost", "127.0.0.2"))).services


def test_a_one_node_cluster_plans_as_before():
    app = plan(ps_job(mode="yarn"), PlanContext(python="/py", nodes=("localhost",)))
    assert set(app.services) == {"chief", "ps", "worker"} and protocol.ENV_NODE_HOSTS not in app.master.env


@pytest.mark.parametrize("bad", [("has space",), ("-x",), ("",)])
def test_exclude_nodes_must_be_host_names(bad):
    with pytest.raises(SpecError, match="exclude_nodes"):
        ps_job(exclude=bad)


def test_an_unknown_placement_is_refused():
    with pytest.raises(SpecError, match="placement: 'random' is not one of yarn, spread, pack"):
        ps_job(mode="random")


def test_the_am_avoids_a_node_where_a_container_was_lost(monkeypatch):
    spec = ps_job(mode="spread")
    env = {protocol.ENV_NODE_HOSTS: "localhost,127.0.0.2", protocol.ENV_RM_WEB: "http://rm", protocol.ENV_NM_HOST: "localhost"}
    placer = Placer.from_env(spec, env)
    monkeypatch.setattr("tfyarn.rmnodes.fetch_nodes", lambda *a, **k: NODES[:2])
    table = TaskTable.for_job(spec)
    first = placer.initial(table)
    assert first["chief:0"] == "chief@localhost" and first["worker:1"] == "worker@127.0.0.2"
    lost = next(t for t in table.tasks if t.name == "worker:1")
    lost.host, lost.state = "127.0.0.2", TaskState.FAILED  # no exit record: the node went away
    placer.note_failure(lost)
    assert placer.restart_service(lost, table) == "worker@localhost"
    crashed = next(t for t in table.tasks if t.name == "worker:0")
    crashed.host, crashed.state, crashed.exit_code = "localhost", TaskState.FAILED, 1
    placer.note_failure(crashed)  # the command failed: the node is not to blame
    assert placer.lost_hosts == {"127.0.0.2"}
    assert placer.restart_service(crashed, table) == "worker@localhost"  # back where its peers know it


def test_a_restart_goes_back_to_its_node_while_that_node_qualifies():
    role = ps_job().roles["worker"]
    assert placement.choose(role, NODES, HOSTS, "yarn", (), {}, prefer="127.0.0.3") == "127.0.0.3"
    assert placement.choose(role, NODES, HOSTS, "yarn", {"127.0.0.3"}, {}, prefer="127.0.0.3") != "127.0.0.3"
    full = [node("localhost"), node("127.0.0.2", gpus=0)]
    assert placement.choose(role, full, HOSTS[:2], "yarn", (), {}, prefer="127.0.0.2") == "localhost"


def test_a_restart_skips_a_node_whose_nodemanager_does_not_answer(monkeypatch):
    """The RM lists a dead node RUNNING until its expiry; the AM asks the node itself."""
    import socket

    from appmaster.am import placing

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        alive = f"127.0.0.1:{listening.getsockname()[1]}"
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            dead = f"127.0.0.1:{closed.getsockname()[1]}"  # bound, not listening: refused
        assert placing.answers(alive) and not placing.answers(dead) and placing.answers("")
        from dataclasses import replace

        nodes = [replace(NODES[0], http_address=dead), replace(NODES[1], http_address=alive)]
        monkeypatch.setattr("tfyarn.rmnodes.fetch_nodes", lambda *a, **k: nodes)
        spec = ps_job(mode="yarn")
        env = {protocol.ENV_NODE_HOSTS: "localhost,127.0.0.2", protocol.ENV_RM_WEB: "http://rm"}
        placer = Placer.from_env(spec, env)
        table = TaskTable.for_job(spec)
        worker = next(t for t in table.tasks if t.name == "worker:0")
        placer.last_host[worker.name] = "localhost"  # it ran there, its process was killed
        assert placer.restart_service(worker, table) == "worker@127.0.0.2"
        assert placer.lost_hosts == {"localhost"}
