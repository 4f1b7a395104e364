"""tfyarn: TensorFlow and PyTorch training jobs on Hadoop YARN.

The Python API (README, "Python API")::

    from tfyarn import Client, load_job

    spec = load_job(flags={"num_workers": 2}, command=["python", "-c", "print('hi')"])
    with Client() as client:
        app_id = client.submit(spec)
        final = client.wait(app_id, progress=print)

The names below load their module on first use, so ``import tfyarn`` (and
the CLI, which starts with it) imports no skein, pyarrow or click.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers
    from tfyarn.client import Client
    from tfyarn.jobload import load_job
    from tfyarn.spec import JobSpec, RoleSpec

__version__ = "0.1.0"
__all__ = ["Client", "JobSpec", "RoleSpec", "__version__", "load_job"]

_WHERE = {"Client": "client", "JobSpec": "spec", "RoleSpec": "spec", "load_job": "jobload"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tfyarn' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tfyarn.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
