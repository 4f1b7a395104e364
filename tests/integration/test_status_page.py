"""The job's status page behind YARN's tracking URL, its JSON, the timeline, GPU binding, TensorBoard.

The page is checked in a real headless Chromium (Debian's chromium and
chromedriver, driven by Selenium) through the ResourceManager's proxy.
Screenshots land in build/test-artifacts/.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, hadoop, status_json, tfyarn, wait_for
from tfyarn import protocol

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
SECRET = "tfyarn-test-secret-7f3a9c"  # an --env value that must appear on no page


def browser():  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for exe in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        assert os.path.exists(exe), f"{exe} missing: `make browser` installs Debian's chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def stale_safe(step: Callable[[], Any], attempts: int = 4) -> Any:
    """Run a step that reads the status page again when the page's own refresh (every 5 s) replaced
    what it was reading: on a loaded machine a step can take longer than that."""
    from selenium.common.exceptions import StaleElementReferenceException

    for attempt in range(attempts):
        try:
            return step()
        except StaleElementReferenceException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)


def skein_key_material() -> list[str]:
    """Lines of the client's skein key and certificate: none may show on a page."""
    found = []
    for name in ("skein.pem", "skein.crt"):
        path = Path.home() / ".skein" / name
        if path.exists():
            found += [l for l in path.read_text().splitlines() if l and not l.startswith("-----")][:3]
    return found


def am_listening_addresses(app: str) -> list[tuple[str, str]]:
    """(program, local address) of every TCP socket that the job's Python AM or its TensorBoard listens on."""
    pids = {}
    for name in ("appmaster.am", "tensorboard.main"):
        for pid in job_pids(app, name):
            pids[pid] = name
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        for pid, name in pids.items():
            if f"pid={pid}," in line:
                found.append((name, line.split()[3]))
    return found


def job_pids(app: str, needle: str) -> list[int]:
    marker = app.removeprefix("application_").encode()
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (proc / "environ").read_bytes() and needle.encode() in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def test_status_page_in_chromium_through_the_yarn_proxy(cluster, yarn_apps):
    from selenium.webdriver.common.by import By

    env = {**os.environ, "TFYARN": " ".join(TFYARN),
           "TFYARN_SUBMIT_FLAGS": f"--tensorboard --env TEST_TOKEN={SECRET}"}
    proc = subprocess.Popen(["bash", str(EXAMPLES / "tensorflow/ps_strategy/submit.sh"), "--epochs", "100000",
                             "--model-dir", "/tmp/tfyarn-page-test"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    app = app_id_from(proc.stdout.readline())
    yarn_apps.append(app)
    try:
        def training() -> dict | None:
            doc = status_json(app)
            tasks = doc.get("tasks") or []
            ready = (len(tasks) == 4 and all(t["state"] == "RUNNING" for t in tasks)
                     and (doc.get("tensorboard") or {}).get("state") == "running"
                     and any("first_step" in t["timeline"] for t in tasks)
                     and any(len(((t.get("progress") or {}).get("series") or {}).get("loss", ())) >= 2
                             for t in tasks if t["name"] == "chief:0"))  # the example reports its loss
            return doc if ready else None

        doc = wait_for("training with TensorBoard up", training)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        driver = browser()
        try:
            driver.get(doc["tracking_url"])  # the RM's proxy: skein's overview, which links the page
            driver.find_element(By.ID, "servicePages").click()  # skein's "Service Pages" menu
            wait_for("the menu", lambda: driver.find_element(By.LINK_TEXT, "tfyarn status").is_displayed(),
                     timeout_s=10, every_s=0.5)
            driver.find_element(By.LINK_TEXT, "tfyarn status").click()
            wait_for("the status page", lambda: driver.find_elements(By.ID, "tasks"), timeout_s=30, every_s=0.5)
            assert driver.current_url.startswith(doc["tracking_url"]), driver.current_url  # still the proxy

            def check_page() -> None:  # the page reloads itself every 5 s: read again if it did meanwhile
                rows = driver.find_elements(By.CSS_SELECTOR, "#tasks tr.task")
                seen = {r.get_attribute("data-task"): [c.text for c in r.find_elements(By.TAG_NAME, "td")]
                        for r in rows}
                assert set(seen) == {"chief:0", "worker:0", "worker:1", "ps:0"}, seen
                hosts = {t["name"]: t["host"] for t in doc["tasks"]}  # two nodes: localhost and 127.0.0.2
                for name, cells in seen.items():
                    assert cells[1] == hosts[name] and cells[3] == "RUNNING", cells  # host (its own node), state
                assert set(hosts.values()) <= {"localhost", "127.0.0.2"}, hosts
                # The stage table is folded under the chart: read its cells' text, shown or not.
                stages = [r.get_attribute("textContent")
                          for r in driver.find_elements(By.CSS_SELECTOR, "#timeline td:nth-child(3)")]
                assert {"submitted", "am_started", "allocated", "registered", "rendezvous", "first_step"} <= set(stages)
                # The Gantt chart: a labelled row per task, drawn (Chromium lays the SVG out), each task with its
                # phases and the running ones with a training bar.
                chart = driver.find_element(By.ID, "gantt")
                assert chart.is_displayed() and chart.size["height"] > 5 * 16, chart.size
                labels = [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.label")]
                assert labels == ["job", *(t["name"] for t in doc["tasks"])], labels
                assert len(chart.find_elements(By.CSS_SELECTOR, "rect.bar.training")) == 4
                assert len(chart.find_elements(By.CSS_SELECTOR, "rect.bar.localizing")) == 4
                chart.screenshot(str(ARTIFACTS / "gantt.png"))
                # The chief's loss (tfyarn.report.metric): its newest value and a sparkline of the recent ones.
                metric_rows = [[c.text for c in r.find_elements(By.TAG_NAME, "td")]
                               for r in driver.find_elements(By.CSS_SELECTOR, "#metrics-table tr.metric")]
                assert [r[:2] for r in metric_rows] == [["chief:0", "loss"]], metric_rows
                assert float(metric_rows[0][2]) > 0, metric_rows
                assert driver.find_elements(By.CSS_SELECTOR, "#metrics-table svg.spark polyline"), "no sparkline"
                progress = driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-task="chief:0"] td.progress').text
                assert progress.startswith("step ") and progress.endswith(" ago"), progress
                driver.save_screenshot(str(ARTIFACTS / "status_page.png"))
                # Prometheus text, linked from the page, through the same proxy, read by Prometheus's own parser.
                metrics_url = driver.find_element(By.ID, "metrics").get_attribute("href")
                assert metrics_url == protocol.status_page_url(doc["tracking_url"]) + protocol.API_METRICS, metrics_url
                scraped = subprocess.run(["curl", "-sf", metrics_url], capture_output=True, text=True)
                assert scraped.returncode == 0, scraped.stderr
                families = {f.name: f for f in text_string_to_metric_families(scraped.stdout)}
                tasks = {(s.labels["role"], s.labels["state"]): s.value for s in families["tfyarn_tasks"].samples}
                assert {k: v for k, v in tasks.items() if v} == {("chief", "RUNNING"): 1, ("worker", "RUNNING"): 2,
                                                                 ("ps", "RUNNING"): 1}, tasks
                assert [s.labels["state"] for s in families["tfyarn_job_state"].samples] == ["RUNNING"]
                assert [(s.labels["task"], s.labels["metric"]) for s in families["tfyarn_task_metric"].samples] == [
                    ("chief:0", "loss")]
                assert {s.labels["app_id"] for f in families.values() for s in f.samples} == {app}
                for text in [driver.page_source, json.dumps(doc), scraped.stdout] + [
                        subprocess.run(["curl", "-s",
                                        protocol.status_page_url(doc["tracking_url"]) + protocol.API_STATUS],
                                       capture_output=True, text=True).stdout]:
                    assert SECRET not in text
                    assert "-----BEGIN" not in text
                    for line in skein_key_material():
                        assert line not in text
                    assert "TF_CONFIG" not in text and "TFYARN_JOB" not in text

            stale_safe(check_page)
            stale_safe(lambda: driver.find_element(By.ID, "tensorboard").click())
            # TensorBoard's app, through the proxy, listing the chief's run that the mirror brought over
            wait_for("TensorBoard's page", lambda: driver.title == "TensorBoard"
                     and driver.find_elements(By.TAG_NAME, "tb-webapp"), timeout_s=90, every_s=1)
            tb_url = driver.current_url
            assert "/pages/tensorboard/" in tb_url and tb_url.startswith(doc["tracking_url"])
            # Its data, through the same proxy: the chief's run, mirrored from its container via HDFS.
            wait_for("the chief's run in TensorBoard", lambda: "chief-0" in subprocess.run(
                ["curl", "-s", tb_url.split("#")[0].rstrip("/") + "/data/runs"], capture_output=True,
                text=True).stdout, timeout_s=90, every_s=2)
            driver.save_screenshot(str(ARTIFACTS / "tensorboard.png"))
        finally:
            driver.quit()
        # Reached only through the proxy: the AM's page and TensorBoard listen on loopback alone.
        listening = am_listening_addresses(app)
        assert {"appmaster.am", "tensorboard.main"} <= {who for who, _ in listening}, listening
        assert all(addr.startswith("127.0.0.1:") for _, addr in listening), listening
        chief = hadoop(cluster, "hdfs", "dfs", "-ls", "-R",
                       f"/user/{doc['user']}/.tfyarn/jobs/{app}/{protocol.TENSORBOARD_SUBDIR}/chief-0")
        assert "events.out.tfevents" in chief.stdout, chief.stdout + chief.stderr  # summaries mirrored mid-run
    finally:
        tfyarn("kill", app)
        proc.communicate(timeout=120)


REPORTING_JOB = ("import os, time, tfyarn.report\n"
                 "time.sleep(1)\n"
                 "tfyarn.report.first_step()\n"
                 "print('CVD=[' + os.environ['CUDA_VISIBLE_DEVICES'] + ']', flush=True)\n"
                 "time.sleep(12)\n")


def test_status_json_during_and_after_with_every_timeline_stage(cluster, yarn_apps):
    sub = tfyarn("submit", "--name", "timeline", "--num-workers", "2", "--worker-memory", "512m",
                 "--", "python", "-c", REPORTING_JOB)
    assert sub.returncode == 0, sub.stderr
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)

    def reported() -> dict | None:
        doc = status_json(app)
        tasks = doc.get("tasks") or []
        return doc if tasks and all("first_step" in t["timeline"] for t in tasks) else None

    live = wait_for("both tasks to report their first step", reported, timeout_s=120, every_s=1)
    assert live["state"] == "RUNNING"
    assert all(t["state"] == "RUNNING" for t in live["tasks"])
    wait_for("the job to end", lambda: status_json(app)["state"] == "SUCCEEDED", timeout_s=120)
    after = status_json(app)
    saved = hadoop(cluster, "hdfs", "dfs", "-cat", f"/user/{after['user']}/.tfyarn/jobs/{app}/status.json")
    assert json.loads(saved.stdout)["state"] == "SUCCEEDED"  # `status` after the job reads this copy
    assert [t["state"] for t in after["tasks"]] == ["SUCCEEDED", "SUCCEEDED"]
    for doc in (live, after):
        job = doc["timeline"]
        for t in doc["tasks"]:
            stamps = {**{k: job[k] for k in ("submitted", "am_started")}, **t["timeline"]}
            missing = [s for s in protocol.STAGES if not stamps.get(s)]
            assert not missing, f"{t['name']} lacks {missing}"
            # skein asks for the gang's containers as its AM starts, before the AM's Python stamps
            # am_started, so allocated may come first; every other stage follows the order.
            order = [s for s in protocol.STAGES if s != "am_started"]
            times = [stamps[s] for s in order]
            assert times == sorted(times), dict(zip(order, times))
            assert stamps["submitted"] <= stamps["am_started"] <= stamps["rendezvous"], stamps
            assert times[-1] - times[0] < 120
        assert job["rendezvous"] >= max(t["timeline"]["registered"] for t in doc["tasks"])


def test_gpu_containers_get_distinct_devices_and_cuda_visible_devices_matches_the_page(cluster, yarn_apps):
    sub = tfyarn("submit", "--framework", "tensorflow", "--name", "gpus", "--chief", "--chief-memory", "512m",
                 "--num-workers", "2", "--worker-gpus", "1", "--worker-memory", "512m",
                 "--", "python", "-c", REPORTING_JOB)
    assert sub.returncode == 0, sub.stderr
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)

    def page_gpus() -> dict[str, str] | None:
        doc = status_json(app)
        if not doc.get("tasks") or not all(t["state"] == "RUNNING" and t["gpu_binding"] for t in doc["tasks"]):
            return None
        html = subprocess.run(["curl", "-s", protocol.status_page_url(doc["tracking_url"])],
                              capture_output=True, text=True).stdout
        cells = dict(re.findall(r'data-task="([^"]+)">(?:<td[^>]*>.*?</td>){6}<td[^>]*>([^<(]*)', html))
        return cells if len(cells) == 3 else None

    shown = wait_for("the page to show every task's GPUs", page_gpus, timeout_s=120, every_s=1)
    assert shown["chief:0"].strip() == "none"
    w0, w1 = shown["worker:0"].strip(), shown["worker:1"].strip()
    assert w0.isdigit() and w1.isdigit(), shown
    wait_for("the job to end", lambda: status_json(app)["state"] == "SUCCEEDED", timeout_s=120)
    doc = status_json(app)
    hosts = {t["name"]: t["host"] for t in doc["tasks"]}
    if hosts["worker:0"] == hosts["worker:1"]:  # one node's pool: distinct devices; two nodes: independent
        assert w0 != w1, (shown, hosts)
    for t in doc["tasks"]:
        log = tfyarn("logs", app, "--task", t["name"])
        assert log.returncode == 0, log.stderr
        printed = re.search(r"^CVD=\[(.*)\]$", log.stdout, re.M)
        assert printed, log.stdout
        assert printed.group(1) == ",".join(map(str, t["gpus"]))
        if t["role"] == "chief":
            assert printed.group(1) == "" and t["gpus_asked"] == 0
        else:
            assert printed.group(1) == shown[t["name"]].strip()
            assert t["gpu_binding"] == "tfyarn"  # the DefaultContainerExecutor binds none: the AM's fallback
