"""Argument types the verbs share: every number bounded and every name checked before it reaches the store.

A value the store, the engine or a command model would refuse is refused here first, by name, in
one sentence (argparse's `ArgumentTypeError`, which `sessions.cli.conventions` prints as one line).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from planner.inputs import shown
from sessions.cli.conventions import PROG, text_argument

if TYPE_CHECKING:
    from enum import Enum

__all__ = [
    "MAX_SEQ",
    "amount",
    "bounds",
    "choice",
    "operator_argument",
    "session_ref",
    "template_ref",
    "whole",
]

MAX_SEQ = 2**31 - 1
"""Event numbers are 32-bit integers in the store; a larger `--at` can name no event."""


def bounds(rules: Sequence[object]) -> tuple[float, bool, float]:
    """The bounds pydantic constraints declare (ge/gt, le), so the CLI checks what the model checks."""
    low, inclusive, high = -math.inf, True, math.inf
    for rule in rules:
        if getattr(rule, "ge", None) is not None:
            low, inclusive = rule.ge, True  # type: ignore[attr-defined]
        if getattr(rule, "gt", None) is not None:
            low, inclusive = rule.gt, False  # type: ignore[attr-defined]
        if getattr(rule, "le", None) is not None:
            high = rule.le  # type: ignore[attr-defined]
    return low, inclusive, high


def whole(low: int, high: int) -> Callable[[str], int]:
    """A whole number from `low` to `high`."""

    def parse(text: str) -> int:
        try:
            value: int | None = int(text)
        except ValueError:  # includes numbers too long to convert
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"give a whole number from {low} to {high}, not '{shown(text, 24)}'")
        return value

    return parse


def amount(low: float, inclusive: bool, high: float, unit: str = "") -> Callable[[str], float]:
    """A finite number from `low` (above it, unless `inclusive`) to `high`; `unit` names it in the error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value >= low if inclusive else value > low) and value <= high):
            above = f"from {low:g}" if inclusive else f"above {low:g}"
            raise argparse.ArgumentTypeError(
                f"give a number{unit} {above} and at most {high:g}, not '{shown(text, 24)}'"
            )
        return value

    return parse


def choice(kinds: type[Enum], noun: str) -> Callable[[str], str]:
    """One of an enum's values, called a `noun` in the error."""
    names = ", ".join(str(kind.value) for kind in kinds)

    def parse(text: str) -> str:
        try:
            return str(kinds(text).value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{shown(text, 24)}' is not a {noun}; choose from {names}") from None

    return parse


def session_ref(text: str) -> str:
    """A session id to look up: printable and at most 200 characters (the store says whether it exists)."""
    if not text.strip() or len(text) > 200 or not text.isprintable():
        raise argparse.ArgumentTypeError(f"'{shown(text, 24)}' is not a session id; `{PROG} list` shows them")
    return text


def template_ref(text: str) -> str:
    """`NAME` or `NAME@VERSION`, checked as a template name before the store is asked for it."""
    from planner.inputs import InputError
    from planner.templates import parse_ref

    try:
        parse_ref(text_argument("template", 200)(text))
    except InputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.strip()


def operator_argument(parser: argparse.ArgumentParser, does: str) -> None:
    """`--operator NAME`: who `does` what the verb does (`sessions.cli.context.operator` fills the default)."""
    parser.add_argument(
        "--operator",
        dest="by",
        type=text_argument("operator name", 200),
        help=f"{does} (default $ANDOR_OPERATOR, else the user name)",
    )
