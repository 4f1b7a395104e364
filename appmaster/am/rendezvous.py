"""An elastic job's c10d rendezvous store, hosted by the AM so that it outlives any worker.

torchrun's c10d rendezvous keeps its state in a TCPStore. Hosted by a
worker's agent, it would die with that worker and take the job with it; the
AM's container lives as long as the job. The store runs in a child process
of the AM (torch is imported there only, never in the AM's own loop), on a
port the OS picks, and ends when the AM closes its stdin or exits. Workers
reach it at the AM's node address, published in the cluster view
(protocol.VIEW_RENDEZVOUS), and never host one themselves (is_host=false).
"""

from __future__ import annotations

import subprocess
import sys
import threading

# The child: serve the store until stdin closes (the AM ended, or stopped it).
_SERVE = (
    "import sys\n"
    "import torch.distributed as dist\n"
    "store = dist.TCPStore('0.0.0.0', 0, is_master=True, wait_for_workers=False)\n"
    "sys.stdout.write(f'{store.port}\\n')\n"
    "sys.stdout.flush()\n"
    "sys.stdin.read()\n"
)


class RendezvousStore:
    """The store's child process: started at once, its endpoint known when the child says its port."""

    def __init__(self, host: str, python: str = sys.executable) -> None:
        self.host = host
        self.endpoint = ""  # host:port, once serving
        self.error = ""  # why it could not start
        self._proc = subprocess.Popen(
            [python, "-c", _SERVE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._ready = threading.Event()
        threading.Thread(target=self._read_port, name="tfyarn rendezvous store", daemon=True).start()

    def _read_port(self) -> None:
        assert self._proc.stdout is not None and self._proc.stderr is not None
        line = self._proc.stdout.readline().strip()
        if line.isdigit():
            self.endpoint = f"{self.host}:{line}"
        else:
            tail = (self._proc.stderr.read().strip().splitlines() or ["it exited without a word"])[-1]
            self.error = (
                f"the elastic rendezvous store could not start in the AM's container ({tail}); "
                "an elastic job needs torch importable by the AM's Python (the job's Python environment)"
            )
        self._ready.set()

    def wait(self, timeout_s: float) -> bool:
        """Whether the store has started (or failed: see ``error``) within ``timeout_s``."""
        return self._ready.wait(timeout_s)

    def alive(self) -> bool:
        return self._proc.poll() is None

    def stop(self) -> None:
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
