"""The conventions every subcommand keeps, those of `python -m sessions` and of an application built on
it (`python -m demo`): JSON on the last stdout line, errors as one sentence on stderr, `--db` on every
(sub)command, the exit codes, and a parser that adds a subcommand's arguments only when it is the one given.

Bad input is refused as early as it can be: an argument whose bytes are not UTF-8 is refused where
arguments are parsed, naming its option, before any is used; argparse type functions bound every
number and the size of every text before anything reaches the store; and the errors the store, the
planner and the file readers raise on purpose become one line here. Anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from planner.errors import PlannerError
from planner.inputs import MAX_PATH_CHARS, shown
from sessions.errors import SessionsError

if TYPE_CHECKING:
    from sessions.store import EventStore

__all__ = [
    "DESCRIPTION",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_PAUSED",
    "EXIT_USAGE",
    "PROG",
    "Subcommand",
    "build_parser",
    "db_option",
    "emit",
    "is_utf8",
    "main",
    "path_argument",
    "text_argument",
]

EXIT_OK = 0
EXIT_FAILED = 1
"""The run ended without success, or `command --wait` saw the command rejected."""
EXIT_USAGE = 2
"""Bad input: refused before anything was recorded."""
EXIT_PAUSED = 3
"""`--exit-on-pause`: the session paused by itself (or by an operator) and this process left it waiting."""

PROG = "python -m sessions"
DESCRIPTION = "Run and steer AND/OR planning sessions."


# -- output ----------------------------------------------------------------------------------------


def emit(payload: dict[str, Any]) -> None:
    """The subcommand's result: one JSON line on stdout, the last one it prints."""
    print(json.dumps(payload, ensure_ascii=False), flush=True)


_LONG_QUOTED = re.compile(r"'([^'\n]{40})[^'\n]{20,}'")


def _one_line(text: str, limit: int = 220) -> str:
    """An error message as one printable line: long quoted values cut, anything after the first line dropped."""
    lines = str(text).strip().splitlines()
    return shown(_LONG_QUOTED.sub(r"'\1…'", lines[0]), limit) if lines else "unknown error"


def _message(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f"cannot use {shown(error.filename)}: " if error.filename else ""
        return f"{where}{error.strerror.lower()}"
    return str(error) or type(error).__name__


def _refuse(error: BaseException) -> int:
    print(f"error: {_one_line(_message(error))}", file=sys.stderr, flush=True)
    return EXIT_USAGE


# -- the arguments every application takes ---------------------------------------------------------


def text_argument(what: str, limit: int) -> Callable[[str], str]:
    """An argparse type for text of at most `limit` characters and no NUL; `what` names it in the error."""

    def parse(text: str) -> str:
        if "\0" in text:
            raise argparse.ArgumentTypeError(f"the {what} contains a NUL character")
        if len(text) > limit:
            raise argparse.ArgumentTypeError(f"the {what} is {len(text):,} characters long; the limit is {limit:,}")
        return text

    return parse


def path_argument(what: str) -> Callable[[str], str]:
    """An argparse type for a file path or URL: not empty, of a length the system can use."""
    bounded = text_argument(what, MAX_PATH_CHARS)

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {what} is empty")
        return bounded(text)

    return parse


def db_option(parser: argparse.ArgumentParser) -> None:
    """`--db` on every (sub)command, SUPPRESSed by default so a sub-parser never overwrites one given earlier."""
    parser.add_argument(
        "--db",
        type=path_argument("path or URL"),
        default=argparse.SUPPRESS,
        help="database path or SQLAlchemy URL (default $ANDOR_DB or var/sessions.db)",
    )


def is_utf8(text: str) -> bool:
    """Whether `text` is text: a command-line argument or environment variable whose bytes were not
    UTF-8 reaches Python as lone surrogates ('caf\\udce9'), which no file, database or terminal takes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- the parser ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subcommand:
    """A subcommand: its help line, the arguments it takes, and what it does with them and the store.

    `arguments` runs only when this subcommand is the one given (or its help is asked for), so it
    may import what its types need. An application built on sessions passes its own to `main`
    (`python -m demo`) and keeps the conventions: one-line errors, `--db`, the exit codes.
    """

    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, EventStore], int]
    refused: tuple[type[Exception], ...] = ()
    """Its own errors for bad input (besides the planner's and the sessions package's): one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (no usage block, no echo of a huge value), and whose
    arguments are added on first use: only the subcommand given pays for its types' imports."""

    def __init__(
        self, *args: Any, arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        self._pending = arguments

    def complete(self) -> _Parser:
        """Add the arguments now, if they are still waiting to be added."""
        if self._pending is not None:
            add, self._pending = self._pending, None
            db_option(self)
            add(self)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Parse, after one check of every argument: text Python could not decode (bytes that are not
        UTF-8, which it keeps as lone surrogates) is refused here, naming its option, before any is used."""
        given = list(sys.argv[1:] if args is None else args)
        problem = _undecodable(self.complete(), given)
        if problem is not None:
            self.error(problem)
        return super().parse_known_args(given, namespace)

    def format_usage(self) -> str:
        return super(_Parser, self.complete()).format_usage()

    def format_help(self) -> str:
        return super(_Parser, self.complete()).format_help()

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {_one_line(message)}; see `{self.prog} --help`\n")


def _flags(parser: argparse.ArgumentParser, given: Sequence[str]) -> set[str]:
    """The options of `parser`, and of the subcommands `given` names, that take no value."""
    flags: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                if name in given:
                    flags |= _flags(child.complete() if isinstance(child, _Parser) else child, given)
        elif action.nargs == 0:
            flags.update(action.option_strings)
    return flags


def _undecodable(parser: argparse.ArgumentParser, given: Sequence[str]) -> str | None:
    """One sentence naming the first argument that is not UTF-8 text (its option, for a value), or None.
    An option's value is never echoed: it may be a secret."""
    for index, arg in enumerate(given):
        if is_utf8(arg):
            continue
        option, equals, _ = arg.partition("=")
        before = given[index - 1] if index else ""
        if arg.startswith("-"):
            what = f"the value of {option}" if equals and is_utf8(option) else "an option's name"
        elif before.startswith("-") and "=" not in before and before not in _flags(parser, given):
            what = f"the value of {before}"
        else:
            what = f"the argument '{shown(arg, 40)}'"
        return f"{what} is not UTF-8 text; give it in UTF-8"
    return None


def build_parser(
    subcommands: Mapping[str, Subcommand], *, prog: str, description: str, lazy: bool = False
) -> argparse.ArgumentParser:
    """The parser of `subcommands`; `lazy` leaves each one's arguments to be added when it is used."""
    parser = _Parser(prog=prog, description=description)
    parser.add_argument("--db", type=path_argument("path or URL"), help="database path or SQLAlchemy URL")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for name, subcommand in subcommands.items():
        child = sub.add_parser(name, help=subcommand.help, arguments=subcommand.arguments)
        if not lazy:
            child.complete()
    return parser


_REFUSED: tuple[type[Exception], ...] = (PlannerError, SessionsError, OSError)
"""The errors raised on purpose for bad input (the planner's and the sessions package's trees, see
`planner.errors` and `sessions.errors`), and OSError for paths the system refuses. Anything else is
a bug and keeps its traceback."""


def main(argv: Sequence[str] | None, *, subcommands: Mapping[str, Subcommand], prog: str, description: str) -> int:
    """Parse `argv`, open the store `--db` names and run the subcommand given on it; its exit code."""
    args = build_parser(subcommands, prog=prog, description=description, lazy=True).parse_args(argv)
    from sessions.store.sql import open_store

    try:
        store = open_store(args.db)
    except _REFUSED as error:
        return _refuse(error)
    subcommand = subcommands[args.cmd]
    try:
        return subcommand.run(args, store)
    except (*_REFUSED, *subcommand.refused) as error:
        return _refuse(error)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        return 130
    finally:
        store.close()
