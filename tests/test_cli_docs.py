"""docs/cli.md is the command line's reference, and a reference that names a verb or an option the code
lost (or misses one it gained) misleads every reader: each usage its tables and its `template` block
write is checked against the real argparse parsers, and every verb the parsers have must be written
there. Pure parsing: no store, no server.
"""

from __future__ import annotations

import argparse
import re
from functools import cache
from itertools import product
from pathlib import Path

import pytest

import demo.cli
import demo.shop.__main__
from sessions.cli import build_parser
from sessions.worker import fleet

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"

CommandPath = tuple[str, ...]
"""A program and the verbs typed after it: ("sessions", "command", "inject"), ("demo.shop",)."""

NEW_SESSION, VERBS, OTHERS = "Options of a new session", "Command verbs", "Other entry points"

_OPTION = re.compile(r"--[a-z][a-z0-9-]*")
_VERB = re.compile(r"[a-z][a-z0-9._-]*(?:\\?\|[a-z][a-z0-9._-]*)*")  # a verb, or alternatives: `save\|list`
_CELL_BORDER = re.compile(r"(?<!\\)\|")  # a table cell's `|`, not an escaped `\|` inside it
_ONLY = re.compile(r"`([a-z-]+)` only")


@cache
def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Each program's parser, as its `main` builds it."""
    return {
        "sessions": build_parser(),
        "demo": demo.cli.build_parser(),
        "demo.shop": demo.shop.__main__.build_parser(),
        "sessions.worker.fleet": fleet.build_parser(),
    }


def _insides(parser: argparse.ArgumentParser) -> tuple[set[str], dict[str, argparse.ArgumentParser]]:
    """A parser's option strings and its sub-parsers by verb. argparse has no public way to list either,
    so this reads its private `_option_string_actions` and `_SubParsersAction`: the one place this test
    leans on argparse's insides."""
    verbs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    return set(parser._option_string_actions), dict(verbs.choices) if verbs else {}


def _parser(path: CommandPath) -> argparse.ArgumentParser:
    """The parser of a command path, failing the test at the first program or verb that does not exist."""
    program, *verbs = path
    assert program in _parsers(), f"docs/cli.md names `python -m {program}`, which has no parser here"
    parser = _parsers()[program]
    for depth, verb in enumerate(verbs, start=2):
        _, choices = _insides(parser)
        assert verb in choices, f"`python -m {' '.join(path[:depth])}`: no such verb; there are {sorted(choices)}"
        parser = choices[verb]
    return parser


# -- what docs/cli.md writes -------------------------------------------------------------------------


def _section(heading: str) -> list[str]:
    """The lines under `## heading`, up to the next such heading."""
    lines = CLI_MD.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"## {heading}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1 : end]


def _intro(heading: str) -> str:
    """The prose of a section before its table."""
    lines = _section(heading)
    return " ".join(lines[: next(i for i, line in enumerate(lines) if line.startswith("|"))])


def _rows(heading: str) -> list[tuple[str, str]]:
    """The first cell (its code marks dropped) and the second of each row of a section's table."""
    table = [line.strip() for line in _section(heading) if line.startswith("|")][2:]  # past the header and `|---|`
    cells = [[cell.strip() for cell in _CELL_BORDER.split(row[1:-1])] for row in table]
    return [(first.replace("`", ""), second) for first, second, *_ in cells]


def _usage(prefix: CommandPath, text: str) -> tuple[list[CommandPath], list[str]]:
    """The command paths a usage names under `prefix` (`template save\\|list ...`: one per alternative),
    from its leading verbs, and the options it writes."""
    verbs: list[list[str]] = []
    for word in text.split():
        if not _VERB.fullmatch(word):
            break
        verbs.append(word.replace("\\|", "|").split("|"))
    return [(*prefix, *chosen) for chosen in product(*verbs)], _OPTION.findall(text)


def _usages() -> list[tuple[str, CommandPath, list[str]]]:
    """Every usage the reference writes: the section it is in, a command path it names and the options
    written with it."""
    usages = [("`python -m sessions`", *_usage(("sessions",), first)) for first, _ in _rows("`python -m sessions`")]
    takers = re.findall(r"`([a-z-]+)`", _intro(NEW_SESSION))  # "`run` and `submit` take the same options"
    for first, what in _rows(NEW_SESSION):
        only = _ONLY.match(what)
        verbs = [only.group(1)] if only else takers
        usages.append((NEW_SESSION, [("sessions", verb) for verb in verbs], _OPTION.findall(first)))
    every_verb = re.search(r"every verb also takes (.*?)\(", _intro(VERBS))
    assert every_verb, f"docs/cli.md's '{VERBS}' no longer says which options every verb takes"
    for first, _ in _rows(VERBS):
        paths, options = _usage(("sessions", "command"), first)
        usages.append((VERBS, paths, [*options, *_OPTION.findall(every_verb.group(1))]))
    typed = [line.removeprefix("python -m ") for line in _section("`template`") if line.startswith("python -m ")]
    usages += [("`template`", *_usage((), line)) for line in typed]
    for first, _ in _rows(OTHERS):
        if not first.startswith("python -m bench."):  # the benchmarks: docs/benchmarks.md's to describe
            usages.append((OTHERS, *_usage((), first.removeprefix("python -m "))))
    return [(heading, path, options) for heading, paths, options in usages for path in paths]


USAGES = _usages()
PATHS = sorted({path for _, path, _ in USAGES})
OPTIONS = sorted({(path, option) for _, path, options in USAGES for option in options})


def test_the_reference_is_read_whole() -> None:
    """The reading above finds every part of the reference, so the checks below do not pass on nothing."""
    assert {path[0] for path in PATHS} == {"sessions", "demo", "demo.shop", "sessions.worker.fleet"}
    for path in [("sessions", "run"), ("sessions", "command", "inject"), ("sessions", "template", "delete")]:
        assert path in PATHS, f"{' '.join(path)} was not read from docs/cli.md"
    assert (("sessions", "submit"), "--max-cost") in OPTIONS
    assert (("sessions", "submit"), "--exit-on-pause") not in OPTIONS, "`run` only, the row says"
    assert (("sessions", "command", "undo"), "--provenance") in OPTIONS


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_every_verb_the_reference_writes_exists(path: CommandPath) -> None:
    _parser(path)


@pytest.mark.parametrize(("path", "option"), OPTIONS, ids=[f"{' '.join(path)} {option}" for path, option in OPTIONS])
def test_every_option_the_reference_writes_exists(path: CommandPath, option: str) -> None:
    options = _insides(_parser(path))[0]
    assert option in options, f"docs/cli.md gives `python -m {' '.join(path)}` the option {option}, which it lacks"


@pytest.mark.parametrize(
    ("parent", "table"),
    [
        pytest.param(("sessions",), "`python -m sessions`", id="sessions"),
        pytest.param(("sessions", "template"), "`python -m sessions`", id="sessions template"),
        pytest.param(("sessions", "command"), VERBS, id="sessions command"),
        pytest.param(("demo",), OTHERS, id="demo"),
    ],
)
def test_every_verb_is_in_its_table(parent: CommandPath, table: str) -> None:
    """A verb added to the code without a row in the reference fails here."""
    depth = len(parent)
    below = {
        path[depth] for heading, path, _ in USAGES if heading == table and path[:depth] == parent and len(path) > depth
    }
    missing = sorted(set(_insides(_parser(parent))[1]) - below)
    assert not missing, f"docs/cli.md's '{table}' table has no row for `python -m {' '.join(parent)}` {missing}"
