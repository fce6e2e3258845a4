"""Where a session's files live: the browser's screenshots and its cookies and local storage.

Every writer and reader goes through an `ArtifactStore`: the runner's browser writes into a local
directory per session (`session_dir`), the log records each screenshot's path there, readers ask
the store for a recorded path's bytes (`read`, `exists`), and deleting a session removes its files
(`remove`). The default, `LocalArtifacts`, is one directory that every worker and the console must share.

The browser's cookies and local storage (`browser-state.json` in the session's directory) are no
recorded file: no export reads them, and the browser writes them readable by its user only
(`planner.browser.storage`).

Object storage would fit without changing the runner's contract: a local cache as `session_dir`,
filled before a resume and sent up after each committed action, and reads by session id and file
name (docs/architecture.md, "sessions/store/artifacts.py").
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["ArtifactStore", "LocalArtifacts", "artifact_store"]


class ArtifactStore(Protocol):
    """Session files: a local directory for the browser to write into, and reads of recorded paths."""

    def session_dir(self, session_id: str) -> Path:
        """The local directory the session's browser writes its screenshots and state into."""
        ...

    def read(self, path: str) -> bytes:
        """The bytes of a file a session recorded (a screenshot's path); `OSError` when it is gone."""
        ...

    def exists(self, path: str) -> bool:
        """Whether `read(path)` would find the file."""
        ...

    def remove(self, session_id: str) -> int:
        """Remove every file of the session (its directory, browser state included); how many there were
        (0: none). `OSError` when one could not be removed."""
        ...


@dataclass(frozen=True, slots=True)
class LocalArtifacts:
    """Artifacts in one directory on this machine (or on storage every machine mounts at the same path).

    The root is made absolute once, so the paths the log records name the same files from any
    working directory: the console and a report read what a worker started elsewhere wrote."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser().absolute())

    def session_dir(self, session_id: str) -> Path:
        return self.root / session_id

    def read(self, path: str) -> bytes:
        return Path(path).read_bytes()

    def exists(self, path: str) -> bool:
        return Path(path).is_file()

    def remove(self, session_id: str) -> int:
        """The session's directory removed whole. An id that is no plain directory name ('.', '..', one
        with a '/') names no directory of its own here, and nothing is removed for it."""
        folder = self.session_dir(session_id)
        if session_id in ("", ".", "..") or folder.parent != self.root or folder.name != session_id:
            return 0
        if folder.is_symlink():  # not the browser's doing; whatever it points to is not the session's
            folder.unlink()
            return 0
        if not folder.is_dir():
            return 0
        count = sum(len(files) for _, _, files in os.walk(folder))
        shutil.rmtree(folder)
        return count


def artifact_store(artifacts: ArtifactStore | Path | None) -> ArtifactStore | None:
    """A store from what a caller has: a store as it is, a directory as the local store at it, None as none
    (a runner then keeps no screenshots and no browser state)."""
    return LocalArtifacts(artifacts) if isinstance(artifacts, Path) else artifacts
