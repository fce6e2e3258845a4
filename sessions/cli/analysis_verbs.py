"""The verbs that look back at a session: `diagnose` a finished one, `judge` its answer, write its
`report`, `reask` a recorded model call (and adopt the new answer).

`reask` is the client's (`SessionClient.reask`, and `send` for the commands that adopt); `diagnose`,
`judge` and `report` are the client's tools as they are (`sessions.client.diagnose`,
`sessions.client.verdict`, `sessions.client.report`),
which take the store: the client has no methods for them.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from planner.inputs import shown
from sessions.cli.arguments import MAX_SEQ, session_ref, whole
from sessions.cli.command_options import parsed_command
from sessions.cli.context import artifacts, on_client, operator
from sessions.cli.conventions import EXIT_OK, Subcommand, emit, path_argument, text_argument

if TYPE_CHECKING:
    from sessions.client.client import SessionClient
    from sessions.client.counterfactual import Counterfactual
    from sessions.store import EventStore

__all__ = ["DIAGNOSE", "JUDGE", "REASK", "REPORT"]


def _diagnose(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.diagnose import diagnose_command

    line, code = diagnose_command(store, args.session_id, args.model)
    print(line)
    return code


def _diagnose_arguments(parser: argparse.ArgumentParser) -> None:
    from sessions.backends import MODEL_HELP

    parser.add_argument("session_id", type=session_ref)
    parser.add_argument(
        "--model", default="demo", type=text_argument("model spec", 200_000), help=f"{MODEL_HELP}; demo: offline rules"
    )


def _judge(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.verdict import judge_answer

    by = operator(args.operator)
    stored = judge_answer(store, args.session_id, accepted=args.verdict == "accept", reason=args.reason, by=by)
    emit({"session_id": args.session_id, "accepted": stored.accepted, "reason": stored.reason, "by": stored.by})
    return EXIT_OK


def _judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=session_ref)
    parser.add_argument("verdict", choices=["accept", "reject"], help="the finished run's answer is right, or wrong")
    parser.add_argument("--reason", type=text_argument("reason", 2000), help="why, recorded with it")
    parser.add_argument(
        "--operator",
        type=text_argument("operator name", 200),
        help="whose word it is (default $ANDOR_OPERATOR, else the user name)",
    )


def _report(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.client.report import report_command

    line, code = report_command(store, args.session_id, args.out, artifacts(args))
    print(line)
    return code


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", type=session_ref)
    parser.add_argument(
        "--out",
        required=True,
        type=path_argument("path"),
        help="the file to write; its extension picks the format: .html .md .svg .dot .json .graphml",
    )


def _reask(args: argparse.Namespace, client: SessionClient) -> int:
    """A recorded model call asked again, both answers and their diff as JSON; `--adopt` queues the new one."""
    settings = dict(args.setting or [])
    if args.effort is not None:
        settings["effort"] = args.effort
    found = client.reask(args.session_id, args.call, instruction=args.instruction, model=args.model, settings=settings)
    printed = found.model_dump(mode="json")
    if args.adopt:
        printed["adopted"] = _adopt(client, found, operator(args.operator))
    emit(printed)
    return EXIT_OK


def _adopt(client: SessionClient, found: Counterfactual, by: str | None) -> list[str]:
    """Queue the commands that adopt the new answer in the session as it is now, signed by `by`; their ids.
    Every one is checked before the first is sent."""
    from planner.state import replay
    from sessions.client.counterfactual import adoption

    state = replay(client.events(found.session_id))
    commands = [parsed_command({**command.model_dump(mode="json"), "by": by}) for command in adoption(state, found)]
    return [client.send(found.session_id, command).command_id for command in commands]


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

    parser.add_argument("session_id", type=session_ref)
    parser.add_argument(
        "--call", required=True, type=whole(1, MAX_SEQ), help="the model call's event number (#N in the inspector)"
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


DIAGNOSE = Subcommand(
    "diagnose a finished session (root cause, critical steps, category) and store it", _diagnose_arguments, _diagnose
)
JUDGE = Subcommand("accept or reject a finished session's answer (recorded in its log)", _judge_arguments, _judge)
REPORT = Subcommand("write a session's report (.html .md .svg .dot .json .graphml)", _report_arguments, _report)
REASK = Subcommand(
    "ask a recorded expansion, repair or observation call again; compare; adopt", _reask_arguments, on_client(_reask)
)
