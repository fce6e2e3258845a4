"""What a verb works with besides its arguments: the client it reads and commands sessions through,
the operator its commands are signed with, and the artifact store of this invocation.

The command line is a client like the console (`sessions.client.SessionClient`), over the store
`main` opened, but it never runs a session in the background: this process exits when the verb is
done. So its client's runners are the workers' (`sessions.worker.pool.WorkerClient`): a command it
queues is applied by whichever runner holds the session, a worker or a foreground `run`/`resume`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from sessions.client.client import SessionClient
    from sessions.store import EventStore
    from sessions.store.artifacts import LocalArtifacts

__all__ = ["artifacts", "client_of", "on_client", "operator"]


def client_of(store: EventStore) -> SessionClient:
    """A client of `store` whose sessions the workers (or a foreground run) run, never this process."""
    from sessions.client.client import SessionClient
    from sessions.worker.pool import WorkerClient

    return SessionClient(store, WorkerClient())


def on_client(
    verb: Callable[[argparse.Namespace, SessionClient], int],
) -> Callable[[argparse.Namespace, EventStore], int]:
    """A verb of the client side as a `Subcommand` runs it: it is given the client, never the store."""

    def run(args: argparse.Namespace, store: EventStore) -> int:
        return verb(args, client_of(store))

    return run


def operator(given: str | None) -> str | None:
    """Who sends this command line's commands: `--operator`, else the machine's operator
    (`sessions.client.identity.local_operator`: $ANDOR_OPERATOR, else the user name). A bad `--operator`
    is refused by the command's own validation, as "operator: ..."."""
    from sessions.client.identity import local_operator

    return given if given is not None else local_operator()


def artifacts(args: argparse.Namespace) -> LocalArtifacts:
    """The artifact store of this invocation: `--artifacts` where the subcommand has it, else the
    directory next to the database (`artifacts_root`)."""
    from pathlib import Path

    from sessions.backends import artifacts_root
    from sessions.store.artifacts import LocalArtifacts

    given = getattr(args, "artifacts", None)
    return LocalArtifacts(Path(given) if given else artifacts_root(args.db))
