"""`worker`: this process becomes one of the workers (`sessions.worker.processes.Worker`) that run the
sessions needing a runner, until Ctrl-C or SIGTERM hands the running ones back."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from planner.inputs import shown
from sessions.cli.arguments import amount, whole
from sessions.cli.context import artifacts
from sessions.cli.conventions import EXIT_OK, Subcommand, emit, path_argument
from sessions.cli.foreground import stop_on_signals

if TYPE_CHECKING:
    from sessions.store import EventStore

__all__ = ["WORKER"]


def _worker(args: argparse.Namespace, store: EventStore) -> int:
    from sessions.worker.processes import Worker

    def report(session_id: str, what: str) -> None:
        print(f"worker {worker.owner}: session {session_id} {what}", file=sys.stderr, flush=True)

    worker = Worker(
        store,
        concurrency=args.concurrency,
        artifacts=artifacts(args),
        browser_endpoint=args.browser_endpoint,
        shared_browser=args.shared_browser,
        stale_after=args.lease_seconds,
        on_run=report,
    )
    print(f"worker {worker.owner} ready (up to {args.concurrency} at a time)", file=sys.stderr, flush=True)
    with stop_on_signals(worker.stop):
        runs = worker.run()
    emit({"worker": worker.owner, "runs": runs})
    return EXIT_OK


def _worker_arguments(parser: argparse.ArgumentParser) -> None:
    from sessions.store import STALE_AFTER

    parser.add_argument(
        "--concurrency",
        type=whole(1, 1000),
        default=1,
        help="sessions this worker runs at once (default 1; a session spends most of its time waiting for its "
        "model, so one worker carries hundreds: docs/benchmarks.md, fleet capacity)",
    )
    browsers = parser.add_mutually_exclusive_group()
    browsers.add_argument(
        "--browser-endpoint",
        type=_browser_endpoint,
        help="drive the Chromium of a Playwright browser server at this ws:// address instead of launching one",
    )
    browsers.add_argument(
        "--shared-browser",
        action="store_true",
        help="run every browser session of this worker in one Chromium, a context each, instead of a Chromium each "
        "(a third less memory per session: docs/benchmarks.md, fleet capacity)",
    )
    parser.add_argument(
        "--artifacts",
        type=path_argument("artifacts directory"),
        help="screenshots and browser state, shared by every worker and the console "
        "(default: next to a database file, else var/artifacts)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=amount(1, True, 3600),
        default=STALE_AFTER,
        help=f"seconds without a heartbeat before this worker's runs are presumed dead (default {STALE_AFTER:g}); "
        "kept with each lease it takes, so every other runner judges its leases by it",
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


WORKER = Subcommand("run the sessions that need a runner, until stopped", _worker_arguments, _worker)
