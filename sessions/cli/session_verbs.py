"""The verbs of one session's life: start it (`run`, `submit`), continue it (`resume`), steer it
(`command`), copy it (`fork`), read it (`list`, `show`, `export`) and end it for good (`delete`).

`command`, `fork`, `show`, `export` and `delete` are the client's (`SessionClient`, through `on_client`);
`run` and `resume` run the session here in the foreground with the worker side's `Runner`
(`sessions.cli.foreground`). `list` reads the store's listing itself: it is the quick look at a
store, and the client would load the engine and the model registry it does not use.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.inputs import shown
from sessions.cli.arguments import MAX_SEQ, operator_argument, session_ref, whole
from sessions.cli.command_options import command_arguments, command_payload, parsed_command
from sessions.cli.context import artifacts, client_of, on_client, operator
from sessions.cli.conventions import EXIT_FAILED, EXIT_OK, Subcommand, emit, path_argument
from sessions.cli.foreground import drive
from sessions.cli.new_session import create, session_arguments
from sessions.errors import SessionInputError

if TYPE_CHECKING:
    import argparse

    from sessions.client.client import SessionClient
    from sessions.store import EventStore

__all__ = ["COMMAND", "DELETE", "EXPORT", "FORK", "LIST", "RESUME", "RUN", "SHOW", "SUBMIT"]


def _run(args: argparse.Namespace, store: EventStore) -> int:
    return drive(store, create(args, store), args)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    session_arguments(parser)
    _exit_on_pause(parser)


def _submit(args: argparse.Namespace, store: EventStore) -> int:
    """Record the session for the workers (`worker`) to run; a paused one waits for its `resume`."""
    session_id = create(args, store)
    emit({"session_id": session_id, "status": "paused" if args.paused else "queued"})
    return EXIT_OK


def _resume(args: argparse.Namespace, store: EventStore) -> int:
    """Queue a resume for a paused or stopped session (signed like every command), then run it here;
    a running one (its runner crashed, say) is run as it is."""
    from planner.state import TERMINAL, RunStatus

    client = client_of(store)
    status = RunStatus(client.info(args.session_id).status)
    if status in TERMINAL:
        raise SessionInputError(f"session {args.session_id} has ended ({status.value}); fork it to continue")
    if status in (RunStatus.PAUSED, RunStatus.STOPPED):
        client.send(args.session_id, parsed_command({"kind": "resume", "by": operator(args.by)}))
    return drive(store, args.session_id, args)


def _resume_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=session_ref)
    _exit_on_pause(parser)
    operator_argument(parser, "who sends the command")  # the resume it queues carries it, like every command verb's


def _exit_on_pause(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--exit-on-pause",
        action="store_true",
        help="when the session pauses (breakpoint, approval, cost cap, model error), leave it paused and exit 3",
    )


def _command(args: argparse.Namespace, client: SessionClient) -> int:
    """Queue the command the verb describes; with `--wait`, say what its runner made of it."""
    from sessions.client.outcomes import OutcomeKind

    sent = client.send(args.session_id, parsed_command(client.templates.with_template(command_payload(args))))
    printed: dict[str, Any] = {"command_id": sent.command_id, "result": "queued"}
    if args.wait:
        done = client.wait(sent, args.timeout)
        if done.kind is OutcomeKind.QUEUED:
            printed["reason"] = f"no runner handled it within {args.timeout:g} s; it applies when the session runs"
        else:
            applied = done.kind is OutcomeKind.APPLIED
            reason = None if applied else done.message
            printed.update(result="applied" if applied else "rejected", reason=reason, seq=done.seq)
            if done.warning:
                printed["warning"] = done.warning
    emit(printed)
    return EXIT_FAILED if printed["result"] == "rejected" else EXIT_OK


def _fork(args: argparse.Namespace, client: SessionClient) -> int:
    new_id = client.fork(args.session_id, args.at, by=operator(args.by))
    emit({"session_id": new_id, "forked_from": args.session_id, "at": args.at, "status": "paused"})
    return EXIT_OK


def _fork_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=session_ref)
    parser.add_argument("--at", type=whole(1, MAX_SEQ), required=True, help="event sequence number to fork at")
    operator_argument(parser, "who forks it")


def _delete(args: argparse.Namespace, client: SessionClient) -> int:
    """Delete the session and its files, once confirmed: `--yes`, or "y" typed at the terminal."""
    info = client.info(args.session_id)  # a missing session is refused before anything is asked
    if not args.yes and not _confirmed(f"delete session {info.id} ({shown(info.task, 60)})"):
        raise SessionInputError(f"session {info.id} was not deleted; give --yes to delete it without asking")
    files = client.delete(info.id, artifacts(args))
    emit({"session_id": info.id, "deleted": True, "files": files})
    return EXIT_OK


def _confirmed(what: str) -> bool:
    """Whether the person at the terminal answers yes to `what` (asked on stderr: stdout is for JSON);
    never, without a terminal to ask at."""
    if not sys.stdin.isatty():
        return False
    print(f"{what}, its log, screenshots and browser state? This cannot be undone. [y/N] ", end="", file=sys.stderr)
    try:
        answer = input()
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _delete_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=session_ref)
    parser.add_argument("--yes", action="store_true", help="delete without asking (needed without a terminal)")
    parser.add_argument(
        "--artifacts",
        type=path_argument("artifacts directory"),
        help="the artifacts directory its files are in (default: next to a database file, else var/artifacts)",
    )


def _list(args: argparse.Namespace, client: SessionClient) -> int:
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
        for info in client.listing(fresh=True)
    ]
    emit({"sessions": rows})
    return EXIT_OK


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """`list` takes only `--db`."""


def _export(args: argparse.Namespace, client: SessionClient) -> int:
    from planner.state import replay
    from sessions.client.export import trace

    events = client.events(args.session_id, upto=args.at)  # masked; refuses an --at past the end
    emit(trace(args.session_id, replay(events), events))
    return EXIT_OK


def _show(args: argparse.Namespace, client: SessionClient) -> int:
    from planner.render import tree_text
    from planner.state import replay

    state = replay(client.events(args.session_id, upto=args.at))
    print(f"{state.task}\nstatus: {state.status.value}" + (f" ({state.reason})" if state.reason else ""))
    print(tree_text(state.tree))
    if state.final_answer:
        print(f"answer: {state.final_answer}")
    return EXIT_OK


def _as_of(what: str) -> Callable[[argparse.ArgumentParser], None]:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("session_id", type=session_ref)
        parser.add_argument("--at", type=whole(1, MAX_SEQ), help=f"{what} as of this event")

    return arguments


RUN = Subcommand("start a session and run it to the end", _run_arguments, _run)
SUBMIT = Subcommand("queue a new session for the workers; prints its id", session_arguments, _submit)
RESUME = Subcommand("continue a paused, stopped or crashed session", _resume_arguments, _resume)
COMMAND = Subcommand("queue an operator command for a session", command_arguments, on_client(_command))
FORK = Subcommand("copy a session up to an event into a new paused session", _fork_arguments, on_client(_fork))
DELETE = Subcommand(
    "delete a session: its log, screenshots and browser state (not while it runs or has forks)",
    _delete_arguments,
    on_client(_delete),
)
LIST = Subcommand("list sessions", _no_arguments, on_client(_list))
EXPORT = Subcommand("print a session's trace JSON", _as_of("the state"), on_client(_export))
SHOW = Subcommand("print a session's tree", _as_of("the tree"), on_client(_show))
