"""What a new session is, as `run` and `submit` take it: its task, model, engine settings, secrets and id.

The engine options are bounded as `EngineConfig` bounds them, read off the model, and the settings
are validated together before anything is recorded. Secrets (`planner.secrets`) come from `--secret
NAME=VALUE` or `$ANDOR_SECRET_NAME` and are never printed: no message here echoes a value.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, get_args

from planner.inputs import shown
from sessions.cli.arguments import MAX_SEQ, amount, bounds, choice, operator_argument, whole
from sessions.cli.context import operator
from sessions.cli.conventions import is_utf8, text_argument
from sessions.errors import SessionInputError

if TYPE_CHECKING:
    from planner.config import EngineConfig
    from planner.effects import RequestRule
    from sessions.store import EventStore

__all__ = ["ablation_config", "add_ablations", "create", "session_arguments"]

MAX_TASK_CHARS = 4000
"""A task is a sentence or a paragraph; a longer one is a pasted document, and every prompt carries it."""


def session_arguments(parser: argparse.ArgumentParser) -> None:
    """What a new session is (`run` and `submit`): its task, model, settings and id."""
    from planner.config import Breakpoint, EngineConfig
    from sessions.backends import EFFORT_HELP, EFFORTS, MODEL_HELP

    defaults = EngineConfig()
    breakpoint_ = choice(Breakpoint, "breakpoint")
    kinds = ", ".join(kind.value for kind in Breakpoint)
    parser.add_argument("--task", required=True, type=text_argument("task", MAX_TASK_CHARS))
    parser.add_argument("--start-url", type=_start_url, help="a web page to start on (without it: the dry environment)")
    parser.add_argument("--model", default="demo", type=text_argument("model spec", 200_000), help=MODEL_HELP)
    parser.add_argument("--effort", choices=EFFORTS, default=None, help=EFFORT_HELP)
    parser.add_argument("--max-steps", type=_setting("max_steps"), default=defaults.max_steps)
    parser.add_argument("--max-revisions", type=_setting("max_revisions"), default=defaults.max_revisions)
    parser.add_argument(
        "--retries",
        type=_setting("expansion_retries"),
        default=defaults.expansion_retries,
        help="extra attempts per model call",
    )
    parser.add_argument("--completion-check", choices=["root", "every_and"], default="root")
    add_ablations(parser)
    parser.add_argument("--no-constraints", action="store_true", help="skip the task-constraint extraction call")
    parser.add_argument(
        "--max-cost",
        type=amount(*bounds(EngineConfig.model_fields["max_cost_usd"].metadata), " of USD"),
        help="pause once the model calls' estimated cost reaches this many USD",
    )
    pair = get_args(EngineConfig.model_fields["model_prices"].annotation)[0]  # tuple[price, price] | None
    price = amount(*bounds(get_args(get_args(pair)[0])[1].metadata), " of USD")
    for name, side in (("--price-in", "input"), ("--price-out", "output")):
        parser.add_argument(
            name, type=price, help=f"a Claude model's {side} price in USD per million tokens (one the table lacks)"
        )
    parser.add_argument("--no-guard", action="store_true", help="run risky actions without asking")
    parser.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        type=text_argument("allowed domain", 253),
        metavar="HOST",
        help="a host the browser may reach besides the start URL's (subdomains included; repeatable)",
    )
    parser.add_argument(
        "--request-rule",
        action="append",
        default=[],
        type=_request_rule,
        metavar="RULE",
        help="what the browser does with a request the page sends, 'VERDICT METHODS HOST/PATH' (allow, hold or "
        "block; e.g. 'allow POST shop.example/search'); the first that matches decides, and without one every "
        "request that can change state waits for approval (repeatable)",
    )
    parser.add_argument(
        "--breakpoint", action="append", default=[], type=breakpoint_, help=f"pause by itself: {kinds} (repeatable)"
    )
    parser.add_argument("--paused", action="store_true", help="create the session paused (review before it starts)")
    parser.add_argument(
        "--secret",
        action="append",
        default=[],
        type=_secret,
        metavar="NAME=VALUE",
        help="a secret the task writes as {{NAME}}: the browser types its value, and no person, file or model sees "
        "it (repeatable; $ANDOR_SECRET_NAME gives one the task names too)",
    )
    parser.add_argument("--id", type=_new_session_id, help="session id to use (default: random)")
    operator_argument(parser, "who starts it")


def add_ablations(parser: argparse.ArgumentParser) -> None:
    """The engine options a demo run and the suite share with `run` (read back by `ablation_config`)."""
    from planner.config import EngineConfig

    parser.add_argument("--no-repair", action="store_true", help="ablation: never repair failed nodes")
    parser.add_argument("--no-or", action="store_true", help="ablation: no OR alternatives")
    parser.add_argument(
        "--lookahead",
        type=_setting("lookahead"),
        default=EngineConfig().lookahead,
        help="upcoming sub-goals a model may ground while reading a page (0: one expansion call per node)",
    )


def ablation_config(args: argparse.Namespace) -> EngineConfig:
    """The engine settings the options of `add_ablations` choose."""
    return _validated(repair=not args.no_repair, or_alternatives=not args.no_or, lookahead=args.lookahead)


def create(args: argparse.Namespace, store: EventStore) -> str:
    """The session `run` and `submit` describe, recorded (`create_session`, which takes the `--id` that
    `SessionClient.create` has no parameter for); its id."""
    from planner.browser.dry import DRY_START
    from sessions.client.creation import create_session

    return create_session(
        store,
        args.task,
        args.model,
        start_url=args.start_url or DRY_START,
        config=_config(args),
        session_id=args.id,
        paused=args.paused,
        effort=args.effort,
        by=operator(args.by),
        secrets=_secrets(args),
    )


def _config(args: argparse.Namespace) -> EngineConfig:
    from planner.config import Breakpoint

    return _validated(
        repair=not args.no_repair,
        or_alternatives=not args.no_or,
        max_steps=args.max_steps,
        max_revisions=args.max_revisions,
        expansion_retries=args.retries,
        completion_check=args.completion_check,
        lookahead=args.lookahead,
        constraints=not args.no_constraints,
        max_cost_usd=args.max_cost,
        model_prices=_prices(args),
        breakpoints=frozenset(Breakpoint(b) for b in args.breakpoint),
        guard=not args.no_guard,
        allowed_domains=tuple(args.allow_domain),
        request_rules=tuple(args.request_rule),
    )


def _prices(args: argparse.Namespace) -> tuple[float, float] | None:
    """--price-in and --price-out, which mean something only together."""
    given = (args.price_in, args.price_out)
    if given == (None, None):
        return None
    if None in given:
        raise SessionInputError("give --price-in and --price-out together (USD per million input and output tokens)")
    if not args.model.startswith("claude"):
        raise SessionInputError(
            f"--price-in and --price-out apply to Claude models only, not '{shown(args.model, 60)}'"
        )
    return given


def _validated(**settings: object) -> EngineConfig:
    from pydantic import ValidationError

    from planner.config import EngineConfig
    from planner.inputs import describe_validation_error

    try:
        return EngineConfig.model_validate(settings)
    except ValidationError as error:
        raise SessionInputError(f"invalid settings: {describe_validation_error(error)}") from None


def _secrets(args: argparse.Namespace) -> dict[str, str]:
    """The session's secrets: each `--secret NAME=VALUE`, and for each `{{NAME}}` of the task not given so,
    `$ANDOR_SECRET_NAME` (a bundled demo task declares its own). A placeholder with neither is refused;
    no message ever shows a value."""
    import os

    from planner.secrets import placeholders
    from sessions.catalogue import configured

    given = dict(args.secret)
    entry = configured().bundled(args.task, args.start_url)
    bundled = entry.secrets if entry else {}  # a bundled task brings its own (create_session adds them)
    for name in placeholders(args.task):
        if name in given or name in bundled:
            continue
        variable = f"ANDOR_SECRET_{name}"
        value = os.environ.get(variable)
        if value is None:
            raise SessionInputError(
                f"the task writes {{{{{name}}}}} but gives it no value; add --secret {name}=VALUE or set ${variable}"
            )
        if not is_utf8(value):
            raise SessionInputError(f"${variable} is not UTF-8 text; set it again as UTF-8")
        given[name] = value
    return given


def _setting(name: str) -> Callable[[str], int]:
    """A whole-number engine setting, bounded as `EngineConfig` bounds it."""
    from planner.config import EngineConfig

    low, _, high = bounds(EngineConfig.model_fields[name].metadata)
    return whole(int(low), int(min(high, MAX_SEQ)))


def _start_url(text: str) -> str:
    """A page to start on: an http(s) address with a host (or the dry environment's own URL)."""
    from urllib.parse import urlsplit

    from planner.browser.dry import is_dry

    problem = f"give an http:// or https:// address such as http://127.0.0.1:8000/, not '{shown(text, 40)}'"
    if len(text) > 2000 or not text.isprintable() or any(ch.isspace() for ch in text):
        raise argparse.ArgumentTypeError(problem)
    if is_dry(text):
        return text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise argparse.ArgumentTypeError(problem) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(problem)
    return text


def _request_rule(text: str) -> RequestRule:
    from planner.effects import RequestRule, RuleSyntaxError

    try:
        return RequestRule.parse(text)
    except RuleSyntaxError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _secret(text: str) -> tuple[str, str]:
    """`--secret NAME=VALUE`, refused without ever echoing the text (it holds the value)."""
    from planner.secrets import PLACEHOLDER

    name, equals, value = text_argument("secret", 4000)(text).partition("=")
    if not equals or not PLACEHOLDER.fullmatch("{{" + name + "}}"):
        raise argparse.ArgumentTypeError(
            "write a secret as NAME=VALUE, NAME being a letter or underscore, then letters, digits or underscores"
        )
    return name, value


_NEW_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _new_session_id(text: str) -> str:
    if not _NEW_SESSION_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"give 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (not '{shown(text, 24)}')"
        )
    return text
