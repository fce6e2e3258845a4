"""PostgreSQL for the tests: databases on the run's throwaway server (`sessions.store.pgserver`, started by
the `postgres_url` fixture in conftest.py, once per run).

Each test that needs a clean database gets a fresh one from `fresh_database`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sessions.store.pgserver import MissingPostgres, fresh_database
from sessions.store.sql import database_url

__all__ = ["database_for", "fresh_database", "migrated_to", "password_database"]


def password_database(server_url: str, password: str) -> str:
    """A new role that must log in with `password` over TCP, and a new database it owns; returns the
    database's URL without the password (give it in the URL, PGPASSWORD or a password file).

    The throwaway server trusts every local connection, so the role's line goes first in its
    `pg_hba.conf` (read back from the server, then reloaded). Raises `MissingPostgres` when that file
    cannot be written (a server of someone else's, through $ANDOR_TEST_POSTGRES)."""
    tag = uuid.uuid4().hex[:12]
    role, name = f"r_{tag}", f"t_{tag}"
    engine = sa.create_engine(database_url(server_url), isolation_level="AUTOCOMMIT")
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


def migrated_to(url: str, version: int) -> sa.Engine:
    """The database at `url` brought to schema `version` as that version's code left it (migrations 1
    to `version`, each recorded), for tests of what a newer store makes of an older database. The
    caller disposes of the engine once it has written what that version would have."""
    from sessions.store.sql import _MIGRATIONS, _migrations_table

    engine = sa.create_engine(database_url(url))
    with engine.begin() as conn:
        _migrations_table.create(conn)
        for number, migration in enumerate(_MIGRATIONS[:version], start=1):
            migration(conn)
            conn.execute(_migrations_table.insert().values(version=number, applied_at=0.0))
    return engine
