"""`submit --help` in sections (job, roles, data, environment, Docker, reliability, security, output).

The submit command has some 80 options, 36 of them the same nine settings
for four roles. Listed flat they made a help no one reads; here each option
sits in one section, and the chief's, ps's and evaluator's per-role options
are summarised in one row after the worker's (`--help-all` lists them all).
"""

from __future__ import annotations

import click

from tfyarn.frameworks import KNOWN_ROLES

SECTIONS: dict[str, tuple[str, ...]] = {
    "Job": ("conf", "sets", "framework", "name", "queue", "node_label", "tag", "am_memory"),
    "Roles": ("num_workers", "num_ps", "chief", "evaluator", "evaluator_may_fail", "nproc_per_node"),
    "Data": (
        "input",
        "input_mode",
        "output",
        "overwrite",
        "output_mode",
        "save_every",
        "resume",
        "download_threads",
        "upload_threads",
    ),
    "Environment": ("env", "file", "code", "python_env", "tensorboard"),
    "Docker": ("docker_image", "docker_runtime", "docker_mount", "docker_env"),
    "Reliability and placement": (
        "max_attempts",
        "allocation_timeout",
        "registration_timeout",
        "max_runtime",
        "progress_timeout",
        "placement",
        "exclude_node",
        "on_event",
    ),
    "Security": ("view_acl", "modify_acl"),
    "Output of this command": ("dry_run", "wait", "as_json", "help_all", "help"),
}
SHOWN_ROLE = "worker"  # its per-role options are listed; the other roles' are summarised
ROLE_SETTINGS = (
    "memory",
    "vcores",
    "gpus",
    "node_label",
    "restart",
    "max_restarts",
    "restart_backoff",
    "permanent_exit_codes",
    "docker_image",
    "progress_timeout",
)


def section_of(name: str) -> str:
    """The section a parameter is listed in ("" for one that belongs to none: a defect the tests catch)."""
    for role in KNOWN_ROLES:
        if any(name == f"{role}_{s}" for s in ROLE_SETTINGS):
            return "Roles"
    return next((title for title, names in SECTIONS.items() if name in names), "")


def help_all(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """--help-all: the help with every role's options listed."""
    if value and not ctx.resilient_parsing:
        ctx.meta["help_all"] = True
        click.echo(ctx.get_help())
        ctx.exit()


class GroupedCommand(click.Command):
    """A click command whose options are listed by section."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        show_all = bool(ctx.meta.get("help_all"))
        rows: dict[str, list[tuple[str, str]]] = {title: [] for title in SECTIONS}
        others = [r for r in KNOWN_ROLES if r != SHOWN_ROLE]
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None or param.param_type_name != "option":  # COMMAND is in the usage line
                continue
            name = "help" if param.name and param.name.endswith("default_help") else param.name or ""
            role, _, setting = name.partition("_")
            if not show_all and role in others and setting in ROLE_SETTINGS:
                continue
            rows.setdefault(section_of(name) or "Other", []).append(record)
            if name == f"{SHOWN_ROLE}_{ROLE_SETTINGS[-1]}" and not show_all:
                rows["Roles"].append(
                    (
                        "--{" + ",".join(others) + "}-*",
                        f"The same {len(ROLE_SETTINGS)} settings for the other roles' tasks, e.g. --ps-memory 1g, "
                        "--chief-restart on-failure (--help-all lists them).",
                    )
                )
        for title, records in rows.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)
