"""`tfyarn history serve` in Chromium: the GPUs two running jobs hold, then a finished job's own page."""
from __future__ import annotations

import subprocess
import uuid

from tests.integration.conftest import TFYARN, app_id_from, status_json, tfyarn, wait_for
from tests.integration.test_status_page import ARTIFACTS, browser

# Runs until the test lets it end (a file outside /tmp, which node 2's containers have private).
GO = ARTIFACTS / "history-page-go"
SLEEPER = ("import os, time, tfyarn.report\ntfyarn.report.first_step()\nt0 = time.time()\n"
           f"while not os.path.exists({str(GO)!r}) and time.time() - t0 < 300: time.sleep(0.5)\n")


def test_history_page_shows_the_gpus_running_jobs_hold_and_a_finished_jobs_page(cluster, yarn_apps):
    from selenium.webdriver.common.by import By

    marker = f"hist-{uuid.uuid4().hex[:6]}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    GO.unlink(missing_ok=True)
    apps = {}
    for gpus in (1, 2):
        sub = tfyarn("submit", "--name", f"{marker}-{gpus}", "--worker-gpus", str(gpus), "--worker-memory", "256m",
                     "--", "python", "-c", SLEEPER)
        assert sub.returncode == 0, sub.stderr
        apps[gpus] = app_id_from(sub.stdout)
        yarn_apps.append(apps[gpus])
    server = subprocess.Popen([*TFYARN, "history", "serve", "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        assert first.startswith("tfyarn history at http://127.0.0.1:"), first + server.stderr.read()
        url = first.split()[3]

        def bound() -> dict | None:
            docs = {g: status_json(a) for g, a in apps.items()}
            ok = all(d.get("tasks") and all(t["state"] == "RUNNING" and t["gpu_binding"] for t in d["tasks"])
                     for d in docs.values())
            return docs if ok else None

        docs = wait_for("both jobs running with their GPUs bound", bound, timeout_s=120)
        driver = browser()
        try:
            driver.get(url)
            held = " | ".join(r.text for r in driver.find_elements(By.CSS_SELECTOR, "#gpus tr.node"))
            for gpus, app in apps.items():  # each job's worker and its devices, on the node it runs on
                task = docs[gpus]["tasks"][0]
                devices = ",".join(str(d) for d in task["gpus"])
                assert len(task["gpus"]) == gpus
                assert f"{app} {marker}-{gpus}, worker:0: {devices}" in held, held
            used = sum(int(r.find_elements(By.TAG_NAME, "td")[2].text.split("/")[0])
                       for r in driver.find_elements(By.CSS_SELECTOR, "#gpus tr.node"))
            assert used >= 3, held  # the RM's count: these two jobs' 3 GPUs at least
            driver.save_screenshot(str(ARTIFACTS / "history_gpus.png"))

            GO.touch()  # the jobs end now, SUCCEEDED
            for app in apps.values():
                assert tfyarn("wait", app, timeout=180).returncode == 0
            driver.get(url)
            states = {r.get_attribute("data-app"): r.find_elements(By.TAG_NAME, "td")[3].text
                      for r in driver.find_elements(By.CSS_SELECTOR, "#jobs tr.job")}
            assert {states[a] for a in apps.values()} == {"SUCCEEDED"}, states
            driver.find_element(By.CSS_SELECTOR, f'#jobs tr[data-app="{apps[2]}"] a').click()
            wait_for("the job's page", lambda: driver.find_elements(By.ID, "tasks"), timeout_s=30)
            assert driver.current_url == f"{url}job/{apps[2]}/"
            cells = [c.text for c in driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-task="worker:0"]')
                     .find_elements(By.TAG_NAME, "td")]
            host = status_json(apps[2])["tasks"][0]["host"]
            assert (cells[0], cells[1], cells[3], cells[5]) == ("worker:0", host, "SUCCEEDED", "0"), cells
            chart = driver.find_element(By.ID, "gantt")
            assert [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.label")] == ["job", "worker:0"]
            assert chart.find_elements(By.CSS_SELECTOR, "rect.bar.localizing")
            assert "http-equiv" not in driver.page_source  # an ended job's page does not refresh
            driver.save_screenshot(str(ARTIFACTS / "history_job.png"))
        finally:
            driver.quit()
    finally:
        GO.touch()
        server.terminate()
        server.wait(timeout=30)
