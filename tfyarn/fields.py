"""Generic checks of job-spec fields, each raising SpecError that names the field.

Kept apart from the spec's dataclasses (tfyarn.spec) so the spec reads as
data and its rules; these are the limits YARN, skein and a shell impose on
any value: int32 counts, memory sizes, text without control characters,
environment and file names that reach a container.
"""

from __future__ import annotations

import os
import re
import reprlib
import unicodedata
from dataclasses import fields
from decimal import Decimal
from typing import Any

from tfyarn import frameworks, protocol
from tfyarn.errors import SpecError

MIN_MEMORY_MB = 128
# skein's protobuf (and YARN's Resource) carry memory, vcores and counts as int32: a larger
# number passes the client and fails in the AM. Memory stops at 1 PiB, leaving the AM's
# TensorBoard share (tfyarn.plan) room below int32.
INT32_MAX = 2**31 - 1
MAX_MEMORY_MB = 2**30
_MEMORY_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:ib|i|b)?\s*", re.IGNORECASE)
_UNIT_MB = {"k": Decimal(1) / 1024, "": Decimal(1), "m": Decimal(1), "g": Decimal(1024), "t": Decimal(1024**2)}
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The ResourceManager's defaults (yarn.resourcemanager.application.max-tags, max-tag.length);
# tfyarn.plan adds two tags of its own.
MAX_USER_TAGS = 10 - 2
MAX_TAG_LENGTH = 100
# Names tfyarn, skein or YARN set in a task's environment: a user value would be overwritten or
# would break the task. The frameworks name theirs (tfyarn.frameworks); the GPUs' are appmaster.executor.gpus's.
_RESERVED_ENV_PREFIXES = ("TFYARN_", "SKEIN_")
_RESERVED_ENV = frozenset(
    {
        protocol.ENV_SKEIN_CONTAINER_ID,
        protocol.ENV_SKEIN_APP_ID,
        protocol.ENV_SKEIN_VCORES,
        *protocol.YARN_CONTAINER_ENV,
        "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_ORDER",
        *frameworks.ENV_NAMES,
    }
)
# Shipped files land in the task's dir under their base name, which Hadoop writes unquoted into
# the launch script (ln -sf -- "src" "name"): only names no shell reads specially.
_FILE_NAME_RE = re.compile(r"[A-Za-z0-9._+][A-Za-z0-9._+-]{0,254}")
_RESERVED_FILE_NAMES = frozenset(
    {
        protocol.PYENV_DIR,
        protocol.CODE_DIR,
        "tmp",
        "launch_container.sh",
        "container_tokens",
        ".skein.crt",
        ".skein.pem",
    }
)


_SHOW = reprlib.Repr()  # Python 3.11's takes no keyword arguments
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother = 3, 120, 120
_SHOW.maxlist = _SHOW.maxtuple = _SHOW.maxdict = _SHOW.maxset = _SHOW.maxfrozenset = 6


def show(value: Any) -> str:
    """repr() for messages, bounded: a YAML alias bomb must not become a billion-item error line."""
    return _SHOW.repr(value)


def parse_memory(value: str | int, what: str = "memory") -> int:
    """``"4g"`` -> 4096 (MiB). Plain numbers are MiB, as in YARN."""
    if isinstance(value, bool):
        raise SpecError(f"{what}: {show(value)} is not a memory size; use e.g. 512m or 4g")
    if isinstance(value, int):
        amount = Decimal(value)
    else:
        m = _MEMORY_RE.fullmatch(str(value)) if isinstance(value, (str, float)) else None
        if not m:
            raise SpecError(f"{what}: {show(value)} is not a memory size; use e.g. 512m or 4g")
        amount = Decimal(m.group(1)) * _UNIT_MB[m.group(2).lower()]  # exact: no float overflow
    if amount > MAX_MEMORY_MB:
        raise SpecError(
            f"{what}: {show(value)} is above the maximum of {MAX_MEMORY_MB} MiB (1024t) "
            "that a YARN container request can carry"
        )
    if amount < MIN_MEMORY_MB:
        raise SpecError(f"{what}: {show(value)} is below the minimum of {MIN_MEMORY_MB} MiB")
    return int(amount)


_DURATION_PART = re.compile(r"([0-9]{1,9})([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: str | int, what: str = "duration") -> int:
    """``"1h30m"`` -> 5400 (seconds). Plain numbers are seconds; parts are d, h, m, s, largest first."""
    if isinstance(value, bool):
        raise SpecError(f"{what}: {show(value)} is not a duration; use e.g. 90s, 30m, 2h or 1h30m")
    if isinstance(value, int):
        return value
    text = str(value).strip().lower()
    if re.fullmatch(r"[0-9]{1,9}", text):
        return int(text)
    parts = _DURATION_PART.findall(text)
    units = [u for _, u in parts]
    if (
        not parts
        or "".join(n + u for n, u in parts) != text
        or units != sorted(units, key="dhms".index)
        or len(set(units)) != len(units)
    ):
        raise SpecError(f"{what}: {show(value)} is not a duration; use e.g. 90s, 30m, 2h or 1h30m")
    return sum(int(n) * _SECONDS[u] for n, u in parts)


def duration_text(seconds: int) -> str:
    """Seconds as a duration flag takes them: 5400 -> 1h30m, 90 -> 1m30s, 0 -> 0s."""
    out = ""
    for unit in "dhms":
        n, seconds = divmod(seconds, _SECONDS[unit])
        out += f"{n}{unit}" if n else ""
    return out or "0s"


def check_int(value: Any, what: str, minimum: int, maximum: int = INT32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{what}: {show(value)} is not a whole number")
    if value < minimum:
        raise SpecError(f"{what}: must be at least {minimum}, got {value}")
    if value > maximum:
        raise SpecError(f"{what}: must be at most {maximum} (what YARN's requests carry), got {value}")
    return value


def check_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise SpecError(f"{what}: expected a string, got {show(value)}")
    return value


def bad_char(text: str, multiline: bool = False) -> str | None:
    """The first character YARN cannot carry safely: controls, line breaks, unpaired surrogates.

    ``multiline`` text (arguments, env values: never in a YARN request or script) may hold
    tabs and line breaks, but never NUL, which no argv or environment can hold.
    """
    for c in text:
        if multiline and c in "\t\n\r":
            continue
        if c == "\0" or unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp"):
            return c
    return None


def check_text(value: Any, what: str, multiline: bool = False) -> str:
    """A string with no character that could break a YARN request (a surrogate: bytes not UTF-8)."""
    c = bad_char(check_str(value, what), multiline)
    if c is not None:
        kind = "bytes that are not UTF-8" if unicodedata.category(c) == "Cs" else f"the control character {show(c)}"
        raise SpecError(f"{what}: {show(value)} holds {kind}; remove it")
    return value


def check_tuple(value: Any, what: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"{what}: expected a list, got {show(value)}")
    return tuple(value)


def list_of(values: dict[str, Any], key: str) -> list[Any]:
    value = values.get(key) or []
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"{key}: expected a list")
    return list(value)


def check_keys(data: dict[str, Any], cls: type, where: str) -> None:
    known = {f.name for f in fields(cls)}
    unknown = sorted(str(k) for k in set(data) - known)  # YAML keys may be numbers, null ...
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(known))}")


def check_tags(tags: Any) -> None:
    """The ResourceManager refuses a submission whose tags are not ASCII, too long or too many."""
    tags = check_tuple(tags, "tags")
    if len(tags) > MAX_USER_TAGS:
        raise SpecError(
            f"tags: {len(tags)} tags given; YARN takes {MAX_USER_TAGS + 2} per job and tfyarn "
            f"sets 2, so at most {MAX_USER_TAGS}"
        )
    for i, tag in enumerate(tags):
        check_text(tag, f"tags[{i}]")
        if not (tag.isascii() and tag.isprintable()) or len(tag) > MAX_TAG_LENGTH:
            raise SpecError(
                f"tags[{i}]: {show(tag)} is not a YARN tag: printable ASCII, at most {MAX_TAG_LENGTH} characters"
            )


def check_env(env: Any, key: str = "env") -> None:
    """Names a shell and the executor accept and tfyarn does not set itself; values any text.

    Values travel encoded inside the job spec and the executor sets them on the user process,
    so quotes, ``$`` and newlines are plain data; only NUL cannot be in an environment.
    """
    if not isinstance(env, dict):
        raise SpecError(f"{key}: expected a mapping of NAME: value, got {show(env)}")
    for k, v in env.items():
        if not isinstance(k, str) or not _ENV_NAME_RE.fullmatch(k):
            raise SpecError(
                f"{key}: {show(k)} is not a valid environment variable name "
                "(letters, digits and _, not starting with a digit)"
            )
        if k in _RESERVED_ENV or k.startswith(_RESERVED_ENV_PREFIXES):
            raise SpecError(
                f"{key}: {k} is set by tfyarn, skein or YARN in every task; "
                f"choose another name (none starting with {' or '.join(_RESERVED_ENV_PREFIXES)})"
            )
        if not isinstance(v, str):
            raise SpecError(f"{key}.{k}: values must be strings, got {show(v)}; quote it")
        check_text(v, f"{key}.{k}", multiline=True)


def check_files(files: Any) -> None:
    """Each shipped file lands by its base name, which must be safe and unique (see _FILE_NAME_RE)."""
    names = []
    for i, path in enumerate(check_tuple(files, "files")):
        name = os.path.basename(check_str(path, f"files[{i}]").rstrip("/"))
        if name in ("", ".", "..") or not _FILE_NAME_RE.fullmatch(name) or name in _RESERVED_FILE_NAMES:
            raise SpecError(
                f"files: {show(path)} would land in the container as {show(name)}; rename it to use only "
                "letters, digits, '.', '_', '+' and '-' (not first), at most 255 characters, "
                f"and none of {', '.join(sorted(_RESERVED_FILE_NAMES))}"
            )
        check_text(path, f"files[{i}]")  # its dir, which YARN's request carries
        names.append(name)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SpecError(f"files: two files would land as {show(dupes[0])} in the container; rename one")


def str_list(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        if what.endswith("command"):
            raise SpecError(f"{what}: give the command as a list of arguments, not one string")
        raise SpecError(f"{what}: expected a list of strings, got one string")
    if not isinstance(value, (list, tuple)) or not all(isinstance(a, str) for a in value):
        raise SpecError(f"{what}: expected a list of strings")
    return tuple(value)


_MODE_RE = re.compile(r"0?[0-7]{3}")


def check_output_mode(value: Any) -> int:
    """``output_mode`` as an int: three octal digits, the owner's rwx kept."""
    if not isinstance(value, str) or not _MODE_RE.fullmatch(value):
        raise SpecError(f"output_mode: {show(value)} is not three octal digits, e.g. 750 (quote it in YAML: '750')")
    mode = int(value, 8)
    if mode & 0o700 != 0o700:
        raise SpecError(
            f"output_mode: {value} takes rights from the owner; keep 7 first (e.g. 750): the job must "
            "be able to replace and clean up its own outputs"
        )
    return mode
