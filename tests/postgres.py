"""A throwaway PostgreSQL server for the tests: `initdb` and `pg_ctl` on a temporary directory.

One server per test run (see the `postgres_url` fixture in conftest.py); each test that needs a
clean database gets a fresh one from `fresh_database`. As root, the server runs as the `postgres`
user (PostgreSQL refuses to run as root); otherwise as the current user.
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
from typing import Any

import sqlalchemy as sa

__all__ = [
    "MissingPostgres",
    "PostgresServer",
    "database_for",
    "find_binaries",
    "fresh_database",
    "password_database",
]


class MissingPostgres(RuntimeError):
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
    """A server on 127.0.0.1:<free port> with its data, socket and log in one temporary directory."""

    def __init__(self) -> None:
        self.bin = find_binaries()
        self.root = Path(tempfile.mkdtemp(prefix="andor-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")

    @property
    def url(self) -> str:
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
            raise RuntimeError(f"{args[0]} failed (exit {result.returncode}): {result.stderr.strip()}\n{log}")

    def start(self) -> PostgresServer:
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
            except RuntimeError as error:
                last = error
        raise RuntimeError(f"the throwaway PostgreSQL server did not start: {last}")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(
        server_url.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT"
    )
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def password_database(server_url: str, password: str) -> str:
    """A new role that must log in with `password` over TCP, and a new database it owns; returns the
    database's URL without the password (give it in the URL, PGPASSWORD or a password file).

    The throwaway server trusts every local connection, so the role's line goes first in its
    `pg_hba.conf` (read back from the server, then reloaded). Raises `MissingPostgres` when that file
    cannot be written (a server of someone else's, through $ANDOR_TEST_POSTGRES)."""
    tag = uuid.uuid4().hex[:12]
    role, name = f"r_{tag}", f"t_{tag}"
    engine = sa.create_engine(
        server_url.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT"
    )
    try:
        with engine.connect() as conn:
            hba = Path(conn.execute(sa.text("SHOW hba_file")).scalar_one())
            try:
                rules = hba.read_text()
                hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n{rules}")
            except OSError as error:
                raise MissingPostgres(f"cannot make the server ask for a password ({error})") from None
            conn.execute(sa.text("SELECT pg_reload_conf()"))
            conn.execute(sa.text(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'"))
            conn.execute(sa.text(f'CREATE DATABASE "{name}" OWNER "{role}"'))
    finally:
        engine.dispose()
    host = sa.make_url(server_url)
    return f"postgresql://{role}@{host.host}:{host.port}/{name}"


def database_for(kind: str, request: Any, tmp_path: Path) -> str:
    """A fresh, empty database of one backend for a test: "memory", "disk" or "postgres" (the last
    from the run's throwaway server, so only tests that ask for it start one)."""
    if kind == "postgres":
        return fresh_database(request.getfixturevalue("postgres_url"))
    if kind == "disk":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return "sqlite://"
