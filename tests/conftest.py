"""Every test sees tfyarn's own defaults: no per-user defaults file, no TFYARN_SUBMIT_* variables of whoever runs it."""

from __future__ import annotations

import os
import tempfile

_CONFIG = tempfile.mkdtemp(prefix="tfyarn-test-config-")  # empty: no tfyarn/defaults.yaml in it
os.environ["XDG_CONFIG_HOME"] = _CONFIG
os.environ.pop("TFYARN_DEFAULTS", None)
for _name in [n for n in os.environ if n.startswith("TFYARN_SUBMIT_") and n != "TFYARN_SUBMIT_FLAGS"]:
    del os.environ[_name]


# tests/kerberos needs a Kerberized cluster on the plain one's ports: it runs on its own
# (`make test-kerberos`, which `make test` ends with), and is not collected otherwise.
collect_ignore = [] if os.environ.get("TFYARN_TEST_KERBEROS") else ["kerberos"]


def pytest_report_header() -> str:
    if os.environ.get("TFYARN_TEST_KERBEROS"):
        return "tests/kerberos: on a Kerberized cluster of its own"
    return "tests/kerberos: not collected here; `make test-kerberos` runs it on a Kerberized cluster"
