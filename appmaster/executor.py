"""The executor: the first process of every task container.

Its life reads top to bottom: learn who it is, report that it started,
run the user's command, report how it ended, exit with the command's code.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time

import skein

from appmaster import process
from tfyarn import protocol


def task_env(base: dict[str, str]) -> dict[str, str]:
    """The user process's environment: the container's, with this Python's bin first on PATH."""
    env = dict(base)
    env["PATH"] = f"{os.path.dirname(sys.executable)}:{env.get('PATH', '')}"
    return env


def main() -> int:
    role = os.environ[protocol.ENV_ROLE]
    index = int(os.environ[protocol.ENV_TASK_INDEX])
    command = protocol.decode_env(os.environ[protocol.ENV_COMMAND])
    app = skein.ApplicationClient.from_current()
    host = socket.gethostname()
    app.kv[protocol.kv_task_started(role, index)] = json.dumps(
        {"host": host, "time": time.time(), "container": os.environ.get("CONTAINER_ID", "")}).encode()
    print(f"tfyarn: {protocol.task_name(role, index)} on {host} runs: {' '.join(command)}", file=sys.stderr)
    outcome = process.run(command, task_env(dict(os.environ)))
    app.kv[protocol.kv_task_exit(role, index)] = json.dumps(
        {"code": outcome.exit_code, "stderr_tail": outcome.stderr_tail, "time": time.time()}).encode()
    print(f"tfyarn: {protocol.task_name(role, index)} exited with code {outcome.exit_code}", file=sys.stderr)
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
