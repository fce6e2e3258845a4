"""`python -m sessions`: the headless contract other tools and tests rely on.

Every subcommand prints JSON on its last stdout line (or a readable tree for `show`); errors go to
stderr as one sentence saying what to do. Exit codes: 0 done, 1 the run failed (or a command was
rejected), 2 bad input (nothing was recorded), 3 the run paused and `--exit-on-pause` was given.

Bad input is refused as early as it can be: an argument whose bytes are not UTF-8 is refused where
arguments are parsed, naming its option, before any is used; argparse type functions bound every
number and the size of every text before anything reaches the store, and the errors the store, the
planner and the file readers raise on purpose become one line here. Anything else is a bug and keeps
its traceback.

Secrets (`planner.secrets`) come from `--secret NAME=VALUE` or `$ANDOR_SECRET_NAME` and are never
printed: errors do not echo them, and what is printed of a session is read masked (`sessions.store.reading`)
or, for the run this process drives, masked with the runner's own secrets.

A subcommand's arguments are added only when it is the one given, and each imports what it uses:
`list` loads no engine, model registry or command model; `command` loads the command models its
verbs are built from (`_add_field`). Applications built on sessions (`python -m demo`) add their own
subcommands (`Subcommand`) with the same conventions.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, Union, get_args, get_origin

from planner.errors import PlannerError
from planner.inputs import MAX_PATH_CHARS, shown
from sessions.errors import SessionsError

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from planner.commands import Spelling
    from planner.config import EngineConfig
    from planner.effects import RequestRule
    from planner.state import SessionState
    from sessions.store import EventStore
    from sessions.store.artifacts import LocalArtifacts

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

EXIT_OK = 0
EXIT_FAILED = 1
"""The run ended without success, or `command --wait` saw the command rejected."""
EXIT_USAGE = 2
"""Bad input: refused before anything was recorded."""
EXIT_PAUSED = 3
"""`--exit-on-pause`: the session paused by itself (or by an operator) and this process left it waiting."""

MAX_TASK_CHARS = 4000
"""A task is a sentence or a paragraph; a longer one is a pasted document, and every prompt carries it."""
MAX_SEQ = 2**31 - 1
"""Event numbers are 32-bit integers in the store; a larger `--at` can name no event."""
MAX_WAIT_S = 86_400.0
PROG = "python -m sessions"


class _UsageError(Exception):
    """Arguments that parse but cannot be used together, or a session they name that cannot be used."""


# -- output ----------------------------------------------------------------------------------------

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


def emit(payload: dict[str, Any]) -> None:
    """The subcommand's result: one JSON line on stdout, the last one it prints."""
    print(json.dumps(payload, ensure_ascii=False), flush=True)


def run_summary(session_id: str, state: SessionState) -> dict[str, Any]:
    """What a finished or paused run reports: the JSON a script reads after `run`, `resume` or a demo run.
    The runner's state holds the secrets' values (`planner.secrets`); what is printed has them masked."""
    mask = state.secrets.mask
    return {
        "session_id": session_id,
        "status": state.status.value,
        "final_answer": mask(state.final_answer) if state.final_answer is not None else None,
        "steps": state.steps,
        "reason": mask(state.reason) if state.reason is not None else None,
    }


# -- running and pausing ---------------------------------------------------------------------------


def _cli_line(*words: str, db: str | None) -> str:
    """A command line a person can paste: quoted where the shell needs it, with the same --db but
    never its password (`sessions.store.sql.without_password`)."""
    from sessions.store.sql import without_password

    return " ".join([PROG, *map(shlex.quote, words), *(["--db", shlex.quote(without_password(db))] if db else [])])


def _pause_notice(state: SessionState, session_id: str, db: str | None, detached: bool) -> str:
    """One line that says why a session waits and which command continues it.

    `detached`: this process is leaving (`--exit-on-pause`), so the session continues only when a
    runner is started again (`resume ID --exit-on-pause`, so a script keeps its mode); otherwise
    this process is the runner, and a queued command is enough.
    """
    from planner.state import RunStatus

    if detached:
        resume = _cli_line("resume", session_id, "--exit-on-pause", db=db)
    else:
        resume = _cli_line("command", session_id, "resume", db=db)
    then = f" && {resume}" if detached else ""
    approval = state.approval
    if state.status is RunStatus.AWAITING_APPROVAL and approval is not None:
        approve = _cli_line("command", session_id, "approve", db=db)
        return (
            f"session {session_id} waits for approval of '{shown(approval.action, 60)}' at {approval.node_id} "
            f"({shown(approval.rule, 60)}); approve it with: {approve}{then} (or use reject, or edit-action)"
        )
    spent = state.over_budget
    if spent is not None:
        cap = float(state.config.max_cost_usd or 0.0)
        raised = min(10_000.0, max(2 * cap, 2 * state.metrics.cost_usd))
        budget = _cli_line("command", session_id, "budget", "--max-cost", f"{raised:.4g}", db=db)
        return f"session {session_id} paused ({spent}); continue with: {budget} && {resume}"
    why = shown(state.reason, 120) if state.reason else "it was created paused"
    return f"session {session_id} paused ({why}); continue with: {resume}"


class _PauseNotice:
    """The CLI's `on_idle` hook: one stderr line per pause, and with `--exit-on-pause` the end of the wait."""

    def __init__(self, session_id: str, db: str | None, exit_on_pause: bool) -> None:
        self.session_id = session_id
        self.db = db
        self.exit_on_pause = exit_on_pause
        self.left = False
        self._last: tuple[object, ...] | None = None

    def __call__(self, state: SessionState) -> bool:
        approval = state.approval.node_id if state.approval is not None else None
        key = (state.status, state.reason, state.steps, approval)
        if key != self._last:  # a rejected command while paused changes nothing worth repeating
            self._last = key
            notice = state.secrets.mask(_pause_notice(state, self.session_id, self.db, self.exit_on_pause))
            print(notice, file=sys.stderr, flush=True)
        self.left = self.exit_on_pause
        return not self.exit_on_pause


@contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C and SIGTERM end the run at the next step boundary (it stays resumable); handlers are
    restored afterwards, and only the main thread can install them (tests call `main` from threads)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, lambda *_: stop()) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _drive(store: EventStore, session_id: str, args: argparse.Namespace) -> int:
    """Run a session in this process until it ends; Ctrl-C or SIGTERM leaves it paused."""
    from planner.state import RunStatus
    from sessions.worker.runner import Runner

    stopping = threading.Event()
    notice = _PauseNotice(session_id, args.db, args.exit_on_pause)
    print(f"session {session_id}", file=sys.stderr, flush=True)
    with _stop_on_signals(stopping.set):
        runner = Runner(store, session_id, artifacts=_artifacts(args))
        state = runner.run(should_stop=stopping.is_set, on_idle=notice)
    emit(run_summary(session_id, state))
    if state.status is RunStatus.SUCCEEDED:
        return EXIT_OK
    return EXIT_PAUSED if notice.left and not state.finished else EXIT_FAILED


def _artifacts(args: argparse.Namespace) -> LocalArtifacts:
    """The artifact store of this invocation: `--artifacts` where the subcommand has it, else the
    directory next to the database (`artifacts_root`)."""
    from pathlib import Path

    from sessions.backends import artifacts_root
    from sessions.store.artifacts import LocalArtifacts

    given = getattr(args, "artifacts", None)
    return LocalArtifacts(Path(given) if given else artifacts_root(args.db))


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
        raise _UsageError("give --price-in and --price-out together (USD per million input and output tokens)")
    if not args.model.startswith("claude"):
        raise _UsageError(f"--price-in and --price-out apply to Claude models only, not '{shown(args.model, 60)}'")
    return given


def ablation_config(args: argparse.Namespace) -> EngineConfig:
    """The engine settings the options of `add_ablations` choose."""
    return _validated(repair=not args.no_repair, or_alternatives=not args.no_or, lookahead=args.lookahead)


def _validated(**settings: object) -> EngineConfig:
    from pydantic import ValidationError

    from planner.config import EngineConfig
    from planner.inputs import describe_validation_error

    try:
        return EngineConfig.model_validate(settings)
    except ValidationError as error:
        raise _UsageError(f"invalid settings: {describe_validation_error(error)}") from None


# -- subcommands -----------------------------------------------------------------------------------


def _create(args: argparse.Namespace, store: EventStore) -> str:
    """The session `run` and `submit` describe, recorded."""
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
        by=_operator(args.by),
        secrets=_secrets(args),
    )


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
            raise _UsageError(
                f"the task writes {{{{{name}}}}} but gives it no value; add --secret {name}=VALUE or set ${variable}"
            )
        if not _utf8(value):
            raise _UsageError(f"${variable} is not UTF-8 text; set it again as UTF-8")
        given[name] = value
    return given


def _run(args: argparse.Namespace, store: EventStore) -> int:
    return _drive(store, _create(args, store), args)


def _submit(args: argparse.Namespace, store: EventStore) -> int:
    """Record the session for the workers (`worker`) to run; a paused one waits for its `resume`."""
    session_id = _create(args, store)
    emit({"session_id": session_id, "status": "paused" if args.paused else "queued"})
    return EXIT_OK


def _worker(args: argparse.Namespace, store: EventStore) -> int:
    """Run the sessions that need a runner until Ctrl-C or SIGTERM, which hands the running ones back."""
    from sessions.worker.processes import Worker

    def report(session_id: str, what: str) -> None:
        print(f"worker {worker.owner}: session {session_id} {what}", file=sys.stderr, flush=True)

    worker = Worker(
        store,
        concurrency=args.concurrency,
        artifacts=_artifacts(args),
        browser_endpoint=args.browser_endpoint,
        stale_after=args.lease_seconds,
        on_run=report,
    )
    print(f"worker {worker.owner} ready (up to {args.concurrency} at a time)", file=sys.stderr, flush=True)
    with _stop_on_signals(worker.stop):
        runs = worker.run()
    emit({"worker": worker.owner, "runs": runs})
    return EXIT_OK


def _resume(args: argparse.Namespace, store: EventStore) -> int:
    from planner.state import RunStatus
    from sessions.client.commands import queue_command
    from sessions.store.reading import load_state

    state = load_state(store, args.session_id)
    if state.finished:
        raise _UsageError(f"session {args.session_id} has ended ({state.status.value}); fork it to continue")
    if state.status in (RunStatus.PAUSED, RunStatus.STOPPED):
        queue_command(store, args.session_id, {"kind": "resume", "by": _operator(args.by)})
    return _drive(store, args.session_id, args)


def _fork(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.creation import fork_session

    new_id = fork_session(store, args.session_id, args.at, by=_operator(args.by))
    emit({"session_id": new_id, "forked_from": args.session_id, "at": args.at, "status": "paused"})
    return EXIT_OK


def _list(args: argparse.Namespace, store: EventStore) -> int:
    rows = [
        {
            "session_id": info.id,
            "task": info.task,
            "status": info.status,
            "steps": info.steps,
            "model": info.model,
            "age_s": round(time.time() - info.created_at, 1),
            "forked_from": info.parent_id,
        }
        for info in store.sessions()
    ]
    emit({"sessions": rows})
    return EXIT_OK


def _export(args: argparse.Namespace, store: EventStore) -> int:
    from planner.state import replay
    from sessions.client.export import trace
    from sessions.store.reading import load_events

    events = load_events(store, args.session_id, upto=args.at)  # refuses an --at past the end
    emit(trace(args.session_id, replay(events), events))
    return EXIT_OK


def _show(args: argparse.Namespace, store: EventStore) -> int:
    from planner.render import tree_text
    from sessions.store.reading import load_state

    state = load_state(store, args.session_id, upto=args.at)
    print(f"{state.task}\nstatus: {state.status.value}" + (f" ({state.reason})" if state.reason else ""))
    print(tree_text(state.tree))
    if state.final_answer:
        print(f"answer: {state.final_answer}")
    return EXIT_OK


def _diagnose(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.diagnose import diagnose_command

    line, code = diagnose_command(store, args.session_id, args.model)
    print(line)
    return code


def _report(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.report import report_command

    line, code = report_command(store, args.session_id, args.out, _artifacts(args))
    print(line)
    return code


def _reask(args: argparse.Namespace, store: EventStore) -> int:
    """A recorded model call asked again, both answers and their diff as JSON; `--adopt` queues the new one."""
    from sessions.client.counterfactual import adopt, reask

    settings = dict(args.setting or [])
    if args.effort is not None:
        settings["effort"] = args.effort
    found = reask(store, args.session_id, args.call, instruction=args.instruction, model=args.model, settings=settings)
    printed = found.model_dump(mode="json")
    if args.adopt:
        printed["adopted"] = adopt(store, found, by=_operator(args.operator))
    emit(printed)
    return EXIT_OK


def _reask_setting(text: str) -> tuple[str, Any]:
    """`--setting NAME=VALUE`: an engine setting for the re-ask, its value read as JSON (else as text)."""
    name, equals, value = text_argument("setting", 1000)(text).partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"write a setting as NAME=VALUE (e.g. lookahead=0), not '{shown(text, 40)}'")
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


def _reask_arguments(parser: argparse.ArgumentParser) -> None:
    from sessions.backends import EFFORTS, MODEL_HELP

    parser.add_argument("session_id", type=_session_ref)
    parser.add_argument(
        "--call", required=True, type=_whole(1, MAX_SEQ), help="the model call's event number (#N in the inspector)"
    )
    parser.add_argument(
        "--instruction", type=text_argument("instruction", 2000), help="an instruction added to the call's prompt"
    )
    parser.add_argument("--model", type=text_argument("model spec", 200_000), help=f"ask another model: {MODEL_HELP}")
    parser.add_argument(
        "--setting",
        action="append",
        type=_reask_setting,
        help="an engine setting for this call, NAME=VALUE (repeat): or_alternatives, lookahead, max_children, "
        "expansion_retries, repair, max_revisions",
    )
    parser.add_argument("--effort", choices=EFFORTS, help="a Claude model's effort for this call")
    parser.add_argument(
        "--adopt", action="store_true", help="queue the new answer as an operator edit (provenance: the call)"
    )
    parser.add_argument(
        "--operator",
        type=text_argument("operator name", 200),
        help="who adopts it (default $ANDOR_OPERATOR, else the user name), as `command` signs its commands",
    )


def _output_file(text: str) -> str:
    """Where `eval` writes its JSON, checked before the runs spend minutes: not a directory, in one that can be made."""
    from pathlib import Path

    path = Path(path_argument("path")(text))
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{shown(path)} is a directory; give a file path such as var/eval.json")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise argparse.ArgumentTypeError(f"cannot make the directory for {shown(path)}; give another path") from None
    return str(path)


def _diagnose_arguments(parser: argparse.ArgumentParser) -> None:
    from sessions.backends import MODEL_HELP

    parser.add_argument("session_id", type=_session_ref)
    parser.add_argument(
        "--model", default="demo", type=text_argument("model spec", 200_000), help=f"{MODEL_HELP}; demo: offline rules"
    )


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=_session_ref)
    parser.add_argument(
        "--out",
        required=True,
        type=path_argument("path"),
        help="the file to write; its extension picks the format: .html .md .svg .dot .json .graphml",
    )


def _command_payload(args: argparse.Namespace) -> dict[str, Any]:
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
    payload["by"] = _operator(payload.get("by"))
    return payload


def _operator(given: str | None) -> str | None:
    """Who sends this command line's commands: `--operator`, else the machine's operator
    (`sessions.client.identity.local_operator`: $ANDOR_OPERATOR, else the user name)."""
    from sessions.client.identity import UnusableOperator, local_operator

    if given is not None:
        return given  # the command's own validation refuses a bad one, as "operator: ..."
    try:
        return local_operator()
    except UnusableOperator as error:
        raise _UsageError(str(error)) from None


def _command(args: argparse.Namespace, store: EventStore) -> int:
    from pydantic import ValidationError

    from planner.commands import describe_command_error, parse_command
    from sessions.client.commands import queue_command, wait_for_outcome
    from sessions.client.templates import with_template

    try:
        command = parse_command(with_template(store, _command_payload(args)))
    except ValidationError as error:
        raise _UsageError(describe_command_error(error)) from None
    before = store.session(args.session_id).last_seq
    command_id = queue_command(store, args.session_id, command)
    outcome: dict[str, Any] = {"command_id": command_id, "result": "queued"}
    if args.wait:
        done = wait_for_outcome(store, args.session_id, command_id, args.timeout, after=before)
        if done is None:
            outcome["reason"] = f"no runner handled it within {args.timeout:g} s; it applies when the session runs"
        else:
            outcome.update(result="applied" if done.applied else "rejected", reason=done.reason, seq=done.seq)
            if done.warning:
                outcome["warning"] = done.warning
    emit(outcome)
    return EXIT_FAILED if outcome["result"] == "rejected" else EXIT_OK


# -- argument types: every value bounded before it reaches the store ------------------------------


def _bounds(rules: Sequence[object]) -> tuple[float, bool, float]:
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


def _whole(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value: int | None = int(text)
        except ValueError:  # includes numbers too long to convert
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"give a whole number from {low} to {high}, not '{shown(text, 24)}'")
        return value

    return parse


def _amount(low: float, inclusive: bool, high: float, unit: str = "") -> Callable[[str], float]:
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


def _setting(name: str) -> Callable[[str], int]:
    """A whole-number engine setting, bounded as `EngineConfig` bounds it."""
    from planner.config import EngineConfig

    low, _, high = _bounds(EngineConfig.model_fields[name].metadata)
    return _whole(int(low), int(min(high, MAX_SEQ)))


def text_argument(what: str, limit: int) -> Callable[[str], str]:
    """An argparse type for text of at most `limit` characters and no NUL; `what` names it in the error."""

    def parse(text: str) -> str:
        if "\0" in text:
            raise argparse.ArgumentTypeError(f"the {what} contains a NUL character")
        if len(text) > limit:
            raise argparse.ArgumentTypeError(f"the {what} is {len(text):,} characters long; the limit is {limit:,}")
        return text

    return parse


def _secret(text: str) -> tuple[str, str]:
    """`--secret NAME=VALUE`, refused without ever echoing the text (it holds the value)."""
    from planner.secrets import PLACEHOLDER

    name, equals, value = text_argument("secret", 4000)(text).partition("=")
    if not equals or not PLACEHOLDER.fullmatch("{{" + name + "}}"):
        raise argparse.ArgumentTypeError(
            "write a secret as NAME=VALUE, NAME being a letter or underscore, then letters, digits or underscores"
        )
    return name, value


def path_argument(what: str) -> Callable[[str], str]:
    """An argparse type for a file path or URL: not empty, of a length the system can use."""
    bounded = text_argument(what, MAX_PATH_CHARS)

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {what} is empty")
        return bounded(text)

    return parse


def _choice(kinds: type[Enum], noun: str) -> Callable[[str], str]:
    names = ", ".join(str(kind.value) for kind in kinds)

    def parse(text: str) -> str:
        try:
            return str(kinds(text).value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{shown(text, 24)}' is not a {noun}; choose from {names}") from None

    return parse


def _request_rule(text: str) -> RequestRule:
    from planner.effects import RequestRule, RuleSyntaxError

    try:
        return RequestRule.parse(text)
    except RuleSyntaxError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


_NEW_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _new_session_id(text: str) -> str:
    if not _NEW_SESSION_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"give 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (not '{shown(text, 24)}')"
        )
    return text


def _session_ref(text: str) -> str:
    if not text.strip() or len(text) > 200 or not text.isprintable():
        raise argparse.ArgumentTypeError(f"'{shown(text, 24)}' is not a session id; `{PROG} list` shows them")
    return text


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


# -- command verbs, built from the command models --------------------------------------------------


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
    if base is Template:  # the command carries the template; the option names a stored one (`_command`)
        return {"type": _template_ref, "metavar": "NAME[@VERSION]"}
    if get_origin(base) is Literal:
        return {"choices": list(get_args(base))}
    if isinstance(base, type) and issubclass(base, Enum):
        return {"type": _choice(base, noun), "help": ", ".join(str(kind.value) for kind in base)}
    if base is int:
        low, _, high = _bounds(rules)
        return {"type": _whole(int(max(low, -MAX_SEQ)), int(min(high, MAX_SEQ)))}
    if base is float:
        return {"type": _amount(*_bounds(rules), f" of {unit}" if unit else "")}
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


def _template_ref(text: str) -> str:
    """`NAME` or `NAME@VERSION`, checked as a template name before the store is asked for it."""
    from planner.inputs import InputError
    from planner.templates import parse_ref

    try:
        parse_ref(text_argument("template", 200)(text))
    except InputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.strip()


def _command_arguments(parser: argparse.ArgumentParser) -> None:
    from planner.commands import COMMAND_MODELS

    parser.add_argument("session_id", type=_session_ref)
    _wait_options(parser)
    parser.set_defaults(wait=False, timeout=30.0)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for kind, model in COMMAND_MODELS.items():
        verb = verbs.add_parser(kind.replace("_", "-"), help=model.model_fields["kind"].description)
        _db_option(verb)
        _wait_options(verb)
        for name, field in _fields(model).items():
            _add_field(verb, name, field)


# -- the other subcommands' arguments ----------------------------------------------------------------


def _db_option(parser: argparse.ArgumentParser) -> None:
    """`--db` on every (sub)command, SUPPRESSed by default so a sub-parser never overwrites one given earlier."""
    parser.add_argument(
        "--db",
        type=path_argument("path or URL"),
        default=argparse.SUPPRESS,
        help="database path or SQLAlchemy URL (default $ANDOR_DB or var/sessions.db)",
    )


def _wait_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait", action="store_true", default=argparse.SUPPRESS, help="wait until the runner applies or rejects it"
    )
    parser.add_argument(
        "--timeout",
        type=_amount(0, False, MAX_WAIT_S),
        default=argparse.SUPPRESS,
        help="seconds to wait with --wait (default 30)",
    )


def _exit_on_pause(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--exit-on-pause",
        action="store_true",
        help="when the session pauses (breakpoint, approval, cost cap, model error), leave it paused and exit 3",
    )


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


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    _session_arguments(parser)
    _exit_on_pause(parser)


def _session_arguments(parser: argparse.ArgumentParser) -> None:
    """What a new session is (`run` and `submit`): its task, model, settings and id."""
    from planner.config import Breakpoint, EngineConfig
    from sessions.backends import EFFORT_HELP, EFFORTS, MODEL_HELP

    defaults = EngineConfig()
    breakpoint_ = _choice(Breakpoint, "breakpoint")
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
        type=_amount(*_bounds(EngineConfig.model_fields["max_cost_usd"].metadata), " of USD"),
        help="pause once the model calls' estimated cost reaches this many USD",
    )
    pair = get_args(EngineConfig.model_fields["model_prices"].annotation)[0]  # tuple[price, price] | None
    price = _amount(*_bounds(get_args(get_args(pair)[0])[1].metadata), " of USD")
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
    _operator_argument(parser, "who starts it")


def _operator_argument(parser: argparse.ArgumentParser, does: str) -> None:
    parser.add_argument(
        "--operator",
        dest="by",
        type=text_argument("operator name", 200),
        help=f"{does} (default $ANDOR_OPERATOR, else the user name)",
    )


def _browser_endpoint(text: str) -> str:
    """A Playwright browser server's address: ws:// or wss:// with a host."""
    from urllib.parse import urlsplit

    problem = f"give a browser server's ws:// or wss:// address such as ws://127.0.0.1:3000/, not '{shown(text, 40)}'"
    if len(text) > 2000 or not text.isprintable() or any(ch.isspace() for ch in text):
        raise argparse.ArgumentTypeError(problem)
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise argparse.ArgumentTypeError(problem) from None
    if parts.scheme.lower() not in ("ws", "wss") or not parts.hostname:
        raise argparse.ArgumentTypeError(problem)
    return text


def _worker_arguments(parser: argparse.ArgumentParser) -> None:
    from sessions.worker.runner import STALE_AFTER

    parser.add_argument(
        "--concurrency", type=_whole(1, 64), default=1, help="sessions this worker runs at once (default 1)"
    )
    parser.add_argument(
        "--browser-endpoint",
        type=_browser_endpoint,
        help="drive the Chromium of a Playwright browser server at this ws:// address instead of launching one",
    )
    parser.add_argument(
        "--artifacts",
        type=path_argument("artifacts directory"),
        help="screenshots and browser state, shared by every worker and the console "
        "(default: next to a database file, else var/artifacts)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=_amount(1, True, 3600),
        default=STALE_AFTER,
        help=f"seconds without a heartbeat before this worker's runs are presumed dead (default {STALE_AFTER:g}); "
        "kept with each lease it takes, so every other runner judges its leases by it",
    )


def _resume_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=_session_ref)
    _exit_on_pause(parser)
    _operator_argument(parser, "who sends the command")  # the resume it queues carries it, like every command verb's


def _fork_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=_session_ref)
    parser.add_argument("--at", type=_whole(1, MAX_SEQ), required=True, help="event sequence number to fork at")
    _operator_argument(parser, "who forks it")


def _as_of(what: str) -> Callable[[argparse.ArgumentParser], None]:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("session_id", type=_session_ref)
        parser.add_argument("--at", type=_whole(1, MAX_SEQ), help=f"{what} as of this event")

    return arguments


# -- the parser ------------------------------------------------------------------------------------


def _template_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    save = actions.add_parser("save", help="save a session's subtree as the template's next version")
    save.add_argument("name", type=_template_ref, metavar="NAME")
    save.add_argument("--session", required=True, type=_session_ref, help="the session holding the subtree")
    save.add_argument("--node", required=True, type=text_argument("node id", 200), help="the subtree's root, e.g. 0.2")
    save.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        type=text_argument("parameter", 600),
        help="write this literal text as the placeholder {NAME} (repeat)",
    )
    save.add_argument("--description", default="", type=text_argument("description", 2000))
    save.add_argument("--children", action="store_true", help="save the node's sub-goals, not the node itself")
    actions.add_parser("list", help="list the templates: each name's newest version and every version it has")
    delete = actions.add_parser("delete", help="delete a template's every version, or NAME@VERSION only")
    delete.add_argument("ref", type=_template_ref, metavar="NAME[@VERSION]")
    export = actions.add_parser("export", help="write templates (default all), every version, as JSON")
    export.add_argument("names", nargs="*", type=_template_ref, metavar="NAME")
    export.add_argument("--out", type=_output_file, help="the file to write (default: print it)")
    imported = actions.add_parser("import", help="add the templates of an exported JSON file as new versions")
    imported.add_argument("file", type=path_argument("path"))
    for action in (save, delete, export, imported, actions.choices["list"]):
        _db_option(action)


def _template(args: argparse.Namespace, store: EventStore) -> int:
    from pathlib import Path

    from planner.inputs import InputError, read_text_file
    from planner.templates import parse_values
    from sessions.client import templates

    if args.action == "save":
        saved = templates.save_subtree(
            store,
            args.session,
            args.node,
            args.name,
            parse_values(args.param),
            description=args.description,
            children_only=args.children,
        )
        emit({"name": saved.name, "version": saved.version, "params": saved.params, "nodes": saved.size})
    elif args.action == "list":
        emit({"templates": templates.listing(store)})
    elif args.action == "delete":
        emit({"deleted": templates.delete(store, args.ref)})
    elif args.action == "export":
        if args.out is None:
            print(templates.export_text(store, args.names, indent=None))
            return EXIT_OK
        Path(args.out).write_text(templates.export_text(store, args.names))
        emit({"out": args.out})
    else:
        try:
            done = templates.import_text(store, read_text_file(args.file, templates.MAX_FILE_BYTES))
        except InputError as error:
            raise _UsageError(f"cannot import {shown(args.file)}: {error}") from None
        emit(
            {
                "saved": [f"{t.name}@{t.version}" for t in done.saved],
                "unchanged": [f"{t.name}@{t.version}" for t in done.unchanged],
            }
        )
    return EXIT_OK


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


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """`list` takes only `--db`."""


_SUBCOMMANDS: Mapping[str, Subcommand] = {
    "run": Subcommand("start a session and run it to the end", _run_arguments, _run),
    "submit": Subcommand("queue a new session for the workers; prints its id", _session_arguments, _submit),
    "worker": Subcommand("run the sessions that need a runner, until stopped", _worker_arguments, _worker),
    "resume": Subcommand("continue a paused, stopped or crashed session", _resume_arguments, _resume),
    "command": Subcommand("queue an operator command for a session", _command_arguments, _command),
    "fork": Subcommand("copy a session up to an event into a new paused session", _fork_arguments, _fork),
    "list": Subcommand("list sessions", _no_arguments, _list),
    "export": Subcommand("print a session's trace JSON", _as_of("the state"), _export),
    "show": Subcommand("print a session's tree", _as_of("the tree"), _show),
    "diagnose": Subcommand(
        "diagnose a finished session (root cause, critical steps, category) and store it",
        _diagnose_arguments,
        _diagnose,
    ),
    "report": Subcommand("write a session's report (.html .md .svg .dot .json .graphml)", _report_arguments, _report),
    "reask": Subcommand(
        "ask a recorded expansion, repair or observation call again; compare; adopt", _reask_arguments, _reask
    ),
    "template": Subcommand(
        "save, list, delete, export or import plan templates (inject one: command ID inject --template)",
        _template_arguments,
        _template,
    ),
}


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
            _db_option(self)
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


def _utf8(text: str) -> bool:
    """Whether `text` is text: a command-line argument or environment variable whose bytes were not
    UTF-8 reaches Python as lone surrogates ('caf\\udce9'), which no file, database or terminal takes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        if _utf8(arg):
            continue
        option, equals, _ = arg.partition("=")
        before = given[index - 1] if index else ""
        if arg.startswith("-"):
            what = f"the value of {option}" if equals and _utf8(option) else "an option's name"
        elif before.startswith("-") and "=" not in before and before not in _flags(parser, given):
            what = f"the value of {before}"
        else:
            what = f"the argument '{shown(arg, 40)}'"
        return f"{what} is not UTF-8 text; give it in UTF-8"
    return None


def build_parser(
    subcommands: Mapping[str, Subcommand] = _SUBCOMMANDS,
    *,
    prog: str = PROG,
    description: str = "Run and steer AND/OR planning sessions.",
    lazy: bool = False,
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


_REFUSED: tuple[type[Exception], ...] = (_UsageError, PlannerError, SessionsError, OSError)
"""The errors raised on purpose for bad input (the planner's and the sessions package's trees, see
`planner.errors` and `sessions.errors`), and OSError for paths the system refuses. Anything else is
a bug and keeps its traceback."""


def main(
    argv: Sequence[str] | None = None,
    *,
    subcommands: Mapping[str, Subcommand] = _SUBCOMMANDS,
    prog: str = PROG,
    description: str = "Run and steer AND/OR planning sessions.",
) -> int:
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
