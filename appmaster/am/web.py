"""The AM's HTTP server behind skein's UI proxy: the status page and its JSON.

GET only (the ResourceManager's proxy passes nothing else): the page, its JSON
(api/status) and Prometheus text (metrics). It serves the
last status document the AM handed it; it never reads the job's state
itself, so a slow browser cannot slow the AM's loop.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from appmaster.am import metrics, page
from tfyarn import protocol
from tfyarn.wire import StatusDoc


class Replier(BaseHTTPRequestHandler):
    """A GET handler's base: whole replies that no cache keeps, and no access log (the job's log is for the job)."""

    def reply(self, code: int, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class StatusServer:
    def __init__(self, host: str):
        self.host = host
        self._lock = threading.Lock()
        self._json = b"{}"
        self._html = b""
        self._doc: StatusDoc | None = None  # until the AM hands one over: an empty page, and {}
        self._httpd = ThreadingHTTPServer((host, 0), self._handler())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True, name="tfyarn-web").start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def update(self, doc: StatusDoc, body: str = "") -> None:
        """Serve ``doc`` from now on; its HTML and JSON (``body`` if serialized already) are made lazily."""
        with self._lock:
            self._doc, self._json, self._html = doc, body.encode(), b""

    def _page(self) -> tuple[bytes, bytes]:
        with self._lock:
            if self._doc is not None and not self._html:
                self._html = page.render(self._doc).encode()
            if self._doc is not None and not self._json:
                self._json = self._doc.to_json().encode()
            return self._html, self._json

    def _metrics(self) -> bytes:
        with self._lock:
            doc = self._doc
        return metrics.render(doc).encode() if doc is not None else b""

    def close(self) -> None:
        self._httpd.shutdown()

    def _handler(self) -> type[Replier]:
        server = self

        class Handler(Replier):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0].strip("/")
                html, body = server._page()
                if path == "":
                    self.reply(200, "text/html; charset=utf-8", html)
                elif path == protocol.API_STATUS:
                    self.reply(200, "application/json", body)
                elif path == protocol.API_METRICS:
                    self.reply(200, metrics.CONTENT_TYPE, server._metrics())
                else:
                    self.reply(404, "text/plain", b"not found\n")

        return Handler
