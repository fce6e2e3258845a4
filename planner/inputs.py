"""Input a person hands the planner: files named on a command line, and messages about them.

Every path an operator types is checked before it is opened (a FIFO would block forever, a
device or a /proc file would stream without end), and every message that quotes the input
echoes only a short, printable piece of it, so a 100 KB argument never comes back as an error.
The reasons raised here are short phrases ("no such file", "it is a directory, not a file"),
which callers put after the name of what they were reading.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import PlannerError

if TYPE_CHECKING:  # annotations only: reading a file or a path needs no pydantic
    from pydantic import ValidationError

__all__ = [
    "MAX_PATH_CHARS",
    "InputError",
    "describe_validation_error",
    "exists_as_file",
    "parse_json",
    "read_text_file",
    "shown",
]

MAX_PATH_CHARS = 4096
"""Longer than any path Linux accepts (PATH_MAX); a longer one is a mistake, not a file."""


class InputError(PlannerError):
    """A file or text that cannot be used; the message is the reason, as a short phrase."""


def shown(text: object, limit: int = 80) -> str:
    """`text` fit to quote in a one-line message: at most `limit` characters, control characters escaped."""
    text = str(text)
    clipped = text if len(text) <= limit else text[: limit - 1] + "…"
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in clipped)


def _size(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB" if count >= 100_000 else f"{count:,} bytes"


def _os_reason(error: OSError) -> str:
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        return "no such file"
    return (error.strerror or type(error).__name__).lower()


def read_text_file(path: str | os.PathLike[str], limit: int) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes.

    Anything else is refused before it is read: a directory, a FIFO (opening it would wait for a
    writer), a device or socket, an empty file (which is also how /proc files that stream without
    end present themselves), a file over the limit, an empty or over-long path, a NUL byte.
    """
    text = os.fspath(path)
    if not text.strip():
        raise InputError("the path is empty")
    if "\0" in text:
        raise InputError("the path contains a NUL character")
    if len(text) > MAX_PATH_CHARS:
        raise InputError(f"the path is {len(text):,} characters long; a path has at most {MAX_PATH_CHARS:,}")
    try:
        _check_regular(os.stat(text), limit)
        # O_NONBLOCK: should the path turn into a FIFO after the check, opening it still cannot block.
        fd = os.open(text, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            _check_regular(os.fstat(handle.fileno()), limit)
            data = handle.read(limit + 1)
    except OSError as error:
        raise InputError(_os_reason(error)) from None
    if len(data) > limit:
        raise InputError(f"it is larger than {_size(limit)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("it is not UTF-8 text") from None


def _check_regular(info: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise InputError("it is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError("it is a pipe, device or socket, not a regular file")
    if info.st_size == 0:
        raise InputError("it is empty (or a special file that reports no size, as in /proc)")
    if info.st_size > limit:
        raise InputError(f"it is {_size(info.st_size)}; the limit is {_size(limit)}")


def parse_json(text: str) -> Any:
    """JSON text as Python values; a syntax error names its line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"it is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise InputError("its JSON is nested too deeply to read") from None


def describe_validation_error(
    error: ValidationError, *, skip: int = 0, names: Mapping[str, str] | None = None, keyed: Collection[str] = ()
) -> str:
    """pydantic's errors as one phrase: where the first problem is, what it is, and how many more there are.

    `skip` drops leading location parts that mean nothing to a person (the tag of a tagged union).
    `names` puts fields in the words of the person who filled them ("max_cost_usd" is the "cost cap");
    with it, a location part it does not name is that person's own data (the name of a parameter)
    and is quoted, as is the part after a field in `keyed` (a mapping's key, whatever it says). Without it, fields keep their names: for settings typed as NAME=VALUE the field's
    name is the word the person used. Inputs are never echoed, so a huge value cannot flood the
    message, and pydantic's own wording never reaches a person.
    """
    problems = error.errors(include_url=False, include_input=False)
    if not problems:
        return "the value is not valid"
    first = problems[0]
    where = _where(first["loc"][skip:], names, keyed)
    message = _in_plain_words(first["type"], first.get("ctx") or {})
    if message is None:
        mine = first["type"] in ("value_error", "assertion_error")  # a validator's own sentence
        message = first["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ") if mine else _UNUSABLE
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{shown(where, 60) + ': ' if where else ''}{shown(message, 200)}{more}"


def _where(loc: Sequence[int | str], names: Mapping[str, str] | None, keyed: Collection[str]) -> str:
    """A location as a person reads it: items counted from 1 ("sub-goals #2"), fields by `names`."""
    parts = []
    after: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            parts.append(f"#{part + 1}")
        elif part == "[key]":
            pass  # pydantic's mark on the key of a mapping: the key itself is the part before it
        elif names is None:
            parts.append(part)
        elif after in keyed or part not in names:
            parts.append(f"'{shown(part, 30)}'")
        else:
            parts.append(names[part])
        after = part
    return " ".join(parts)


_UNUSABLE = "is not a usable value"
"""What any error pydantic has no phrase for here is called: its own message speaks of Python types."""

_PLAIN: dict[str, str] = {
    "missing": "is required",
    "extra_forbidden": "is not an accepted field",
    "string_type": "must be text",
    "string_unicode": "must be text",
    "bytes_type": "must be text",
    "string_pattern_mismatch": "is not in the expected form",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "set_type": "must be a list",
    "frozen_set_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be an object with named fields",
    "model_type": "must be an object with named fields",
    "model_attributes_type": "must be an object with named fields",
    "none_required": "must be left out",
    "json_invalid": "is not valid JSON",
    "json_type": "must be JSON text",
    "greater_than": "must be more than {gt}",
    "greater_than_equal": "must be {ge} or more",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be {le} or less",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "union_tag_invalid": "must be one of {expected_tags}",
}
"""pydantic's error types in the words an operator uses; any other is `_UNUSABLE`, or a validator's own sentence."""


def _in_plain_words(kind: str, ctx: dict[str, object]) -> str | None:
    """One of pydantic's errors as a short phrase for a person, or None if there is no phrase for it."""
    if kind in ("too_short", "string_too_short"):
        least = int(str(ctx.get("min_length", 1)))
        if least == 1:
            return "cannot be empty"
        return f"needs at least {least} {'characters' if kind == 'string_too_short' else 'items'}"
    if kind == "string_too_long":
        return f"is too long: at most {ctx.get('max_length')} characters"
    if kind == "too_long":
        actual = ctx.get("actual_length")
        return f"too many{f' ({actual})' if actual is not None else ''}; at most {ctx.get('max_length')}"
    template = _PLAIN.get(kind)
    if template is None:
        return None
    try:
        return template.format(**{key: shown(_number(value), 80) for key, value in ctx.items()})
    except (KeyError, IndexError):
        return None


def _number(value: object) -> str:
    """A bound as a person writes it: 10000, not 10000.0."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def exists_as_file(text: str) -> bool:
    """Whether `text` names an existing file, without raising for names no file could have."""
    try:
        return "\0" not in text and len(text) <= MAX_PATH_CHARS and Path(text).is_file()
    except OSError:
        return False
