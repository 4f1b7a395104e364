"""Property: whatever flags, job file and --set values a user gives, ``tfyarn submit --dry-run``
either prints a plan (exit 0) or one ``Error:`` line (exit 2): never a traceback, a hang or
another exit code.

Generated: numbers (huge, negative, unicode digits), memory sizes, role flags, URIs with odd
hosts, ports and segments, env names and values, shipped file names (created in a temp dir),
YAML job files of random shape (sometimes not UTF-8), ``--set`` with YAML snippets and tags,
and the command. ``python_env`` stays ``local`` and ``code`` never names an existing dir, so no
example packs anything. The budget is fixed and derandomized (the same examples every run).
"""
from __future__ import annotations

import os
import tempfile
import traceback
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tfyarn.cli.main import cli  # noqa: E402
from tfyarn.cli.jobfile import FLAG_KEYS  # noqa: E402

OUTCOMES: dict[int, int] = {}  # exit code -> examples, over this module's fuzz tests
NO_CLUSTER = {"HADOOP_CONF_DIR": "/nonexistent", "TFYARN_CLUSTER_DIR": "/nonexistent"}
# The CI budget per fuzz test; TFYARN_FUZZ_EXAMPLES=5000 explores further (the same examples each run).
EXAMPLES = int(os.environ.get("TFYARN_FUZZ_EXAMPLES", "1500"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

# Text a user could type: argv holds no NUL, but may hold undecodable bytes (as surrogates).
_ARGV_CHARS = st.characters(exclude_characters="\x00", exclude_categories=("Cs",))
_SPECIAL = ["", " ", "-1", "0", "1", "2147483647", "2147483648", "1099511627776", "9" * 40, "-" + "9" * 40,
            "1e10", "1.5", "nan", "inf", "0x10", "\u0663", "\u00b2", "\n", "a\nb", "\t", "\u2028", "\udcff",
            "$(touch PWNED)", '"', "'", "`id`", "\\", "..", ".", "~", "null", "[1,", "{a: [", "!!binary aGk=",
            "!!python/object:os.system x", "!!timestamp 2001-12-14", "!!set {a}", "&a [*a]", "*x", "yes",
            "- a", "a: b", "---", "'open", "%TAG ! x", "\x1b[31m", "TFYARN_ROLE", "worker", "chief"]
TEXT = st.one_of(st.sampled_from(_SPECIAL), st.text(_ARGV_CHARS, max_size=24),
                 st.integers(-2**70, 2**70).map(str))
NUMBER = st.one_of(st.integers(-5, 20).map(str), st.integers(-2**70, 2**70).map(str), TEXT)
MEMORY = st.one_of(st.builds(lambda n, u: f"{n}{u}", st.one_of(st.integers(-10, 2**45), st.floats(0, 1e30)),
                             st.sampled_from(["", "m", "g", "t", "k", "gb", "GiB", "p", " g"])), TEXT)

_NUMERIC_FLAGS = ["--num-workers", "--num-ps", "--nproc-per-node", "--max-attempts", "--save-every",
                  "--download-threads", "--upload-threads", "--allocation-timeout", "--registration-timeout",
                  "--max-runtime",
                  "--worker-vcores", "--worker-gpus", "--worker-max-restarts", "--worker-restart-backoff",
                  "--chief-vcores", "--ps-gpus", "--evaluator-max-restarts"]
_TEXT_FLAGS = ["--name", "--queue", "--node-label", "--worker-node-label", "--tag", "--view-acl", "--modify-acl",
               "--framework", "--worker-restart", "--input-mode", "--worker-permanent-exit-codes"]
_MEMORY_FLAGS = ["--am-memory", "--worker-memory", "--ps-memory", "--chief-memory"]
_BARE_FLAGS = ["--chief", "--evaluator", "--overwrite", "--tensorboard", "--evaluator-must-succeed"]


def _uri(scheme: str, host: str, port: str, segments: list[str], dest: str | None) -> str:
    text = f"{scheme}://{host}{port}/" + "/".join(segments) if scheme else "/".join(segments)
    return text if dest is None else f"{text}:{dest}"


URI = st.builds(_uri, st.sampled_from(["hdfs", "viewfs", "file", "ftp", "", "HDFS"]),
                st.sampled_from(["", "nn", "n n", "[::1", "[::1]", "nn.example.com", "a@b"]),
                st.sampled_from(["", ":8020", ":0", ":65535", ":99999", ":abc", ":", ":\u0663"]),
                st.lists(st.one_of(st.sampled_from(["data", "..", ".", "", "a b", "x?y", "#f", "mnist"]), TEXT),
                         max_size=4),
                st.one_of(st.none(), st.sampled_from(["./data", ".", "..", "/abs", "a/../..", "d"]), TEXT))
OUTPUT = st.one_of(st.builds(lambda d, u: f"{d}:{u}", st.sampled_from(["./model", "model", ".", "", "/abs", "../m"]),
                             URI), TEXT)
ENV = st.builds(lambda k, v: f"{k}={v}", st.one_of(st.sampled_from(["A", "_X", "OMP_NUM_THREADS", "TFYARN_X",
                                                                    "TF_CONFIG", "1A", "A-B", "A\nB"]), TEXT), TEXT)
FILE_NAME = st.one_of(st.sampled_from(["train.py", "$(touch PWNED).py", 'a"b.py', "-rf", "pyenv", ".hidden",
                                       "a b", "x" * 255, "\u00e9t\u00e9.py"]),
                      st.text(st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)),
                              min_size=1, max_size=40)).filter(lambda n: n not in (".", "..")
                                                               and len(n.encode()) <= 255)

FLAG = st.one_of(
    st.tuples(st.sampled_from(_NUMERIC_FLAGS), NUMBER),
    st.tuples(st.sampled_from(_MEMORY_FLAGS), MEMORY),
    st.tuples(st.sampled_from(_TEXT_FLAGS), TEXT),
    st.tuples(st.just("--framework"), st.sampled_from(["none", "tensorflow", "pytorch"])),
    st.tuples(st.just("--input"), URI),
    st.tuples(st.just("--output"), OUTPUT),
    st.tuples(st.just("--env"), ENV),
    st.tuples(st.just("--python-env"), st.sampled_from(["local", "conda", "x.tar", ""])),
    st.tuples(st.sampled_from(_BARE_FLAGS), st.none()),
)
_SIMPLE = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_categories=("Cc",)), min_size=1,
                  max_size=12)
# Mostly-valid flags, so that many examples get through to a plan (and its checks).
VALID_FLAG = st.one_of(
    st.tuples(st.sampled_from(["--num-workers", "--worker-vcores", "--max-attempts", "--download-threads"]),
              st.integers(1, 4).map(str)),
    st.tuples(st.sampled_from(["--worker-memory", "--am-memory"]), st.sampled_from(["512m", "1g", "1.5g", "2048"])),
    st.tuples(st.sampled_from(["--name", "--queue", "--tag", "--node-label"]), _SIMPLE),
    st.tuples(st.just("--input"), st.sampled_from(["hdfs:///data/mnist", "hdfs://nn:8020/d:./d", "viewfs://c/x"])),
    st.tuples(st.just("--output"), st.sampled_from(["./model:hdfs:///m", "out:file:///tmp/o"])),
    st.tuples(st.just("--env"), st.builds(lambda v: f"A={v}", st.text(_ARGV_CHARS, max_size=12))),
)
COMMAND = st.one_of(st.just(["python", "train.py"]), st.just(["python", "train.py"]), st.lists(TEXT, max_size=3))

# YAML: values of any shape, and job files that are mostly well-formed, so both outcomes occur.
_KEYS = sorted({k.split(".")[0] for k in FLAG_KEYS} | {"command", "roles"}) + ["wokers", "1", ""]
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), TEXT)
VALUE = st.recursive(_SCALAR, lambda c: st.lists(c, max_size=3) | st.dictionaries(TEXT, c, max_size=3),
                     max_leaves=8)
ROLE = st.fixed_dictionaries({}, optional={
    "instances": st.one_of(st.integers(-1, 3), VALUE), "memory_mb": st.one_of(MEMORY, VALUE),
    "vcores": st.one_of(st.integers(-1, 2**40), VALUE), "gpus": st.integers(-1, 2**40),
    "name": st.sampled_from(["worker", "other", ""]), "node_label": TEXT, "command": st.lists(TEXT, max_size=2),
    "restart_policy": st.sampled_from(["never", "all", "x"]), "permanent_exit_codes": VALUE})
JOB = st.fixed_dictionaries({}, optional={
    "name": st.one_of(TEXT, VALUE), "command": st.one_of(COMMAND, VALUE),
    "framework": st.sampled_from(["none", "tensorflow", "pytorch", "mxnet"]),
    "roles": st.one_of(st.dictionaries(st.one_of(st.sampled_from(["worker", "chief", "ps", "evaluator"]), TEXT),
                                       st.one_of(st.none(), ROLE), max_size=3), VALUE),
    "env": st.one_of(st.dictionaries(TEXT, TEXT, max_size=3), VALUE), "files": VALUE, "tags": VALUE,
    "inputs": st.one_of(st.lists(URI, max_size=2), VALUE), "outputs": st.one_of(st.lists(OUTPUT, max_size=2), VALUE),
    "python_env": st.sampled_from(["local", "conda"]), "code": st.sampled_from(["", "/nonexistent/code"]),
    "am_memory_mb": st.one_of(MEMORY, VALUE), "queue": st.one_of(TEXT, VALUE), "view_acls": VALUE,
    "overwrite": VALUE, "save_every": VALUE, "max_attempts": VALUE})


VALID_JOB = st.fixed_dictionaries({"name": _SIMPLE, "command": st.just(["python", "t.py"])}, optional={
    "roles": st.fixed_dictionaries({"worker": st.fixed_dictionaries(
        {"instances": st.integers(1, 3)}, optional={"memory_mb": st.sampled_from(["1g", 512, "2 GiB"]),
                                                    "vcores": st.integers(1, 8), "gpus": st.integers(0, 2)})}),
    "framework": st.sampled_from(["none", "pytorch"]), "queue": _SIMPLE, "tags": st.lists(_SIMPLE, max_size=2),
    "env": st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,5}", fullmatch=True), st.text(_ARGV_CHARS, max_size=8),
                           max_size=2),
    "inputs": st.lists(st.sampled_from(["hdfs:///data/mnist", "hdfs:///d:./d"]), max_size=2),
    "outputs": st.lists(st.sampled_from(["./model:hdfs:///m"]), max_size=1)})


def _yaml_text(doc: Any, raw: str | None) -> bytes:
    """The job file: the document as YAML (or raw text), encoded so lone surrogates make it not UTF-8."""
    if raw is not None:
        return raw.encode("utf-8", "surrogatepass")
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:
        text = repr(doc)
    return text.encode("utf-8", "surrogatepass")


def _set_value(value: Any, raw: str | None) -> str:
    if raw is not None:
        return raw
    try:
        return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()
    except yaml.YAMLError:
        return repr(value)


SET = st.builds(lambda k, v, raw: f"{k}={_set_value(v, raw)}",
                st.one_of(st.sampled_from(sorted(set(FLAG_KEYS) - {"code", "python_env"}) + ["roles.worker.name", "name.x", "roles..x",
                                                               "env.A", "roles.w\u00f6rker.instances", "wokers"]),
                          TEXT),
                VALUE, st.one_of(st.none(), TEXT))


def outcome(args: list[str]) -> None:
    """Run ``tfyarn submit --dry-run ARGS`` in-process and check it ended in one of the two allowed ways."""
    res = CliRunner().invoke(cli, ["submit", "--dry-run=yarn", *args], prog_name="tfyarn", env=NO_CLUSTER)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(res.exception))
        pytest.fail(f"tfyarn submit --dry-run {args!r} raised:\n{tb}")
    assert res.exit_code in (0, 2), (args, res.exit_code, res.output)
    OUTCOMES[res.exit_code] = OUTCOMES.get(res.exit_code, 0) + 1
    event(f"exit {res.exit_code}: {res.stderr.split(':', 2)[1].strip() if res.exit_code else 'plan'}")
    if res.exit_code == 2:
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), (args, res.stderr)
        assert res.stdout == "", (args, res.stdout)
    else:
        assert res.stdout.startswith(("# tfyarn job", "Usage: tfyarn submit")), (args, res.output)
        assert "Traceback" not in res.stderr, (args, res.stderr)


def _flag_args(flags: list[tuple[str, str | None]]) -> list[str]:
    return [a for flag, value in flags for a in ((flag,) if value is None else (flag, value))]


@FUZZ
@given(flags=st.lists(st.one_of(VALID_FLAG, VALID_FLAG, FLAG), max_size=5),
       sets=st.one_of(st.just([]), st.lists(SET, max_size=2)), command=COMMAND,
       files=st.lists(st.tuples(st.one_of(st.just("train.py"), FILE_NAME), st.booleans()), max_size=2))
def test_flags_and_sets_end_in_a_plan_or_one_error_line(flags, sets, command, files):
    with tempfile.TemporaryDirectory() as tmp:
        args = _flag_args(flags)
        for name, exists in files:
            path = os.path.join(tmp, name)
            if exists:
                open(path, "w").close()
            args += ["--file", path]
        for s in sets:
            args += ["--set", s]
        outcome([*args, "--", *command] if command else args)


@FUZZ
@given(doc=st.one_of(VALID_JOB, VALID_JOB, st.builds(lambda a, b: {**a, **b}, VALID_JOB, JOB), JOB, VALUE), raw=st.one_of(*[st.none()] * 6, TEXT, st.text(max_size=60)),
       flags=st.lists(st.one_of(VALID_FLAG, FLAG), max_size=2), sets=st.one_of(st.just([]), st.lists(SET, max_size=1)))
def test_yaml_job_files_end_in_a_plan_or_one_error_line(doc, raw, flags, sets):
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "job.yaml")
        with open(conf, "wb") as f:
            f.write(_yaml_text(doc, raw))
        args = ["--conf", conf, *_flag_args(flags)]
        for s in sets:
            args += ["--set", s]
        outcome(args)


def test_the_fuzz_reached_both_outcomes():
    """A fuzz that only ever errors (or only plans) would prove little.

    It reads what the two tests above recorded; run on its own, it runs them first.
    """
    if not OUTCOMES:
        test_flags_and_sets_end_in_a_plan_or_one_error_line()
        test_yaml_job_files_end_in_a_plan_or_one_error_line()
    assert OUTCOMES.get(0, 0) >= 10 and OUTCOMES.get(2, 0) >= 100, OUTCOMES
