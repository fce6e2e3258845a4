"""`python -m demo`: the demo's subcommands, `suite` (every task, or `--ablations`), `run` (one task) and
`eval` (the simulated operator's rescues).

The demo is an application of sessions: it adds its subcommands to the sessions CLI's conventions
(`sessions.cli.Subcommand`), and sessions never imports it back (it reads only the bundled tasks'
playbooks, `demo.tasks`, which import no sessions module).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from demo.evaluation import evaluate, report
from demo.evaluation import format_table as format_evaluation
from demo.operator_sim import load_policy
from demo.shop import start_shop
from demo.suite import auto_approver, format_table, run_suite
from demo.tasks import TaskError, check_answer, load_tasks, select_tasks
from planner.inputs import shown
from planner.render import tree_text
from sessions import cli
from sessions.backends import MODEL_HELP, artifacts_root
from sessions.client.creation import create_session
from sessions.store import EventStore
from sessions.worker.runner import Runner

__all__ = ["build_parser", "main"]


def _output_file(text: str) -> Path:
    """Where the suite writes its results (an argparse type), checked before the suite spends minutes running."""
    path = Path(cli.path_argument("path")(text))
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{shown(path)} is a directory; give a file path such as var/suite.json")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise argparse.ArgumentTypeError(
            f"{shown(path)} is inside a file, not a directory; give another path"
        ) from None
    return path


def _suite(args: argparse.Namespace, store: EventStore) -> int:
    if args.ablations:
        from demo.ablations import ablations_command

        text, code = ablations_command(
            store,
            model=args.model,
            tasks_file=Path(args.tasks) if args.tasks is not None else None,
            out=args.out or _output_file("var/ablations.json"),
            artifacts=artifacts_root(args.db),
            only=args.only or None,
        )
        print(text)
        return code
    out: Path = args.out or _output_file("var/suite.json")
    rows = run_suite(
        store,
        tasks_file=Path(args.tasks) if args.tasks is not None else None,
        model=args.model,
        config=cli.ablation_config(args),
        approve=not args.reject_guarded,
        artifacts=artifacts_root(args.db),
        only=args.only or None,
    )
    print(format_table(rows))
    out.write_text(json.dumps([asdict(row) for row in rows], indent=2, ensure_ascii=False))
    cli.emit({"tasks": len(rows), "passed": sum(row.success for row in rows), "results": str(out)})
    return cli.EXIT_OK


def _suite_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="demo", type=cli.text_argument("model spec", 200_000), help=MODEL_HELP)
    parser.add_argument("--tasks", type=cli.path_argument("path"), help="a tasks JSON file (default demo/tasks.json)")
    parser.add_argument(
        "--only", action="append", type=cli.text_argument("task id", 200), help="run only this task id (repeatable)"
    )
    cli.add_ablations(parser)
    parser.add_argument(
        "--reject-guarded", action="store_true", help="reject guarded actions instead of approving them"
    )
    parser.add_argument(
        "--ablations",
        action="store_true",
        help="run the suite under Full, OR only, Repair only and Neither and print the paper's Table 7 layout",
    )
    parser.add_argument(
        "--out", type=_output_file, help="where to write the results (default var/suite.json, var/ablations.json)"
    )


def _run(args: argparse.Namespace, store: EventStore) -> int:
    """Start the bundled shop, run one demo task with the offline model, show the tree and the check."""
    [task] = select_tasks(load_tasks(), [args.task_id])
    config = cli.ablation_config(args)
    with start_shop() as shop:
        print(f"demo shop at {shop.url}; task: {task.task}", file=sys.stderr)
        session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path, config=config)
        state = Runner(store, session_id, artifacts=artifacts_root(args.db)).run(
            on_idle=auto_approver(store, session_id)
        )
    print(state.secrets.mask(tree_text(state.tree)))  # the runner's state holds the values it typed
    verdict = check_answer(task, state.final_answer or "")
    cli.emit({**cli.run_summary(session_id, state), "criteria_met": verdict.passed, "missing": verdict.missing})
    return cli.EXIT_OK if verdict.passed else cli.EXIT_FAILED


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", nargs="?", default="wireless-photo-printers", type=cli.text_argument("task id", 200))
    cli.add_ablations(parser)


def _eval(args: argparse.Namespace, store: EventStore) -> int:
    """The bundled tasks without an operator, with the simulated one, and with each task's correction."""
    policy = load_policy(args.operator, Path(args.policies) if args.policies else None)
    results = evaluate(
        store,
        policy=policy,
        model=args.model,
        only=args.tasks,
        artifacts=artifacts_root(args.db),
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    document = report(results, model=args.model, policy=policy.name)
    print(format_evaluation(results, document))
    if args.out is not None:
        args.out.write_text(json.dumps(document, indent=2, ensure_ascii=False))
    out = str(args.out) if args.out is not None else None
    cli.emit({"tasks": len(results), "rescued": document["rescued"], "success": document["success"], "out": out})
    return cli.EXIT_OK


def _task_ids(text: str) -> list[str]:
    """`--tasks a,b`: task ids separated by commas (checked against the task file before anything runs)."""
    ids = [part.strip() for part in cli.text_argument("task list", 10_000)(text).split(",")]
    if not all(ids):
        raise argparse.ArgumentTypeError(f"'{shown(text, 60)}' has an empty task id; give ids separated by commas")
    return ids


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="demo", type=cli.text_argument("model spec", 200_000), help=MODEL_HELP)
    parser.add_argument(
        "--operator",
        default="default",
        type=cli.text_argument("policy name", 100),
        help="the operator policy to follow",
    )
    parser.add_argument(
        "--policies", type=cli.path_argument("path"), help="a policy file (default demo/operator_policies.json)"
    )
    parser.add_argument("--out", type=_output_file, help="write the per-task results and totals as JSON here")
    parser.add_argument("--tasks", type=_task_ids, help="only these task ids, separated by commas")


_SUBCOMMANDS = {
    "suite": cli.Subcommand(
        "run every demo task on the bundled shop and check the answers", _suite_arguments, _suite, (TaskError,)
    ),
    "run": cli.Subcommand("run one demo task on the bundled shop, headless", _run_arguments, _run, (TaskError,)),
    "eval": cli.Subcommand(
        "run the demo tasks with no operator, the simulated operator and each task's correction; compare",
        _eval_arguments,
        _eval,
        (TaskError,),
    ),
}


_PROG = "python -m demo"
_DESCRIPTION = "Run the bundled demo tasks on the demo shop and check the answers."


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m demo` (docs/cli.md is checked against it)."""
    return cli.build_parser(_SUBCOMMANDS, prog=_PROG, description=_DESCRIPTION)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m demo`: the demo's subcommands, with the sessions CLI's errors, `--db` and exit codes."""
    return cli.main(argv, subcommands=_SUBCOMMANDS, prog=_PROG, description=_DESCRIPTION)
