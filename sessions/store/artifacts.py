"""Where a session's files live: the browser's screenshots and its cookies and local storage.

Every writer and reader goes through an `ArtifactStore`. The runner's environment is given a local
directory per session (`session_dir`) where the browser writes its screenshots (`0001.jpg`, ...)
and its `browser-state.json`, and the log records each screenshot's path there; readers (the HTML
report, and through sessions the console) ask the store for a recorded path's bytes (`read`,
`exists`). The default, `LocalArtifacts`, is one directory: next to a database file, or one given
with `--artifacts`, which every worker and the console must share (NFS or similar across machines).

How an object-storage implementation would fit, without changing the runner's contract: it keeps a
local cache directory and names each object by the last two parts of a recorded path (the session
id and the file name), since the browser only ever writes `session_dir(id)/NAME`.
- `session_dir` returns the session's cache directory after downloading what the store holds for
  it, so a resume on another machine starts from the session's cookies and keeps numbering its
  screenshots after the last one taken (`BrowserEnvironment` reads both from that directory);
- after each browser action, once its events are committed (`Runner._persist` of a batch holding
  an `action_executed`), the runner would upload the directory's new and changed files: a worker
  killed after that loses nothing another worker needs;
- `read` and `exists` look in the cache first and fetch the object by its key otherwise, so the
  console and the reports read any worker's screenshots.
"""

from __future__ import annotations

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


def artifact_store(artifacts: ArtifactStore | Path | None) -> ArtifactStore | None:
    """A store from what a caller has: a store as it is, a directory as the local store at it, None as none
    (a runner then keeps no screenshots and no browser state)."""
    return LocalArtifacts(artifacts) if isinstance(artifacts, Path) else artifacts
