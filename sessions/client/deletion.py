"""Deleting a session: its rows in the store, then its files in the artifact store.

The store deletes the log, the queued commands, the operators' marks on its inbox items and the row in
one transaction, and refuses while a runner holds the session or while a fork's log shows its
screenshots (`EventStore.delete_session`, `SessionInUse`); only then are its files removed: its
screenshots, downloads and the browser's cookies and local storage (`browser-state.json`). Nothing
is kept to undo it.
"""

from __future__ import annotations

from planner.inputs import shown
from sessions.errors import SessionsError
from sessions.store import EventStore
from sessions.store.artifacts import ArtifactStore

__all__ = ["FilesLeft", "delete_session"]


class FilesLeft(SessionsError):
    """A session was deleted, but some of its files could not be removed."""


def delete_session(store: EventStore, session_id: str, artifacts: ArtifactStore | None) -> int:
    """Delete the session from `store`, then its files from `artifacts` (none without it); how many
    files were removed. Raises `SessionNotFound` or `SessionInUse` with nothing deleted, and `FilesLeft`
    when the session is gone but its files could not all be removed (deleting it again finds no session)."""
    store.delete_session(session_id)
    if artifacts is None:
        return 0
    try:
        return artifacts.remove(session_id)
    except OSError as error:
        folder = shown(str(artifacts.session_dir(session_id)), 400)  # whole: it is what to remove by hand
        reason = (error.strerror or str(error) or type(error).__name__).lower()
        raise FilesLeft(
            f"session {session_id} was deleted, but its files in {folder} could not all be removed ({reason}); "
            "remove that directory by hand"
        ) from None
