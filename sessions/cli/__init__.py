"""`python -m sessions`: the headless contract other tools and tests rely on.

Every subcommand prints JSON on its last stdout line (or a readable tree for `show`); errors go to
stderr as one sentence saying what to do. Exit codes: 0 done, 1 the run failed (or a command was
rejected), 2 bad input (nothing was recorded), 3 the run paused and `--exit-on-pause` was given.

The command line is a thin shell: the verbs that read and command sessions are a client of them
(`sessions.client.SessionClient`), `run` and `resume` run a session in this process with the worker
side's `Runner`, and `worker` is a worker. Its modules, by concern:

- `conventions`: one-line errors, `--db`, the exit codes, the parser, `Subcommand`, `main`
- `arguments`: the argument types the verbs share; `command_options`: the `command` verb's options,
  generated from the command models; `new_session`: what `run` and `submit` take
- `context`: the client a verb works through, its operator and artifact store
- `foreground`: running a session here (`run`, `resume`)
- `session_verbs`, `analysis_verbs`, `template_verbs`, `worker_verbs`: the verbs

A subcommand's arguments are added only when it is the one given, and each verb imports what it
uses: `list` loads no engine, model registry or command model; `command` loads the command models
its verbs are built from. Applications built on sessions (`python -m demo`) add their own
subcommands (`Subcommand`) with the same conventions, and use what this package exports.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

from sessions.cli import conventions
from sessions.cli.analysis_verbs import DIAGNOSE, JUDGE, REASK, REPORT
from sessions.cli.conventions import (
    DESCRIPTION,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PAUSED,
    EXIT_USAGE,
    PROG,
    Subcommand,
    emit,
    path_argument,
    text_argument,
)
from sessions.cli.foreground import run_summary
from sessions.cli.new_session import ablation_config, add_ablations
from sessions.cli.session_verbs import COMMAND, DELETE, EXPORT, FORK, LIST, RESUME, RUN, SHOW, SUBMIT
from sessions.cli.template_verbs import TEMPLATE
from sessions.cli.worker_verbs import WORKER

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_PAUSED",
    "EXIT_USAGE",
    "Subcommand",
    "ablation_config",
    "add_ablations",
    "build_parser",
    "emit",
    "main",
    "path_argument",
    "run_summary",
    "text_argument",
]

_SUBCOMMANDS: Mapping[str, Subcommand] = {
    "run": RUN,
    "submit": SUBMIT,
    "worker": WORKER,
    "resume": RESUME,
    "command": COMMAND,
    "fork": FORK,
    "delete": DELETE,
    "list": LIST,
    "export": EXPORT,
    "show": SHOW,
    "diagnose": DIAGNOSE,
    "judge": JUDGE,
    "report": REPORT,
    "reask": REASK,
    "template": TEMPLATE,
}


def build_parser(
    subcommands: Mapping[str, Subcommand] = _SUBCOMMANDS,
    *,
    prog: str = PROG,
    description: str = DESCRIPTION,
    lazy: bool = False,
) -> argparse.ArgumentParser:
    """The parser of `subcommands` (default: those of `python -m sessions`); `lazy` leaves each one's
    arguments to be added when it is used."""
    return conventions.build_parser(subcommands, prog=prog, description=description, lazy=lazy)


def main(
    argv: Sequence[str] | None = None,
    *,
    subcommands: Mapping[str, Subcommand] = _SUBCOMMANDS,
    prog: str = PROG,
    description: str = DESCRIPTION,
) -> int:
    """Run `python -m sessions` (or an application's own `subcommands`, with the same conventions); the exit code."""
    return conventions.main(argv, subcommands=subcommands, prog=prog, description=description)
