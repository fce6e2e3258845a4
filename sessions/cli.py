"""`python -m sessions`: the headless contract other tools and tests rely on.

Every subcommand prints JSON on its last stdout line (or a readable tree for `show`); errors go to
stderr as one sentence saying what to do. Exit codes: 0 done, 1 the run failed (or a command was
rejected), 2 bad input (nothing was recorded), 3 the run paused and `--exit-on-pause` was given.

Bad input is refused as early as it can be: argparse type functions bound every number and the
size of every text before anything reaches the store, and the errors the store, the planner and
the file readers raise on purpose become one line here. Anything else is a bug and keeps its
traceback.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from planner.browser.dry import DRY_START, is_dry
from planner.commands import COMMAND_MODELS, Inject, SetBudget, describe_command_error, parse_command
from planner.config import Breakpoint, EngineConfig
from planner.errors import PlannerError
from planner.inputs import MAX_PATH_CHARS, describe_validation_error, shown
from planner.state import RunStatus, SessionState
from sessions.backends import MODEL_HELP, artifacts_root
from sessions.errors import SessionsError
from sessions.sql import open_store
from sessions.store import EventStore

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_PAUSED", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
"""The run ended without success, or `command --wait` saw the command rejected."""
EXIT_USAGE = 2
"""Bad input: refused before anything was recorded."""
EXIT_PAUSED = 3
"""`--exit-on-pause`: the session paused by itself (or by an operator) and this process left it waiting."""

MAX_TASK_CHARS = 4000
"""A task is a sentence or a paragraph; a longer one is a pasted document, and every prompt carries it."""
MAX_TEXT_CHARS = 2000
"""The longest goal, description, reason or action a command may carry (the command models' own limit)."""
MAX_SEQ = 2**31 - 1
"""Event numbers are 32-bit integers in the store; a larger `--at` can name no event."""
MAX_WAIT_S = 86_400.0
PROG = "python -m sessions"


class _UsageError(Exception):
    """Arguments that parse but cannot be used together, or a demo task file/id that cannot be used."""


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


def _emit(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, ensure_ascii=False), flush=True)


def _summary(session_id: str, state: SessionState) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "status": state.status.value,
        "final_answer": state.final_answer,
        "steps": state.steps,
        "reason": state.reason,
    }


# -- running and pausing ---------------------------------------------------------------------------


def _cli_line(*words: str, db: str | None) -> str:
    """A command line a person can paste: quoted where the shell needs it, with the same --db."""
    return " ".join([PROG, *map(shlex.quote, words), *(["--db", shlex.quote(db)] if db else [])])


def _pause_notice(state: SessionState, session_id: str, db: str | None, detached: bool) -> str:
    """One line that says why a session waits and which command continues it.

    `detached`: this process is leaving (`--exit-on-pause`), so the session continues only when a
    runner is started again (`resume ID --exit-on-pause`, so a script keeps its mode); otherwise
    this process is the runner, and a queued command is enough.
    """
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
            print(_pause_notice(state, self.session_id, self.db, self.exit_on_pause), file=sys.stderr, flush=True)
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
    """Run a session in this process until it ends; Ctrl-C or SIGTERM leaves it paused.

    The runner, the trace and the tree text are imported by the subcommands that use them: `list`,
    `show` and `export` need no engine."""
    from sessions.runner import Runner

    stopping = threading.Event()
    notice = _PauseNotice(session_id, args.db, args.exit_on_pause)
    print(f"session {session_id}", file=sys.stderr, flush=True)
    with _stop_on_signals(stopping.set):
        runner = Runner(store, session_id, artifacts=artifacts_root(args.db))
        state = runner.run(should_stop=stopping.is_set, on_idle=notice)
    _emit(_summary(session_id, state))
    if state.status is RunStatus.SUCCEEDED:
        return EXIT_OK
    return EXIT_PAUSED if notice.left and not state.finished else EXIT_FAILED


def _config(args: argparse.Namespace) -> EngineConfig:
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
        breakpoints=frozenset(Breakpoint(b) for b in args.breakpoint),
        guard=not args.no_guard,
        allowed_domains=tuple(args.allow_domain),
    )


def _validated(**settings: object) -> EngineConfig:
    try:
        return EngineConfig.model_validate(settings)
    except ValidationError as error:
        raise _UsageError(f"invalid settings: {describe_validation_error(error)}") from None


# -- subcommands -----------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.runner import create_session

    session_id = create_session(
        store,
        args.task,
        args.model,
        start_url=args.start_url or DRY_START,
        config=_config(args),
        session_id=args.id,
        paused=args.paused,
    )
    return _drive(store, session_id, args)


def _cmd_resume(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.runner import load_state, queue_command

    state = load_state(store, args.session_id)
    if state.finished:
        raise _UsageError(f"session {args.session_id} has ended ({state.status.value}); fork it to continue")
    if state.status in (RunStatus.PAUSED, RunStatus.STOPPED):
        queue_command(store, args.session_id, {"kind": "resume"})
    return _drive(store, args.session_id, args)


def _cmd_fork(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.runner import fork_session

    new_id = fork_session(store, args.session_id, args.at)
    _emit({"session_id": new_id, "forked_from": args.session_id, "at": args.at, "status": "paused"})
    return EXIT_OK


def _cmd_list(args: argparse.Namespace, store: EventStore) -> int:
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
    _emit({"sessions": rows})
    return EXIT_OK


def _cmd_export(args: argparse.Namespace, store: EventStore) -> int:
    from planner.state import replay
    from sessions.export import trace
    from sessions.runner import load_events

    events = load_events(store, args.session_id, upto=args.at)  # refuses an --at past the end
    _emit(trace(args.session_id, replay(events), events))
    return EXIT_OK


def _cmd_show(args: argparse.Namespace, store: EventStore) -> int:
    from planner.render import tree_text
    from sessions.runner import load_state

    state = load_state(store, args.session_id, upto=args.at)
    print(f"{state.task}\nstatus: {state.status.value}" + (f" ({state.reason})" if state.reason else ""))
    print(tree_text(state.tree))
    if state.final_answer:
        print(f"answer: {state.final_answer}")
    return EXIT_OK


def _suite_config(args: argparse.Namespace) -> EngineConfig:
    return _validated(repair=not args.no_repair, or_alternatives=not args.no_or, lookahead=args.lookahead)


def _output_file(path: Path) -> Path:
    """Where the suite writes its results, checked before the suite spends minutes running."""
    if path.is_dir():
        raise _UsageError(f"--out {shown(path)} is a directory; give a file path such as var/suite.json")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _UsageError(f"--out {shown(path)} is inside a file, not a directory; give another path") from None
    return path


def _cmd_suite(args: argparse.Namespace, store: EventStore) -> int:
    from demo.suite import format_table, run_suite
    from demo.tasks import TaskError

    out = _output_file(Path(args.out))
    try:
        rows = run_suite(
            store,
            tasks_file=Path(args.tasks) if args.tasks is not None else None,
            model=args.model,
            config=_suite_config(args),
            approve=not args.reject_guarded,
            artifacts=artifacts_root(args.db),
            only=args.only or None,
        )
    except TaskError as error:
        raise _UsageError(str(error)) from None
    print(format_table(rows))
    out.write_text(json.dumps([asdict(row) for row in rows], indent=2, ensure_ascii=False))
    _emit({"tasks": len(rows), "passed": sum(row.success for row in rows), "results": str(out)})
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace, store: EventStore) -> int:
    """Start the bundled shop, run one demo task with the offline model, show the tree and the check."""
    from demo.shop import start_shop
    from demo.suite import auto_approver
    from demo.tasks import TaskError, check_answer, load_tasks, select_tasks
    from planner.render import tree_text
    from sessions.runner import Runner, create_session

    try:
        [task] = select_tasks(load_tasks(), [args.task_id])
    except TaskError as error:
        raise _UsageError(str(error)) from None
    config = _suite_config(args)
    with start_shop() as shop:
        print(f"demo shop at {shop.url}; task: {task.task}", file=sys.stderr)
        session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path, config=config)
        runner = Runner(store, session_id, artifacts=artifacts_root(args.db))
        state = runner.run(on_idle=auto_approver(store, session_id))
    print(tree_text(state.tree))
    verdict = check_answer(task, state.final_answer or "")
    _emit({**_summary(session_id, state), "criteria_met": verdict.passed, "missing": verdict.missing})
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _command_payload(args: argparse.Namespace) -> dict[str, Any]:
    """The command a verb's arguments describe: the verb is the model's kind and its options are
    named after the model's fields, so the fields are read off the model rather than listed here."""
    verb = args.verb.replace("-", "_")
    payload: dict[str, Any] = {"kind": verb}
    for name in COMMAND_MODELS[verb].model_fields:
        if name in ("kind", "command_id"):
            continue
        value = getattr(args, name, None)
        if value is not None and value is not False:
            payload[name] = value
    return payload


def _cmd_command(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.runner import queue_command, wait_for_outcome

    try:
        command = parse_command(_command_payload(args))
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
    _emit(outcome)
    return EXIT_FAILED if outcome["result"] == "rejected" else EXIT_OK


# -- argument types: every value bounded before it reaches the store ------------------------------


def _field_range(model: type[BaseModel], name: str) -> tuple[float, bool, float]:
    """The bounds a pydantic field declares (ge/gt, le), so the CLI checks what the model checks."""
    low, inclusive, high = -math.inf, True, math.inf
    for rule in model.model_fields[name].metadata:
        if getattr(rule, "ge", None) is not None:
            low, inclusive = rule.ge, True
        if getattr(rule, "gt", None) is not None:
            low, inclusive = rule.gt, False
        if getattr(rule, "le", None) is not None:
            high = rule.le
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


def _whole_field(model: type[BaseModel], name: str) -> Callable[[str], int]:
    low, _, high = _field_range(model, name)
    return _whole(int(low), int(min(high, MAX_SEQ)))


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


def _amount_field(model: type[BaseModel], name: str, unit: str = "") -> Callable[[str], float]:
    low, inclusive, high = _field_range(model, name)
    return _amount(low, inclusive, high, unit)


def _text(what: str, limit: int) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if "\0" in text:
            raise argparse.ArgumentTypeError(f"the {what} contains a NUL character")
        if len(text) > limit:
            raise argparse.ArgumentTypeError(f"the {what} is {len(text):,} characters long; the limit is {limit:,}")
        return text

    return parse


def _path(what: str) -> Callable[[str], str]:
    bounded = _text(what, MAX_PATH_CHARS)

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {what} is empty")
        return bounded(text)

    return parse


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


_KINDS = ", ".join(b.value for b in Breakpoint)


def _breakpoint(text: str) -> str:
    try:
        return Breakpoint(text).value
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shown(text, 24)}' is not a breakpoint; choose from {_KINDS}") from None


# -- the parser ------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line: no usage block, no echo of a huge value."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {_one_line(message)}; see `{self.prog} --help`\n")


def _db_option(parser: argparse.ArgumentParser) -> None:
    """`--db` on every (sub)command, SUPPRESSed by default so a sub-parser never overwrites one given earlier."""
    parser.add_argument(
        "--db",
        type=_path("path or URL"),
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


def _add_command_parsers(parent: argparse.ArgumentParser) -> None:
    parent.add_argument("session_id", type=_session_ref)
    _wait_options(parent)
    parent.set_defaults(wait=False, timeout=30.0)
    verbs = parent.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, text: str) -> argparse.ArgumentParser:
        parser = verbs.add_parser(name, help=text)
        _db_option(parser)
        _wait_options(parser)
        return parser

    node_id = _text("node id", 200)
    goal = _text("goal", MAX_TEXT_CHARS)
    for name, text in (
        ("pause", "pause at the next step boundary"),
        ("resume", "resume a paused or stopped session"),
        ("step", "run one step, then pause"),
        ("stop", "stop the run (resumable)"),
    ):
        verb(name, text)
    inject = verb("inject", "add sub-goals or alternatives under a node")
    inject.add_argument("--parent", required=True, type=node_id, help="node id to add under, e.g. 0 or 0.2")
    inject.add_argument("--goal", dest="goals", action="append", required=True, type=goal, help="a sub-goal (repeat)")
    inject.add_argument(
        "--position", type=_whole_field(Inject, "position"), help="index among the children (default: append)"
    )
    inject.add_argument("--type", dest="node_type", choices=["AND", "OR"], help="type for an unexpanded parent")
    inject.add_argument(
        "--score", dest="scores", type=_amount(0.0, False, 1.0), action="append", help="score per OR alternative"
    )
    prune = verb("prune", "remove a step the plan does not need")
    prune.add_argument("--node", required=True, type=node_id)
    prune.add_argument("--reason", required=True, type=_text("reason", MAX_TEXT_CHARS))
    edit = verb("edit", "change the description of an open node")
    edit.add_argument("--node", required=True, type=node_id)
    edit.add_argument("--description", required=True, type=_text("description", MAX_TEXT_CHARS))
    edit.add_argument("--reexpand", action="store_true", help="drop its open children and expand it again")
    reopen = verb("reopen", "return a FAIL, PRUNED or DELETED node to UNVISITED")
    reopen.add_argument("--node", required=True, type=node_id)
    force = verb("force", "choose the OR alternative that runs next")
    force.add_argument("--node", required=True, type=node_id)
    force.add_argument("--child", required=True, type=node_id)
    approve = verb("approve", "let the guarded action run")
    approve.add_argument("--node", type=node_id)
    reject = verb("reject", "refuse the guarded action (it fails)")
    reject.add_argument("--reason", type=_text("reason", MAX_TEXT_CHARS))
    reject.add_argument("--pause", action="store_true", help="pause after rejecting, so the plan can be changed first")
    edit_action = verb("edit-action", "replace a pending action (approves a guarded one)")
    edit_action.add_argument("--action", required=True, type=_text("action", MAX_TEXT_CHARS))
    edit_action.add_argument("--node", type=node_id)
    breakpoints = verb("breakpoints", "set when the session pauses by itself (none clears them)")
    breakpoints.add_argument("breakpoints", nargs="*", type=_breakpoint, default=[], metavar="KIND", help=_KINDS)
    budget = verb("budget", "set the cost cap in USD (without --max-cost: no cap)")
    budget.add_argument("--max-cost", dest="max_cost_usd", type=_amount_field(SetBudget, "max_cost_usd", " of USD"))
    constraints = verb("constraints", "replace the task's constraints (none clears them)")
    constraints.add_argument(
        "constraints",
        nargs="*",
        default=[],
        type=_text("requirement", 500),
        metavar="REQUIREMENT",
        help='e.g. "backpack: price under $60"',
    )


def _ablations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-repair", action="store_true", help="ablation: never repair failed nodes")
    parser.add_argument("--no-or", action="store_true", help="ablation: no OR alternatives")
    parser.add_argument(
        "--lookahead",
        type=_whole_field(EngineConfig, "lookahead"),
        default=EngineConfig().lookahead,
        help="upcoming sub-goals a model may ground while reading a page (0: one expansion call per node)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Run and steer AND/OR planning sessions.")
    parser.add_argument("--db", type=_path("path or URL"), help="database path or SQLAlchemy URL")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        child = sub.add_parser(name, help=text)
        _db_option(child)
        return child

    model = _text("model spec", 200_000)
    run = command("run", "start a session and run it to the end")
    run.add_argument("--task", required=True, type=_text("task", MAX_TASK_CHARS))
    run.add_argument("--start-url", type=_start_url, help="a web page to start on (without it: the dry environment)")
    run.add_argument("--model", default="demo", type=model, help=MODEL_HELP)
    run.add_argument("--max-steps", type=_whole_field(EngineConfig, "max_steps"), default=EngineConfig().max_steps)
    run.add_argument(
        "--max-revisions", type=_whole_field(EngineConfig, "max_revisions"), default=EngineConfig().max_revisions
    )
    run.add_argument(
        "--retries",
        type=_whole_field(EngineConfig, "expansion_retries"),
        default=EngineConfig().expansion_retries,
        help="extra attempts per model call",
    )
    run.add_argument("--completion-check", choices=["root", "every_and"], default="root")
    _ablations(run)
    run.add_argument("--no-constraints", action="store_true", help="skip the task-constraint extraction call")
    run.add_argument(
        "--max-cost",
        type=_amount_field(EngineConfig, "max_cost_usd", " of USD"),
        help="pause once the model calls' estimated cost reaches this many USD",
    )
    run.add_argument("--no-guard", action="store_true", help="run risky actions without asking")
    run.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        type=_text("allowed domain", 253),
        metavar="HOST",
        help="a host the browser may reach besides the start URL's (subdomains included; repeatable)",
    )
    run.add_argument(
        "--breakpoint", action="append", default=[], type=_breakpoint, help=f"pause by itself: {_KINDS} (repeatable)"
    )
    run.add_argument("--paused", action="store_true", help="create the session paused (review before it starts)")
    run.add_argument("--id", type=_new_session_id, help="session id to use (default: random)")
    _exit_on_pause(run)

    resume = command("resume", "continue a paused, stopped or crashed session")
    resume.add_argument("session_id", type=_session_ref)
    _exit_on_pause(resume)
    _add_command_parsers(command("command", "queue an operator command for a session"))
    fork = command("fork", "copy a session up to an event into a new paused session")
    fork.add_argument("session_id", type=_session_ref)
    fork.add_argument("--at", type=_whole(1, MAX_SEQ), required=True, help="event sequence number to fork at")
    command("list", "list sessions")
    export = command("export", "print a session's trace JSON")
    export.add_argument("session_id", type=_session_ref)
    export.add_argument("--at", type=_whole(1, MAX_SEQ), help="the state as of this event")
    suite = command("suite", "run every demo task on the bundled shop and check the answers")
    suite.add_argument("--model", default="demo", type=model, help=MODEL_HELP)
    suite.add_argument("--tasks", type=_path("path"), help="a tasks JSON file (default demo/tasks.json)")
    suite.add_argument("--only", action="append", type=_text("task id", 200), help="run only this task id (repeatable)")
    _ablations(suite)
    suite.add_argument("--reject-guarded", action="store_true", help="reject guarded actions instead of approving them")
    suite.add_argument("--out", default="var/suite.json", type=_path("path"), help="where to write the results")
    demo = command("demo", "run one demo task on the bundled shop, headless")
    demo.add_argument("task_id", nargs="?", default="wireless-photo-printers", type=_text("task id", 200))
    _ablations(demo)
    show = command("show", "print a session's tree")
    show.add_argument("session_id", type=_session_ref)
    show.add_argument("--at", type=_whole(1, MAX_SEQ), help="the tree as of this event")
    return parser


_HANDLERS = {
    "suite": _cmd_suite,
    "demo": _cmd_demo,
    "run": _cmd_run,
    "resume": _cmd_resume,
    "command": _cmd_command,
    "fork": _cmd_fork,
    "list": _cmd_list,
    "export": _cmd_export,
    "show": _cmd_show,
}

_REFUSED = (_UsageError, PlannerError, SessionsError, OSError)
"""The errors raised on purpose for bad input (the planner's and the sessions package's trees, see
`planner.errors` and `sessions.errors`), and OSError for paths the system refuses. Anything else is
a bug and keeps its traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        store = open_store(args.db)
    except _REFUSED as error:
        return _refuse(error)
    try:
        return _HANDLERS[args.cmd](args, store)
    except _REFUSED as error:
        return _refuse(error)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        return 130
    finally:
        store.close()
