"""The history page's server: routes, the front page's GPU and job tables, a saved job's own page."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from tests.unit.test_history import rm, saved
from tfyarn.cli.nodes_cmd import NodeTask, NodeView
from tfyarn.history import entries
from tfyarn.historyweb import HistoryServer, index_html

APP = "application_0_0009"


def nodes() -> list[NodeView]:
    busy = NodeView("node-1", "node-1:8041", "RUNNING", gpus=4, gpus_used=3,
                    tasks=[NodeTask("application_1_0001", "bert", "worker:0", (0, 1)),
                           NodeTask("application_1_0002", "resnet", "worker:1", (3,)),
                           NodeTask("application_1_0002", "resnet", "ps:0")])
    return [busy, NodeView("node-2", "node-2:8041", "LOST", gpus=4)]


def server() -> HistoryServer:
    jobs = entries([rm("application_1_0001")], {APP: saved(APP, state="FAILED")})
    return HistoryServer(lambda: (jobs, nodes(), []), lambda app: saved(APP, "FAILED") if app == APP else None)


def test_the_front_page_shows_who_holds_each_gpu_and_links_every_job():
    jobs = entries([rm("application_1_0001")], {APP: saved(APP)})
    html = index_html(jobs, nodes(), ["the ResourceManager did not answer"], 1000.0)
    row = re.search(r'<tr class="node" data-host="node-1">(.*?)</tr>', html, re.S).group(1)
    assert "<td>3/4</td>" in row
    assert '<a href="job/application_1_0001/">application_1_0001</a> bert, worker:0: 0,1' in row
    assert "resnet, worker:1: 3" in row and "ps:0" not in row  # a task without GPUs holds none
    assert 'data-host="node-2"><td>node-2</td><td>LOST</td><td>0/4</td>' in html
    assert [m for m in re.findall(r'<tr class="job" data-app="([^"]+)">', html)] == ["application_1_0001", APP]
    assert f'<a href="job/{APP}/">' in html and "Warning: the ResourceManager did not answer" in html
    assert re.search(rf'data-app="{APP}">.*<td>HDFS</td></tr>', html) and "<td>RM, HDFS</td>" not in html


def test_routes_render_the_saved_page_its_json_and_metrics():
    s = server()
    code, ctype, body = s.respond(f"/job/{APP}/")
    assert code == 200 and ctype.startswith("text/html")
    assert '<svg id="gantt"' in body.decode() and "FAILED" in body.decode() and 'id="tasks"' in body.decode()
    code, _, body = s.respond(f"/job/{APP}/api/status")
    assert code == 200 and json.loads(body)["app_id"] == APP
    code, _, body = s.respond(f"/job/{APP}/metrics")
    assert code == 200 and "tfyarn_job_state" in {f.name for f in text_string_to_metric_families(body.decode())}
    assert [j["app_id"] for j in json.loads(s.respond("/api/jobs")[2])] == ["application_1_0001", APP]
    assert s.respond("/job/application_9_0001/")[0] == 404 and s.respond("/etc/passwd")[0] == 404
    assert s.respond(f"/job/{APP}/nothing")[0] == 404


def test_over_http_a_job_without_its_slash_is_redirected_and_a_failing_read_is_a_500():
    def broken() -> tuple:
        raise RuntimeError("HDFS down")

    s = server()
    bad = HistoryServer(broken, lambda app: None)
    for srv in (s, bad):
        import threading
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"{s.url}job/{APP}") as r:  # follows the redirect
            assert r.url == f"{s.url}job/{APP}/" and b'id="gantt"' in r.read()
        try:
            urllib.request.urlopen(bad.url)
            raise AssertionError("no error")
        except urllib.error.HTTPError as e:
            assert e.code == 500 and b"RuntimeError: HDFS down" in e.read()
    finally:
        s.close()
        bad.close()
