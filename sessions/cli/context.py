"""What a verb works with besides its arguments: the operator its commands are signed with, and the
artifact store of this invocation."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from sessions.store.artifacts import LocalArtifacts

__all__ = ["artifacts", "operator"]


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
