"""The browser's files on disk, readable by its user only: its cookies and local storage, and its folder.

A storage state holds whatever the sites keep in the browser: session cookies, sign-ins, tokens. So it
is written with mode 0600 from the moment it exists (a temporary file of that mode in the same folder,
moved over the old one in one step, so a reader never finds half a file either), an older file of a
wider mode is narrowed before it is read, and the folder of a session's files (screenshots, downloads,
the state) is made 0700. Whoever runs as the same user can still read them all.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["private_file", "private_folder", "write_state"]


def private_folder(folder: Path) -> None:
    """Make `folder` (with any missing parent) and leave it to its user only (0700); an existing one
    open to others is narrowed."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(folder.stat().st_mode) & 0o077:
        folder.chmod(0o700)


def private_file(path: Path) -> None:
    """Narrow the file at `path`, if there is one, to its user only (0600)."""
    if path.is_file() and stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(0o600)


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """`state` (a Playwright storage state) as JSON at `path`, mode 0600 from its first byte: written to a
    temporary file of that mode beside it (`mkstemp`), then moved over `path` in one step."""
    data = json.dumps(state, ensure_ascii=False).encode("utf-8")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
