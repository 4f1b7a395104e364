"""Refuse at submit a command whose script stays on this machine, never a "can't open file" in a container.

A task runs in its container's own working dir, which holds what the job
ships (``--file`` by basename, the ``--code`` dir's entries) and nothing
else. A command that names a script by a path relative to here, say
``python train.py`` or ``torchrun --nproc-per-node 2 src/train.py``, works
only if that path is shipped: checked here against the files on disk, and
the error names the flag that ships it.
"""

from __future__ import annotations

import os
import shlex

from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec

SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".R", ".pl", ".rb", ".js", ".ipynb")


def local_scripts(argv: tuple[str, ...], cwd: str) -> list[str]:
    """The arguments that name a script file here by a relative path (the program itself, if it does)."""
    found = []
    for i, arg in enumerate(argv):
        if not arg or os.path.isabs(arg) or arg.startswith("-") or "\n" in arg:
            continue
        is_script = arg.endswith(SCRIPT_SUFFIXES) or (i == 0 and "/" in arg)  # ./run, bin/train
        if is_script and os.path.isfile(os.path.join(cwd, arg)):
            found.append(arg)
    return found


def shipped(rel: str, spec: JobSpec, code_dir: str) -> bool:
    """Whether a container's working dir has ``rel``: from the code dir, or a ``--file`` (by basename)."""
    if code_dir and os.path.isfile(os.path.join(code_dir, rel)):
        return True
    first, _, rest = os.path.normpath(rel).partition(os.sep)
    for f in spec.files:
        if os.path.basename(os.path.normpath(f)) == first and (not rest or os.path.isfile(os.path.join(f, rest))):
            return True
    return False


def check_shipped(spec: JobSpec, code_dir: str, cwd: str | None = None) -> None:
    """Raise SpecError for the first command's script that the containers will not have."""
    here = cwd or os.getcwd()
    commands = {spec.command_for(role): role for role in spec.roles}
    for argv in commands:
        for rel in local_scripts(tuple(argv), here):
            if shipped(rel, spec, code_dir):
                continue
            ship_file = "" if os.sep in os.path.normpath(rel) else f"--file {shlex.quote(rel)} (ships the file) or "
            raise SpecError(
                f"command: {rel} is a file in {here}, which the containers do not get (each runs in a dir of its "
                f"own); add {ship_file}--code . (ships this dir)"
            )
