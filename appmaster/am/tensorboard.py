"""TensorBoard for a job, run by the AM, reading summaries the tasks mirror to HDFS.

Executors mirror each task's $TFYARN_TENSORBOARD_DIR to
``<job dir>/tensorboard/<role>-<index>``; this mirrors that tree down into
the AM container every few seconds, where one TensorBoard reads it. It is
reached through skein's UI proxy at ``pages/tensorboard/``. Every failure
here is reported on the status page and never fails the job.
"""

from __future__ import annotations

import logging
import os
import posixpath
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import skein

from tfyarn import protocol

_log = logging.getLogger("tfyarn.am.tensorboard")

SYNC_S = 5.0
READY_TIMEOUT_S = 120.0


class TensorBoard(threading.Thread):
    def __init__(
        self, app: skein.ApplicationClient, host: str, uri: str, local_dir: str, readers: tuple[str, ...] = ()
    ):
        super().__init__(daemon=True, name="tfyarn-tensorboard")
        self.app, self.host, self.uri, self.local_dir, self.readers = app, host, uri, local_dir, readers
        self.state = "starting"
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopped = threading.Event()

    def info(self) -> dict[str, Any]:
        return {"state": self.state, "uri": self.uri}

    def run(self) -> None:
        try:
            self._start()
        except Exception as e:
            self.state = f"failed: {type(e).__name__}: {e}"
            _log.warning(f"TensorBoard {self.state} (the job goes on)")
            return
        while not self.stopped.wait(SYNC_S):
            self._sync()

    def _start(self) -> None:
        from tfyarn.storage import locate, parse_uri
        from tfyarn.storage.permissions import private_job_dir

        # Before any task mirrors its summaries: the job's dir is its owner's (and readers') alone.
        private_job_dir(locate(parse_uri(posixpath.dirname(self.uri))), self.readers)
        os.makedirs(self.local_dir, exist_ok=True)
        with socket.socket() as s:
            s.bind((self.host, 0))
            port = s.getsockname()[1]
        log = open(os.path.join(os.environ.get(protocol.ENV_LOG_DIRS, ".").split(",")[0], "tensorboard.log"), "ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tensorboard.main",
                "--logdir",
                self.local_dir,
                "--host",
                self.host,
                "--port",
                str(port),
                "--reload_interval",
                str(int(SYNC_S)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            self._sync()
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited with code {self.proc.returncode} (see tensorboard.log)")
            try:
                socket.create_connection((self.host, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.stopped.is_set():
                    raise RuntimeError(f"tensorboard did not listen within {READY_TIMEOUT_S:.0f} s") from None
                time.sleep(0.5)
        self.app.ui.add_page(protocol.UI_TENSORBOARD_ROUTE, f"http://{self.host}:{port}", link_name="TensorBoard")
        self.state = "running"
        _log.info(f"TensorBoard on http://{self.host}:{port} reads {self.uri}")

    def _sync(self) -> None:
        from tfyarn.storage import locate, mirror, parse_uri

        try:
            src = locate(parse_uri(self.uri))
            if src.exists():
                mirror(src, locate(parse_uri(os.path.abspath(self.local_dir))))
        except Exception as e:
            _log.warning(f"TensorBoard sync: {type(e).__name__}: {e}")

    def stop(self) -> None:
        self.stopped.set()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.state = "stopped"
