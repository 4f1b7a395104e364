"""The history page (`tfyarn history serve`): every job's status page, finished ones included, and
the cluster's GPUs.

A job's own page lives in its AM and goes with it; YARN's tracking URL then
shows N/A. This server renders the same page (appmaster.am.page) from the
status document the job saved on HDFS, lists the jobs (tfyarn.history) and
shows, per node, its GPUs and which running job's task holds which. It reads
with its user's credentials, so it shows that user's jobs (``--user`` another
whose job dir it may read); it listens on loopback unless told otherwise.

Routes: ``/`` (jobs and GPUs), ``/job/<app_id>/`` (the job's page), under it
``api/status`` and ``metrics`` (as the AM serves them), ``/api/jobs`` (JSON).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tfyarn import protocol
from tfyarn.history import SOURCE_NAMES, HistoryEntry
from tfyarn.wire import StatusDoc

_JOB = re.compile(r"^job/(application_\d+_\d+)(/.*)?$")
_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}h2{font-size:1.1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}.RUNNING{color:#0a58ca}.SUCCEEDED{color:#157347}.FAILED,.KILLED{color:#b02a37}
.muted{color:#777}
"""


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S") if epoch else "-"


def index_html(jobs: list[HistoryEntry], nodes: list[Any], warnings: list[str], now: float) -> str:
    """The front page: the GPUs of each node and who holds them, then the jobs, newest first.

    ``nodes`` are tfyarn.cli.nodes_cmd.NodeView (the RM's nodes with the tfyarn tasks on each).
    """
    out = [
        f'<!doctype html><html><head><meta charset="utf-8"><title>tfyarn history</title><style>{_CSS}</style>'
        '<meta http-equiv="refresh" content="10"></head><body><h1>tfyarn jobs</h1>'
    ]
    out += [f'<p class="warning">Warning: {escape(w)}</p>' for w in warnings]
    out.append(
        '<h2>GPUs</h2><table id="gpus"><tr><th>Node</th><th>State</th><th>GPUs used</th>'
        "<th>Held by (job, task: devices)</th></tr>"
    )
    for v in nodes:
        held = "<br>".join(
            f'<a href="job/{escape(t.app_id)}/">{escape(t.app_id)}</a> {escape(t.job_name)}, {escape(t.task)}: '
            f"{','.join(str(g) for g in t.gpus)}"
            for t in v.tasks
            if t.gpus
        )
        out.append(
            f'<tr class="node" data-host="{escape(v.host)}"><td>{escape(v.host)}</td><td>{escape(v.state)}</td>'
            f"<td>{v.gpus_used}/{v.gpus}</td><td>{held or '<span class=muted>-</span>'}</td></tr>"
        )
    out.append(
        '</table><h2>Jobs</h2><table id="jobs"><tr><th>Application</th><th>Name</th><th>Framework</th>'
        "<th>State</th><th>Queue</th><th>Started</th><th>Duration</th><th>Tasks</th><th>GPUs</th>"
        "<th>Known to</th></tr>"
    )
    for e in jobs:
        duration = "-" if e.duration_s is None else f"{e.duration_s:.0f}s"
        out.append(
            f'<tr class="job" data-app="{escape(e.app_id)}"><td><a href="job/{escape(e.app_id)}/">'
            f"{escape(e.app_id)}</a></td><td>{escape(e.name)}</td><td>{escape(e.framework)}</td>"
            f'<td class="{escape(e.state)}">{escape(e.state)}</td><td>{escape(e.queue)}</td>'
            f"<td>{_when(e.start_time)}</td><td>{duration}</td><td>{'-' if e.tasks is None else e.tasks}</td>"
            f"<td>{'-' if e.gpus is None else e.gpus}</td><td>{escape(SOURCE_NAMES[e.source])}</td></tr>"
        )
    out.append(f'</table><p class="muted">Updated {_when(now)}.</p></body></html>')
    return "\n".join(out)


class HistoryServer:
    """Serves the pages from what ``load_index`` and ``load_doc`` return, one request at a time.

    Both callables talk to YARN and HDFS through one client, which is not
    made for concurrent use: requests are served in turn (a lock), which a
    page that people open by hand can afford.
    """

    def __init__(
        self,
        load_index: Callable[[], tuple[list[HistoryEntry], list[Any], list[str]]],
        load_doc: Callable[[str], StatusDoc | None],
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.load_index, self.load_doc = load_index, load_doc
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self.host, self.port = host, self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def respond(self, path: str) -> tuple[int, str, bytes]:
        """(HTTP status, content type, body) for ``path``."""
        from appmaster.am import metrics, page

        path = path.split("?", 1)[0].strip("/")
        with self._lock:
            if path == "":
                jobs, nodes, warnings = self.load_index()
                return 200, "text/html; charset=utf-8", index_html(jobs, nodes, warnings, time.time()).encode()
            if path == "api/jobs":
                jobs, _, _ = self.load_index()
                return 200, "application/json", json.dumps([e.to_dict() for e in jobs]).encode()
            match = _JOB.match(path)
            doc = self.load_doc(match.group(1)) if match else None
        if match is None:
            return 404, "text/plain", b"not found\n"
        if doc is None:
            return 404, "text/plain", f"no status document for {match.group(1)} (yet)\n".encode()
        rest = (match.group(2) or "").strip("/")
        if rest == "":
            return 200, "text/html; charset=utf-8", page.render(doc).encode()
        if rest == protocol.API_STATUS:
            return 200, "application/json", doc.to_json().encode()
        if rest == protocol.API_METRICS:
            return 200, metrics.CONTENT_TYPE, metrics.render(doc).encode()
        return 404, "text/plain", b"not found\n"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        from appmaster.am.web import Replier

        server = self

        class Handler(Replier):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                bare = self.path.split("?", 1)[0]
                if _JOB.fullmatch(bare.strip("/")) and "/" not in bare.strip("/")[4:] and not bare.endswith("/"):
                    self.send_response(301)  # the page's links are relative to its dir
                    self.send_header("Location", bare + "/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                try:
                    self.reply(*server.respond(self.path))
                except Exception as e:  # one failed read must not take the server down
                    self.reply(500, "text/plain", f"{type(e).__name__}: {e}\n".encode())

        return Handler
