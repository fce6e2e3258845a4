"""The `command` verb's options, generated from the command models (`planner.commands`).

Each verb is a model's kind and each of its options one of the model's fields, named, bounded and
described as the model declares it (its `Spelling`, constraints and description), so a field added
to a model becomes an option with no change here, and a value the model would refuse is refused
while the arguments are parsed, by name. `command_payload` reads the options back the same way.
"""

from __future__ import annotations

import argparse
from enum import Enum
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from sessions.cli.arguments import MAX_SEQ, amount, bounds, choice, session_ref, template_ref, whole
from sessions.cli.context import operator
from sessions.cli.conventions import db_option, text_argument

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from planner.commands import Command, Spelling

__all__ = ["command_arguments", "command_payload", "parsed_command"]

MAX_WAIT_S = 86_400.0


def command_arguments(parser: argparse.ArgumentParser) -> None:
    """`command ID VERB [options]`: a sub-parser per command model, `--wait` and `--timeout` before or after the verb."""
    from planner.commands import COMMAND_MODELS

    parser.add_argument("session_id", type=session_ref)
    _wait_options(parser)
    parser.set_defaults(wait=False, timeout=30.0)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for kind, model in COMMAND_MODELS.items():
        verb = verbs.add_parser(kind.replace("_", "-"), help=model.model_fields["kind"].description)
        db_option(verb)
        _wait_options(verb)
        for name, field in _fields(model).items():
            _add_field(verb, name, field)


def command_payload(args: argparse.Namespace) -> dict[str, Any]:
    """The command a verb's arguments describe: the verb is the model's kind and its options are
    named after the model's fields (`_add_field`), so the fields are read off the model."""
    from planner.commands import COMMAND_MODELS
    from planner.templates import parse_values

    kind = args.verb.replace("-", "_")
    payload: dict[str, Any] = {"kind": kind}
    for name, field in _fields(COMMAND_MODELS[kind]).items():
        value = getattr(args, name, None)
        if value is not None and value is not False:
            payload[name] = parse_values(value) if _is_mapping(field) else value
    payload["by"] = operator(payload.get("by"))
    return payload


def parsed_command(payload: dict[str, Any]) -> Command:
    """`payload` as the command a client sends; `InvalidCommand` says in one sentence, in the
    operator's words, what the model refused."""
    from pydantic import ValidationError

    from planner.commands import describe_command_error, parse_command
    from sessions.errors import InvalidCommand

    try:
        return parse_command(payload)
    except ValidationError as error:
        raise InvalidCommand(describe_command_error(error)) from None


def _wait_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait", action="store_true", default=argparse.SUPPRESS, help="wait until the runner applies or rejects it"
    )
    parser.add_argument(
        "--timeout",
        type=amount(0, False, MAX_WAIT_S),
        default=argparse.SUPPRESS,
        help="seconds to wait with --wait (default 30)",
    )


def _is_mapping(field: FieldInfo) -> bool:
    """A field of named values (a template's params): given as repeated `name=value` options."""
    return get_origin(field.annotation) is dict


def _fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """A command's fields an operator gives: the kind is the verb, and the id is made when it is queued."""
    return {name: field for name, field in model.model_fields.items() if name not in ("kind", "command_id")}


def _unwrapped(annotation: object) -> tuple[object, list[object]]:
    """`Annotated[T, ...]` as T and its metadata, constraints given as `Field(...)` flattened in."""
    from pydantic.fields import FieldInfo

    if get_origin(annotation) is not Annotated:
        return annotation, []
    base, *extras = get_args(annotation)
    rules: list[object] = []
    for extra in extras:
        rules.extend(extra.metadata if isinstance(extra, FieldInfo) else [extra])
    return base, rules


def _shape(field: FieldInfo) -> tuple[object, list[object], bool, Spelling]:
    """A field's value type, that value's constraints, whether the field repeats it, and its spelling."""
    from planner.commands import Spelling

    annotation = field.annotation
    if get_origin(annotation) in (Union, UnionType):  # `X | None`: an option that may be left out
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    many = get_origin(annotation) is list
    base, inner = _unwrapped(get_args(annotation)[0] if many else annotation)
    rules = inner if many else [*field.metadata, *inner]  # a list's own constraints count its items
    spelling = next((rule for rule in [*field.metadata, *inner] if isinstance(rule, Spelling)), Spelling())
    return base, rules, many, spelling


def _reading(base: object, rules: list[object], noun: str, unit: str | None) -> dict[str, Any]:
    """How argparse reads one value of type `base`: a flag, a choice, or a type function bounded as
    the model bounds it. A type with no reading here fails when the parser is built, not when used."""
    from planner.templates import Template

    if base is bool:
        return {"action": "store_true"}
    if base is Template:  # the command carries the template; the option names a stored one (`with_template`)
        return {"type": template_ref, "metavar": "NAME[@VERSION]"}
    if get_origin(base) is Literal:
        return {"choices": list(get_args(base))}
    if isinstance(base, type) and issubclass(base, Enum):
        return {"type": choice(base, noun), "help": ", ".join(str(kind.value) for kind in base)}
    if base is int:
        low, _, high = bounds(rules)
        return {"type": whole(int(max(low, -MAX_SEQ)), int(min(high, MAX_SEQ)))}
    if base is float:
        return {"type": amount(*bounds(rules), f" of {unit}" if unit else "")}
    limits = (getattr(rule, "max_length", None) for rule in rules)
    limit = next((length for length in limits if length is not None), None)
    if base is str and limit is not None:
        return {"type": text_argument(noun, limit)}
    raise TypeError(f"the command line has no reading for {base!r} with {rules}; texts need a max_length")


def _add_field(parser: argparse.ArgumentParser, name: str, field: FieldInfo) -> None:
    """One command-model field as an option (or as positional arguments): its flag and noun from the
    field's `Spelling`, its help from its description, its bounds from its own constraints, so a
    value the model would refuse is refused here first, by name."""
    base, rules, many, spelling = _shape(field)
    option = spelling.option or "--" + name.replace("_", "-")
    noun = spelling.noun or (spelling.argument or option.lstrip("-")).lower().replace("-", " ")
    if _is_mapping(field):
        parser.add_argument(
            option,
            dest=name,
            action="append",
            metavar="NAME=VALUE",
            type=text_argument(noun, 600),
            help=field.description,
        )
        return
    settings = _reading(base, rules, noun, spelling.unit)
    if field.description:
        settings["help"] = field.description
    if spelling.argument is not None:
        parser.add_argument(name, nargs="*", default=[], metavar=spelling.argument, **settings)
    else:
        repeated = {"action": "append"} if many else {}
        parser.add_argument(option, dest=name, required=field.is_required(), **repeated, **settings)
