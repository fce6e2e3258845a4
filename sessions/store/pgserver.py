"""A throwaway PostgreSQL server: `initdb` and `pg_ctl` on a directory of its own, removed when it stops.

`make fleet` (`sessions.worker.fleet`) runs its workers on one, and the tests run the PostgreSQL store
contract on one (`tests/postgres.py`). As root, the server runs as the `postgres` user (PostgreSQL
refuses to run as root) through `runuser`; otherwise as the current user. It listens on 127.0.0.1
only, with every connection trusted: it is for this machine, never for a fleet of several.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from glob import glob
from pathlib import Path

from sessions.errors import SessionsError

__all__ = ["MissingPostgres", "PostgresServer", "PostgresServerError", "find_binaries", "fresh_database"]


class PostgresServerError(SessionsError):
    """The throwaway server could not be started (its log is in the message)."""


class MissingPostgres(PostgresServerError):
    """The server binaries are not installed here."""


def find_binaries() -> Path:
    """The directory holding `initdb` and `pg_ctl`: Debian's versioned directories first, then PATH."""
    candidates = sorted(glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(Path(d).parent.name), reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for directory in map(Path, candidates):
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    raise MissingPostgres("PostgreSQL binaries not found (apt-get install postgresql): no initdb/pg_ctl")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """A server on 127.0.0.1:<free port> with its data, socket and log in one directory (`root`, made if
    missing; default: a new temporary one), which `stop` removes."""

    def __init__(self, root: Path | None = None) -> None:
        self.bin = find_binaries()
        self.root = Path(tempfile.mkdtemp(prefix="andor-pg-")) if root is None else root
        self.root.mkdir(parents=True, exist_ok=True)
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")

    @property
    def url(self) -> str:
        """The `postgres` database as its superuser, over TCP, trusted without a password."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresServerError(f"{args[0]} failed (exit {result.returncode}): {result.stderr.strip()}\n{log}")

    def start(self) -> PostgresServer:
        """`initdb`, then `pg_ctl start`; raises PostgresServerError with the server's log when it will not start."""
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        last: Exception | None = None
        for _ in range(3):  # a free port can be taken between the probe and the start; try another
            self.port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
            )
            try:
                # -l is required: without a log file the server inherits our pipes and `run` never returns.
                self._run(
                    "pg_ctl", "start", "-w", "-t", "120", "-D", str(self.data), "-l", str(self.log), "-o", options
                )
                return self
            except PostgresServerError as error:
                last = error
        raise PostgresServerError(f"the throwaway PostgreSQL server did not start: {last}")

    def stop(self) -> None:
        """Stop the server at once (nothing it holds is meant to outlive it) and remove its directory."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server at `server_url` (the tests' and benchmarks' isolation);
    returns its URL."""
    import sqlalchemy as sa

    from sessions.store.sql import database_url

    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(database_url(server_url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return server_url.rsplit("/", 1)[0] + f"/{name}"
