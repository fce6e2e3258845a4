"""`python -m sessions`: the headless contract other tools and tests rely on.

Every subcommand prints JSON on its last stdout line (or a readable tree for `show`); errors go to
stderr as one sentence saying what to do, with exit code 2 for bad input and 1 for a failed run.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.config import Breakpoint, EngineConfig
from planner.dry import DRY_START
from planner.errors import PlannerError
from planner.events import Kind
from planner.render import tree_text
from planner.state import RunStatus, SessionState
from sessions.backends import MODEL_HELP, UnknownModel, artifacts_root
from sessions.export import trace
from sessions.runner import InvalidCommand, Runner, create_session, fork_session, load_state, queue_command
from sessions.sql import open_store
from sessions.store import EventStore, StoreError

__all__ = ["main", "build_parser"]


class _UsageError(Exception):
    pass


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


def _drive(store: EventStore, session_id: str, db: str | None) -> int:
    """Run a session in this process until it ends; Ctrl-C or SIGTERM leaves it paused."""
    stopping = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(f"session {session_id}", file=sys.stderr, flush=True)
    state = Runner(store, session_id, artifacts=artifacts_root(db)).run(should_stop=lambda: stopping)
    _emit(_summary(session_id, state))
    return 0 if state.status is RunStatus.SUCCEEDED else 1


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
    )


def _validated(**settings: object) -> EngineConfig:
    try:
        return EngineConfig.model_validate(settings)
    except ValidationError as error:
        raise _UsageError(f"invalid budget: {error.errors()[0]['loc'][0]}: {error.errors()[0]['msg']}") from None


def _cmd_run(args: argparse.Namespace, store: EventStore) -> int:
    session_id = create_session(
        store,
        args.task,
        args.model,
        start_url=args.start_url or DRY_START,
        config=_config(args),
        session_id=args.id,
        paused=args.paused,
    )
    return _drive(store, session_id, args.db)


def _cmd_resume(args: argparse.Namespace, store: EventStore) -> int:
    state = load_state(store, args.session_id)
    if state.finished:
        raise _UsageError(f"session {args.session_id} has ended ({state.status.value}); fork it to continue")
    if state.status in (RunStatus.PAUSED, RunStatus.STOPPED):
        queue_command(store, args.session_id, {"kind": "resume"})
    return _drive(store, args.session_id, args.db)


def _cmd_fork(args: argparse.Namespace, store: EventStore) -> int:
    new_id = fork_session(store, args.session_id, args.at)
    _emit({"session_id": new_id, "forked_from": args.session_id, "at": args.at, "status": "paused"})
    return 0


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
    return 0


def _cmd_export(args: argparse.Namespace, store: EventStore) -> int:
    events = store.load(args.session_id, upto=args.at)
    state = load_state(store, args.session_id, upto=args.at)
    _emit(trace(args.session_id, state, events))
    return 0


def _cmd_show(args: argparse.Namespace, store: EventStore) -> int:
    state = load_state(store, args.session_id, upto=args.at)
    print(f"{state.task}\nstatus: {state.status.value}" + (f" ({state.reason})" if state.reason else ""))
    print(tree_text(state.tree))
    if state.final_answer:
        print(f"answer: {state.final_answer}")
    return 0


def _suite_config(args: argparse.Namespace) -> EngineConfig:
    return _validated(repair=not args.no_repair, or_alternatives=not args.no_or, lookahead=args.lookahead)


def _cmd_suite(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.suite import format_table, run_suite

    rows = run_suite(
        store,
        tasks_file=Path(args.tasks) if args.tasks else None,
        model=args.model,
        config=_suite_config(args),
        approve=not args.reject_guarded,
        artifacts=artifacts_root(args.db),
        only=args.only or None,
    )
    print(format_table(rows))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(row) for row in rows], indent=2, ensure_ascii=False))
    _emit({"tasks": len(rows), "passed": sum(row.success for row in rows), "results": str(out)})
    return 0


def _cmd_demo(args: argparse.Namespace, store: EventStore) -> int:
    """Start the bundled shop, run one demo task with the offline model, show the tree and the check."""
    from demo.shop import start_shop
    from demo.tasks import check_answer, load_tasks
    from sessions.suite import auto_approver

    tasks = {task.id: task for task in load_tasks()}
    if args.task_id not in tasks:
        raise _UsageError(f"no demo task {args.task_id!r}; choose one of: {', '.join(tasks)}")
    task = tasks[args.task_id]
    with start_shop() as shop:
        print(f"demo shop at {shop.url}; task: {task.task}", file=sys.stderr)
        session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path, config=_suite_config(args))
        runner = Runner(store, session_id, artifacts=artifacts_root(args.db))
        state = runner.run(on_idle=auto_approver(store, session_id))
    print(tree_text(state.tree))
    verdict = check_answer(task, state.final_answer or "")
    _emit({**_summary(session_id, state), "criteria_met": verdict.passed, "missing": verdict.missing})
    return 0 if verdict.passed else 1


def _command_payload(args: argparse.Namespace) -> dict[str, Any]:
    verb = args.verb.replace("-", "_")
    payload: dict[str, Any] = {"kind": verb}
    fields = {
        "inject": ("parent", "goals", "position", "node_type", "scores"),
        "prune": ("node", "reason"),
        "edit": ("node", "description", "reexpand"),
        "reopen": ("node",),
        "force": ("node", "child"),
        "approve": ("node",),
        "reject": ("reason",),
        "edit_action": ("action", "node"),
        "breakpoints": ("breakpoints",),
        "constraints": ("constraints",),
        "budget": ("max_cost_usd",),
    }.get(verb, ())
    for name in fields:
        value = getattr(args, name, None)
        if value is not None and value is not False:
            payload[name] = value
    return payload


def _wait_for(store: EventStore, session_id: str, command_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        for event in store.load(session_id, after=seen):
            seen = event.seq
            if event.kind in (Kind.COMMAND_APPLIED, Kind.COMMAND_REJECTED) and event.data["command_id"] == command_id:
                applied = event.kind is Kind.COMMAND_APPLIED
                return {"result": "applied" if applied else "rejected", "reason": event.data.get("reason"), "seq": seen}
        time.sleep(0.05)
    return {"result": "queued", "reason": f"no runner handled it within {timeout:g} s; it applies when the session runs"}


def _cmd_command(args: argparse.Namespace, store: EventStore) -> int:
    command_id = queue_command(store, args.session_id, _command_payload(args))
    outcome: dict[str, Any] = {"command_id": command_id, "result": "queued"}
    if args.wait:
        outcome.update(_wait_for(store, args.session_id, command_id, args.timeout))
    _emit(outcome)
    return 1 if outcome["result"] == "rejected" else 0


def _add_command_parsers(parent: argparse.ArgumentParser) -> None:
    parent.add_argument("session_id")
    parent.add_argument("--wait", action="store_true", help="wait until the runner applies or rejects it")
    parent.add_argument("--timeout", type=float, default=30.0, help="seconds to wait with --wait (default 30)")
    verbs = parent.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, text in (
        ("pause", "pause at the next step boundary"),
        ("resume", "resume a paused or stopped session"),
        ("step", "run one step, then pause"),
        ("stop", "stop the run (resumable)"),
    ):
        verbs.add_parser(verb, help=text)
    inject = verbs.add_parser("inject", help="add sub-goals or alternatives under a node")
    inject.add_argument("--parent", required=True, help="node id to add under, e.g. 0 or 0.2")
    inject.add_argument("--goal", dest="goals", action="append", required=True, help="a sub-goal (repeat for several)")
    inject.add_argument("--position", type=int, help="index among the children (default: append)")
    inject.add_argument("--type", dest="node_type", choices=["AND", "OR"], help="type for an unexpanded parent")
    inject.add_argument("--score", dest="scores", type=float, action="append", help="score per OR alternative")
    prune = verbs.add_parser("prune", help="remove a step the plan does not need")
    prune.add_argument("--node", required=True)
    prune.add_argument("--reason", required=True)
    edit = verbs.add_parser("edit", help="change the description of an open node")
    edit.add_argument("--node", required=True)
    edit.add_argument("--description", required=True)
    edit.add_argument("--reexpand", action="store_true", help="drop its open children and expand it again")
    reopen = verbs.add_parser("reopen", help="return a FAIL, PRUNED or DELETED node to UNVISITED")
    reopen.add_argument("--node", required=True)
    force = verbs.add_parser("force", help="choose the OR alternative that runs next")
    force.add_argument("--node", required=True)
    force.add_argument("--child", required=True)
    approve = verbs.add_parser("approve", help="let the guarded action run")
    approve.add_argument("--node")
    reject = verbs.add_parser("reject", help="refuse the guarded action (it fails)")
    reject.add_argument("--reason")
    edit_action = verbs.add_parser("edit-action", help="replace a pending action (approves a guarded one)")
    edit_action.add_argument("--action", required=True)
    edit_action.add_argument("--node")
    breakpoints = verbs.add_parser("breakpoints", help="set when the session pauses by itself (none clears them)")
    breakpoints.add_argument("breakpoints", nargs="*", choices=[b.value for b in Breakpoint], metavar="KIND")
    budget = verbs.add_parser("budget", help="set the cost cap in USD (without --max-cost: no cap)")
    budget.add_argument("--max-cost", dest="max_cost_usd", type=float)
    constraints = verbs.add_parser("constraints", help="replace the task's constraints (none clears them)")
    constraints.add_argument("constraints", nargs="*", metavar="REQUIREMENT", help='e.g. "backpack: price under $60"')


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", help="database path or SQLAlchemy URL (default $ANDOR_DB or var/sessions.db)")
    parser = argparse.ArgumentParser(prog="python -m sessions", description="Run and steer AND/OR planning sessions.")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    run = sub.add_parser("run", parents=[common], help="start a session and run it to the end")
    run.add_argument("--task", required=True)
    run.add_argument("--start-url", help="a web page to start on (without it: the dry environment)")
    run.add_argument("--model", default="demo", help=MODEL_HELP)
    run.add_argument("--max-steps", type=int, default=EngineConfig().max_steps)
    run.add_argument("--max-revisions", type=int, default=EngineConfig().max_revisions)
    run.add_argument("--retries", type=int, default=EngineConfig().expansion_retries, help="extra attempts per model call")
    run.add_argument("--completion-check", choices=["root", "every_and"], default="root")
    run.add_argument("--no-repair", action="store_true", help="ablation: never repair failed nodes")
    run.add_argument("--no-or", action="store_true", help="ablation: no OR alternatives")
    run.add_argument(
        "--lookahead", type=int, default=EngineConfig().lookahead,
        help="upcoming sub-goals a model may ground while reading a page (0: one expansion call per node)",
    )
    run.add_argument("--no-constraints", action="store_true", help="skip the task-constraint extraction call")
    run.add_argument("--max-cost", type=float, help="pause once the model calls' estimated cost reaches this many USD")
    run.add_argument("--no-guard", action="store_true", help="run risky actions without asking")
    run.add_argument("--breakpoint", action="append", default=[], choices=[b.value for b in Breakpoint])
    run.add_argument("--paused", action="store_true", help="create the session paused (review before it starts)")
    run.add_argument("--id", help="session id to use (default: random)")

    resume = sub.add_parser("resume", parents=[common], help="continue a paused, stopped or crashed session")
    resume.add_argument("session_id")
    command = sub.add_parser("command", parents=[common], help="queue an operator command for a session")
    _add_command_parsers(command)
    fork = sub.add_parser("fork", parents=[common], help="copy a session up to an event into a new paused session")
    fork.add_argument("session_id")
    fork.add_argument("--at", type=int, required=True, help="event sequence number to fork at")
    sub.add_parser("list", parents=[common], help="list sessions")
    export = sub.add_parser("export", parents=[common], help="print a session's trace JSON")
    export.add_argument("session_id")
    export.add_argument("--at", type=int, help="the state as of this event")
    suite = sub.add_parser("suite", parents=[common], help="run every demo task on the bundled shop and check the answers")
    suite.add_argument("--model", default="demo", help=MODEL_HELP)
    suite.add_argument("--tasks", help="a tasks JSON file (default demo/tasks.json)")
    suite.add_argument("--only", action="append", help="run only this task id (repeatable)")
    suite.add_argument("--no-repair", action="store_true")
    suite.add_argument("--no-or", action="store_true")
    suite.add_argument("--lookahead", type=int, default=EngineConfig().lookahead)
    suite.add_argument("--reject-guarded", action="store_true", help="reject guarded actions instead of approving them")
    suite.add_argument("--out", default="var/suite.json", help="where to write the results JSON")
    demo = sub.add_parser("demo", parents=[common], help="run one demo task on the bundled shop, headless")
    demo.add_argument("task_id", nargs="?", default="wireless-photo-printers")
    demo.add_argument("--no-repair", action="store_true")
    demo.add_argument("--no-or", action="store_true")
    demo.add_argument("--lookahead", type=int, default=EngineConfig().lookahead)
    show = sub.add_parser("show", parents=[common], help="print a session's tree")
    show.add_argument("session_id")
    show.add_argument("--at", type=int)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        store = open_store(args.db)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        return _HANDLERS[args.cmd](args, store)
    except (_UsageError, InvalidCommand, UnknownModel, PlannerError, StoreError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()
