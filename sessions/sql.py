"""SQLAlchemy Core implementation of the session store (SQLite by default, PostgreSQL by URL).

SQLite runs in WAL mode with `synchronous=NORMAL`: a committed append survives the writer being
killed (the crash we design for), and readers in other processes never block the runner.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from planner.events import Event, Kind, upgrade
from sessions.store import (
    EventStore,
    QueuedCommand,
    SeqConflict,
    SessionInfo,
    SessionNotFound,
    StoreError,
    StoreUnavailable,
)

__all__ = ["SqlStore", "open_store", "database_url"]

_meta = sa.MetaData()

_sessions = sa.Table(
    "sessions",
    _meta,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("task", sa.Text, nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("steps", sa.Integer, nullable=False, default=0),
    sa.Column("last_seq", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("parent_id", sa.String(64)),
    sa.Column("forked_at", sa.Integer),
    sa.Column("runner_pid", sa.Integer),
    sa.Column("heartbeat_at", sa.Float),
)

_events = sa.Table(
    "events",
    _meta,
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(40), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("node_id", sa.String(200)),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)

_commands = sa.Table(
    "commands",
    _meta,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("session_id", sa.String(64), sa.ForeignKey("sessions.id"), nullable=False, index=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("queued_at", sa.Float, nullable=False),
    sa.Column("order_no", sa.Integer, nullable=False),
    sa.Column("handled", sa.Boolean, nullable=False, default=False),
)

_migrations_table = sa.Table(
    "schema_migrations",
    _meta,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.Float, nullable=False),
)


def _create_v1(conn: Connection) -> None:
    for table in (_sessions, _events, _commands):
        table.create(conn, checkfirst=True)


_MIGRATIONS: list[Callable[[Connection], None]] = [_create_v1]
"""Ordered schema changes; entry i brings the schema to version i + 1. Only ever append."""


def database_url(target: str | os.PathLike[str]) -> str:
    """A SQLAlchemy URL from a URL or a file path (":memory:" for an in-memory database)."""
    text = str(target)
    if "://" in text:
        return text
    if text == ":memory:":
        return "sqlite://"
    path = Path(text).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class SqlStore(EventStore):
    """`EventStore` on any SQLAlchemy database."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            if url.startswith("sqlite"):
                kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False}}
                if url in ("sqlite://", "sqlite:///:memory:"):
                    kwargs["poolclass"] = StaticPool
                self._engine: Engine = sa.create_engine(url, **kwargs)
                sa.event.listen(self._engine, "connect", _sqlite_pragmas)
            else:
                self._engine = sa.create_engine(url, pool_pre_ping=True)
            self._migrate()
        except SQLAlchemyError as error:
            raise StoreUnavailable(f"cannot open the session database {url}: {error}") from error

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """One transaction; database errors leave as the store's own exceptions, here only."""
        try:
            with self._engine.begin() as conn:
                yield conn
        except IntegrityError as error:
            raise SeqConflict(f"a concurrent writer got there first: {error.orig}") from error
        except OperationalError as error:
            raise StoreUnavailable(f"session database error: {error.orig}") from error
        except SQLAlchemyError as error:
            raise StoreError(f"session database error: {error}") from error

    def _migrate(self) -> None:
        """Apply missing migrations; a process that loses the race to another simply re-checks."""
        for attempt in range(5):
            try:
                with self._engine.begin() as conn:
                    _migrations_table.create(conn, checkfirst=True)
                    done = set(conn.execute(sa.select(_migrations_table.c.version)).scalars())
                    for version, migration in enumerate(_MIGRATIONS, start=1):
                        if version not in done:
                            migration(conn)
                            conn.execute(_migrations_table.insert().values(version=version, applied_at=time.time()))
                return
            except (OperationalError, IntegrityError):
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    # -- writing ----------------------------------------------------------------------------------

    @staticmethod
    def _rows(session_id: str, events: Sequence[Event]) -> list[dict[str, Any]]:
        return [
            {
                "session_id": session_id,
                "seq": e.seq,
                "kind": e.kind.value,
                "version": e.version,
                "node_id": e.node_id,
                "data": json.dumps(e.data, separators=(",", ":")),
                "at": e.at,
            }
            for e in events
        ]

    def create_session(
        self,
        session_id: str,
        task: str,
        model: str,
        events: Sequence[Event],
        *,
        status: str,
        steps: int = 0,
        reason: str | None = None,
        parent_id: str | None = None,
        forked_at: int | None = None,
    ) -> None:
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                _sessions.insert().values(
                    id=session_id,
                    task=task,
                    model=model,
                    status=status,
                    reason=reason,
                    steps=steps,
                    last_seq=events[-1].seq if events else 0,
                    created_at=now,
                    updated_at=now,
                    parent_id=parent_id,
                    forked_at=forked_at,
                )
            )
            if events:
                conn.execute(_events.insert(), self._rows(session_id, events))

    def append(
        self,
        session_id: str,
        events: Sequence[Event],
        *,
        status: str,
        reason: str | None,
        steps: int,
        handled: Sequence[str] = (),
    ) -> None:
        if not events:
            return
        with self._tx() as conn:
            conn.execute(_events.insert(), self._rows(session_id, events))
            updated = conn.execute(
                _sessions.update()
                .where(_sessions.c.id == session_id, _sessions.c.last_seq == events[0].seq - 1)
                .values(status=status, reason=reason, steps=steps, last_seq=events[-1].seq, updated_at=time.time())
            )
            if updated.rowcount != 1:
                raise SeqConflict(f"session {session_id} moved on past event {events[0].seq - 1}")
            if handled:
                conn.execute(_commands.update().where(_commands.c.id.in_(list(handled))).values(handled=True))

    def enqueue(self, session_id: str, command_id: str, payload: dict[str, Any]) -> None:
        self.session(session_id)
        with self._tx() as conn:
            order = conn.execute(
                sa.select(sa.func.coalesce(sa.func.max(_commands.c.order_no), 0)).where(
                    _commands.c.session_id == session_id
                )
            ).scalar_one()
            conn.execute(
                _commands.insert().values(
                    id=command_id,
                    session_id=session_id,
                    payload=json.dumps(payload),
                    queued_at=time.time(),
                    order_no=order + 1,
                    handled=False,
                )
            )

    # -- reading ----------------------------------------------------------------------------------

    def load(self, session_id: str, *, after: int = 0, upto: int | None = None) -> list[Event]:
        query = sa.select(
            _events.c.seq, _events.c.kind, _events.c.version, _events.c.node_id, _events.c.data, _events.c.at
        ).where(_events.c.session_id == session_id, _events.c.seq > after)
        if upto is not None:
            query = query.where(_events.c.seq <= upto)
        with self._tx() as conn:
            rows = conn.execute(query.order_by(_events.c.seq)).all()
        if not rows and after == 0:
            self.session(session_id)
        kinds = {kind.value: kind for kind in Kind}
        loads = json.loads
        events = []
        for seq, kind, version, node_id, data, at in rows:
            payload = loads(data)
            if version != 1:
                payload = upgrade(kind, version, payload)
            events.append(Event(seq, kinds[kind], node_id, payload, version, at))
        return events

    def session(self, session_id: str) -> SessionInfo:
        with self._tx() as conn:
            row = conn.execute(sa.select(_sessions).where(_sessions.c.id == session_id)).mappings().first()
        if row is None:
            raise SessionNotFound(f"no session {session_id!r}; `python -m sessions list` shows the sessions")
        return SessionInfo(**row)

    def sessions(self) -> list[SessionInfo]:
        with self._tx() as conn:
            rows = conn.execute(sa.select(_sessions).order_by(_sessions.c.created_at.desc())).mappings().all()
        return [SessionInfo(**row) for row in rows]

    def pending(self, session_id: str) -> list[QueuedCommand]:
        query = (
            sa.select(_commands.c.id, _commands.c.payload, _commands.c.queued_at)
            .where(_commands.c.session_id == session_id, _commands.c.handled.is_(False))
            .order_by(_commands.c.order_no)
        )
        with self._tx() as conn:
            rows = conn.execute(query).all()
        return [QueuedCommand(row.id, json.loads(row.payload), row.queued_at) for row in rows]

    # -- runner lease -----------------------------------------------------------------------------

    def claim(self, session_id: str, pid: int, now: float, stale_after: float) -> bool:
        with self._tx() as conn:
            result = conn.execute(
                _sessions.update()
                .where(
                    _sessions.c.id == session_id,
                    sa.or_(
                        _sessions.c.runner_pid.is_(None),
                        _sessions.c.runner_pid == pid,
                        _sessions.c.heartbeat_at < now - stale_after,
                    ),
                )
                .values(runner_pid=pid, heartbeat_at=now)
            )
        return result.rowcount == 1

    def heartbeat(self, session_id: str, pid: int, now: float) -> None:
        with self._tx() as conn:
            conn.execute(
                _sessions.update()
                .where(_sessions.c.id == session_id, _sessions.c.runner_pid == pid)
                .values(heartbeat_at=now)
            )

    def release(self, session_id: str, pid: int) -> None:
        with self._tx() as conn:
            conn.execute(
                _sessions.update()
                .where(_sessions.c.id == session_id, _sessions.c.runner_pid == pid)
                .values(runner_pid=None, heartbeat_at=None)
            )

    def close(self) -> None:
        self._engine.dispose()


def open_store(target: str | os.PathLike[str] | None = None) -> SqlStore:
    """Open the store at a path or URL; default `$ANDOR_DB` or ./var/sessions.db."""
    return SqlStore(database_url(target or os.environ.get("ANDOR_DB", "var/sessions.db")))
