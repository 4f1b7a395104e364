"""--placement and --exclude-node against the real ResourceManager's node names."""
from __future__ import annotations

from tests.integration.conftest import app_id_from, status_json, tfyarn
from tests.integration.nodes import NODE2, two_nodes  # noqa: F401


def test_an_unknown_excluded_node_is_refused_naming_the_clusters_nodes(two_nodes):
    res = tfyarn("submit", "--exclude-node", "no-such-node", "--", "python", "-c", "pass")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--exclude-node" in res.stderr and "no-such-node" in res.stderr
    assert "localhost" in res.stderr and NODE2 in res.stderr  # the names to use instead
    assert "application_" not in res.stdout + res.stderr  # nothing submitted


def test_an_excluded_node_gets_no_task_even_when_spreading(two_nodes, yarn_apps):
    res = tfyarn("submit", "--placement", "spread", "--exclude-node", NODE2, "--num-workers", "2",
                 "--worker-memory", "256m", "--name", "it-exclude", "--wait", "--", "python", "-c", "pass")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert [t["host"] for t in status_json(app)["tasks"]] == ["localhost", "localhost"]


def test_spread_puts_two_workers_on_two_nodes(two_nodes, yarn_apps):
    res = tfyarn("submit", "--placement", "spread", "--num-workers", "2", "--worker-memory", "256m",
                 "--name", "it-spread", "--wait", "--", "python", "-c", "pass")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(t["host"] for t in status_json(app)["tasks"]) == [NODE2, "localhost"]
