"""SQLAlchemy Core implementation of the session store (SQLite by default, PostgreSQL by URL).

SQLite runs in WAL mode with `synchronous=NORMAL`: a committed append survives the writer being
killed (the crash we design for), and readers in other processes never block the runner. Every
write transaction starts with `BEGIN IMMEDIATE`, so a transaction that reads and then writes (the
lease compare-and-set, say) holds the write lock from its first read; on PostgreSQL the same
transactions lock the session row (`SELECT ... FOR UPDATE`).

On PostgreSQL, leases are written and judged by the server's clock (`_DATABASE_NOW`), not the
runners' (SQLite's runners share one machine: its store takes their time). Workers claim with
`SKIP LOCKED`, so two never take the same candidate, and writes send `NOTIFY andor_runnable` (to
wake workers) and `NOTIFY andor_changed` (so readers re-read only what changed)
(docs/architecture.md, "sessions/store/sql.py").
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from planner.inputs import MAX_PATH_CHARS, shown
from sessions.store import (
    DEFAULT_DATABASE,
    STALE_AFTER,
    EventStore,
    LeaseLost,
    QueuedCommand,
    SeqConflict,
    SessionFinished,
    SessionInfo,
    SessionInUse,
    SessionNotFound,
    StoreError,
    StoreUnavailable,
    database_target,
    lease_live,
)

if TYPE_CHECKING:
    from planner.events import Event
    from planner.templates import Template

__all__ = [
    "CHANGED_CHANNEL",
    "POOL_OVERFLOW",
    "POOL_SIZE",
    "SqlStore",
    "database_url",
    "open_store",
    "without_password",
]

_SEQ_LIMIT = 2**31 - 1
"""Sequence numbers are 32-bit integer columns; bounds beyond this are clamped, not overflowed."""

POOL_SIZE = 5
POOL_OVERFLOW = 10
"""A process's PostgreSQL connections: at most POOL_SIZE + POOL_OVERFLOW from its pool, however many
sessions it runs (a worker's hundreds share them: each holds one only for a transaction), plus the one
it LISTENs on. Each is named `andor:PID` (`application_name`), so `pg_stat_activity` says whose it is."""

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

# The tables exactly as the first release created them. Later columns are added to the tables below
# and to existing databases by their own migration, so version 1 means the same schema everywhere.
_V1 = sa.MetaData()
for _table in (_sessions, _events, _commands):
    _table.to_metadata(_V1)

# -- version 2: the runner lease's owner and fencing token; one order number per queued command --
_sessions.append_column(sa.Column("lease_owner", sa.String(200)))
_sessions.append_column(sa.Column("lease_gen", sa.Integer, nullable=False, server_default="0"))
_command_order = sa.Index("uq_commands_session_order", _commands.c.session_id, _commands.c.order_no, unique=True)

# -- version 3: the newest command's order number on the session row, so a runner sees from its own
# append whether anything was queued, instead of querying the queue before every step --
_sessions.append_column(sa.Column("last_order", sa.Integer, nullable=False, server_default="0"))

# -- version 4: why the session has its status (a `planner.events.Cause` value), so the attention
# inbox tells the kinds of pause apart without reading the reason's wording --
_sessions.append_column(sa.Column("cause", sa.String(32)))

# -- version 5: the operators' plan templates, every version of each name (`planner.templates`) --
_templates = sa.Table(
    "templates",
    _meta,
    sa.Column("name", sa.String(80), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

# -- version 6: the fleet view's columns, kept by every append: spend so far (None: not known, for a
# session not written since) and when the status last changed (how long a pause has waited); and an
# index of action events by time, for the actions of the last minutes per session --
_sessions.append_column(sa.Column("cost_usd", sa.Float))
_sessions.append_column(sa.Column("status_since", sa.Float))
_ACTION_KIND = "action_executed"
"""`planner.events.Kind.ACTION_EXECUTED`, spelled here so the index and its query match it literally."""
_RECENT_ACTIONS_INDEX = f"CREATE INDEX ix_events_actions_at ON events (at) WHERE kind = '{_ACTION_KIND}'"
"""A partial index, in the SQL both databases speak: an `sa.Index` with dialect `where` options would
load the PostgreSQL dialect on import, 0.05 s more for every command line, SQLite ones included."""

# -- version 7: the lease's length, set by the runner that takes it, so every claimer judges a lease
# stale by its holder's own length: runners of one database may be started with different ones --
_sessions.append_column(sa.Column("lease_seconds", sa.Float))

# -- version 8: what each operator did with the attention inbox's items (`sessions.client.attention`):
# an item is a session's need, so a mark lasts until the session needs them for something else --
_attention_marks = sa.Table(
    "attention_marks",
    _meta,
    sa.Column("operator", sa.String(200), primary_key=True),
    sa.Column("item", sa.String(400), primary_key=True),
    sa.Column("mark", sa.String(16), nullable=False),
    sa.Column("marked_at", sa.Float, nullable=False),
)

_migrations_table = sa.Table(
    "schema_migrations",
    _meta,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.Float, nullable=False),
)


_DATABASE_NOW = sa.cast(sa.extract("epoch", sa.func.clock_timestamp()), sa.Float)
"""PostgreSQL's time, in seconds since the epoch like `time.time()`: its leases are written and judged by
it, so a machine whose clock runs ahead cannot take a live lease. `clock_timestamp()`, not `now()`:
`now()` is when the transaction began, and a lease's transaction may first wait for the session row's
lock, so a heartbeat would be written older than it is and a claim would judge the row at a moment
before it could read it."""
_CLOCK_RECHECK_S = 60.0
"""How long `SqlStore.clock` keeps the database's lead over this machine's clock before reading it again."""


def _take_lease(
    session_id: str, gen: int, owner: str, pid: int | None, now: float | sa.ColumnElement[float], length: float
) -> sa.Update:
    """The compare-and-set that takes a session's lease: only from generation `gen`, which it moves on
    (the new generation is the fencing token every write of the new holder carries); `now` is its
    first heartbeat (`_DATABASE_NOW` on PostgreSQL)."""
    return (
        _sessions.update()
        .where(_sessions.c.id == session_id, _sessions.c.lease_gen == gen)
        .values(lease_owner=owner, lease_gen=gen + 1, runner_pid=pid, heartbeat_at=now, lease_seconds=length)
    )


def _advance(fenced: bool, database_clock: bool = False) -> sa.Update:
    """The append's update of the session row, built once (building it per append cost more than
    running it): it moves `last_seq` on only from the expected value and, when `fenced`, only under
    the writer's lease generation; with `database_clock`, its heartbeat is the database's time."""
    where = [_sessions.c.id == sa.bindparam("s_id"), _sessions.c.last_seq == sa.bindparam("s_after")]
    values = {
        "status": sa.bindparam("s_status"),
        "cause": sa.bindparam("s_cause"),
        "reason": sa.bindparam("s_reason"),
        "steps": sa.bindparam("s_steps"),
        "last_seq": sa.bindparam("s_last"),
        "updated_at": sa.bindparam("s_now"),
        "cost_usd": sa.func.coalesce(sa.bindparam("s_cost", type_=sa.Float), _sessions.c.cost_usd),
        "task": sa.func.coalesce(sa.bindparam("s_task", type_=sa.Text), _sessions.c.task),
        "status_since": sa.case(
            (_sessions.c.status == sa.bindparam("s_status"), _sessions.c.status_since), else_=sa.bindparam("s_now")
        ),
    }
    if fenced:
        where += [_sessions.c.lease_gen == sa.bindparam("s_lease"), _sessions.c.lease_owner.is_not(None)]
        # A runner's write under its lease is a heartbeat too (when it says when: `beat`).
        beat = sa.bindparam("s_beat", type_=sa.Float)
        values["heartbeat_at"] = (
            sa.case((sa.cast(beat, sa.Float).is_(None), _sessions.c.heartbeat_at), else_=_DATABASE_NOW)  # typed NULL
            if database_clock
            else sa.func.coalesce(beat, _sessions.c.heartbeat_at)
        )
    return _sessions.update().where(*where).values(values).returning(_sessions.c.last_order)


_ADVANCE = {(fenced, clock): _advance(fenced, clock) for fenced in (False, True) for clock in (False, True)}
"""By (fenced, the database's clock)."""

_RUNNABLE_CHANNEL = "andor_runnable"
"""The PostgreSQL notification channel workers listen on; the payload is the session id."""
CHANGED_CHANNEL = "andor_changed"
"""The PostgreSQL notification channel for "something about this session changed"; the payload is its id."""
_INSERT_EVENTS = _events.insert()


class _Direct:
    """A Core statement compiled once for one dialect and run on the driver's own cursor. The runner
    appends once per step, and SQLAlchemy's per-execution work (context, events, result wrapping)
    cost more than the write itself; these statements bind plain strings and numbers, which need
    none of SQLAlchemy's type conversions."""

    __slots__ = ("names", "sql")

    def __init__(self, statement: sa.Insert | sa.Update, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = compiled.string
        self.names = compiled.positiontup  # the parameter order for positional styles; None for named ones

    def bind(self, values: Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
        return values if self.names is None else tuple(values[name] for name in self.names)

    def bind_many(self, rows: Sequence[Mapping[str, Any]]) -> Sequence[Sequence[Any]] | Sequence[Mapping[str, Any]]:
        """`bind` for each of `rows`, all in the one style `executemany` takes."""
        return rows if self.names is None else [tuple(values[name] for name in self.names) for values in rows]


def _create_v1(conn: Connection) -> None:
    _V1.create_all(conn, checkfirst=True)


def _lease_and_unique_order_v2(conn: Connection) -> None:
    """A lease owner token and generation per session, and unique command order numbers. Orders
    that concurrent enqueues duplicated before this version are renumbered, keeping their order."""
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN lease_owner VARCHAR(200)"))
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN lease_gen INTEGER NOT NULL DEFAULT 0"))
    rows = conn.execute(
        sa.select(_commands.c.id, _commands.c.session_id, _commands.c.order_no).order_by(
            _commands.c.session_id, _commands.c.order_no, _commands.c.queued_at, _commands.c.id
        )
    ).all()
    counts: dict[str, int] = {}
    for row in rows:
        order = counts[row.session_id] = counts.get(row.session_id, 0) + 1
        if row.order_no != order:
            conn.execute(_commands.update().where(_commands.c.id == row.id).values(order_no=order))
    _command_order.create(conn)


def _last_order_v3(conn: Connection) -> None:
    """Each session's newest command order number, from the commands already queued."""
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN last_order INTEGER NOT NULL DEFAULT 0"))
    newest = (
        sa.select(sa.func.coalesce(sa.func.max(_commands.c.order_no), 0))
        .where(_commands.c.session_id == _sessions.c.id)
        .scalar_subquery()
    )
    conn.execute(_sessions.update().values(last_order=newest))


_STATUS_KINDS_V4 = (
    "session_created",
    "session_forked",
    "session_status",
    "session_finished",
    "approval_requested",
    "approval_granted",
)
"""The kinds of event that set a session's status, as of version 4: the newest of them says its cause."""


def _cause_v4(conn: Connection) -> None:
    """Each session's cause, as folding the newest event that set its status gives it (an older
    `session_status` event is upgraded on reading, which derives its cause from its reason). A
    session whose event cannot be read keeps none: the inbox then treats a pause as a problem."""
    from planner.errors import PlannerError
    from planner.events import Event
    from planner.state import SessionState, apply

    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN cause VARCHAR(32)"))
    newest = (
        sa.select(_events.c.session_id, sa.func.max(_events.c.seq).label("seq"))
        .where(_events.c.kind.in_(_STATUS_KINDS_V4))
        .group_by(_events.c.session_id)
        .subquery()
    )
    rows = conn.execute(
        sa.select(
            _events.c.session_id, _events.c.seq, _events.c.kind, _events.c.node_id, _events.c.data, _events.c.version
        ).join(newest, sa.and_(_events.c.session_id == newest.c.session_id, _events.c.seq == newest.c.seq))
    ).all()
    for row in rows:
        state = SessionState(seq=row.seq - 1)
        try:
            apply(state, Event.from_json(row.seq, row.kind, row.node_id, row.data, row.version))
        except PlannerError:
            continue
        if state.cause is not None:
            conn.execute(_sessions.update().where(_sessions.c.id == row.session_id).values(cause=state.cause.value))


def _templates_v5(conn: Connection) -> None:
    """A table for plan templates; no earlier version kept any."""
    _templates.create(conn)


def _fleet_v6(conn: Connection) -> None:
    """The fleet view's columns: each session's status taken as changed when its row last did (the
    closest the old rows know), its spend left unknown until its next append (it is a fold of the
    log's model calls, which the runner keeps); and the index."""
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN cost_usd FLOAT"))
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN status_since FLOAT"))
    conn.execute(_sessions.update().values(status_since=_sessions.c.updated_at))
    conn.execute(sa.text(_RECENT_ACTIONS_INDEX))


def _lease_seconds_v7(conn: Connection) -> None:
    """The lease length column, unknown for the leases already held: a claimer judges those by its own
    length, as every claimer did before this version."""
    conn.execute(sa.text("ALTER TABLE sessions ADD COLUMN lease_seconds FLOAT"))


def _attention_marks_v8(conn: Connection) -> None:
    """A table for the operators' marks on inbox items; nobody marked any before."""
    _attention_marks.create(conn)


def _answer_checked_v9(conn: Connection) -> None:
    """A succeeded session whose answer meets its task's check says so in its row ("answer checked"),
    as the fold has said since this version; before, such a row said only "finished", which lists
    now read as an answer nothing confirmed. The check needs the task's expected strings (the first
    event) and the answer (the newest `session_finished`): those two are folded, not the whole log."""
    from planner.errors import PlannerError
    from planner.events import Cause, Event
    from planner.state import SessionState, apply

    rows = conn.execute(
        sa.select(_sessions.c.id).where(_sessions.c.status == "succeeded", _sessions.c.cause == Cause.FINISHED.value)
    ).scalars()
    columns = (_events.c.seq, _events.c.kind, _events.c.node_id, _events.c.data, _events.c.version)
    for session_id in list(rows):
        first = conn.execute(sa.select(*columns).where(_events.c.session_id == session_id, _events.c.seq == 1)).first()
        last = conn.execute(
            sa.select(*columns)
            .where(_events.c.session_id == session_id, _events.c.kind == "session_finished")
            .order_by(_events.c.seq.desc())
            .limit(1)
        ).first()
        if first is None or last is None or last.seq == 1:
            continue
        state = SessionState()
        try:
            apply(state, Event.from_json(first.seq, first.kind, first.node_id, first.data, first.version))
            state.seq = last.seq - 1
            apply(state, Event.from_json(last.seq, last.kind, last.node_id, last.data, last.version))
        except PlannerError:
            continue  # a log this version cannot read keeps its row as it was
        if state.cause is Cause.ANSWER_CHECKED:
            conn.execute(_sessions.update().where(_sessions.c.id == session_id).values(cause=state.cause.value))


_MIGRATIONS: list[Callable[[Connection], None]] = [
    _create_v1,
    _lease_and_unique_order_v2,
    _last_order_v3,
    _cause_v4,
    _templates_v5,
    _fleet_v6,
    _lease_seconds_v7,
    _attention_marks_v8,
    _answer_checked_v9,
]
"""Ordered schema changes; entry i brings the schema to version i + 1. Only ever append."""


def database_url(target: str | os.PathLike[str]) -> str:
    """A SQLAlchemy URL from a URL or a file path (":memory:" for an in-memory database).

    Raises `StoreUnavailable` with one sentence for a target that cannot be a database: empty, a
    NUL byte, absurdly long, a directory, or a path below something that is not a directory.
    """
    text = os.fspath(target)
    if not text.strip():
        raise StoreUnavailable(
            f"the database path is empty; give a file path or a postgresql:// URL, or leave --db out for {DEFAULT_DATABASE}"
        )
    if "\x00" in text:
        raise StoreUnavailable("the database path contains a NUL byte; give a plain file path or URL")
    if len(text) > MAX_PATH_CHARS:
        raise StoreUnavailable(f"the database path is {len(text):,} characters long; the limit is {MAX_PATH_CHARS:,}")
    if "://" in text:
        return _driver_url(text)
    if text == ":memory:":
        return "sqlite://"
    path = Path(text).expanduser()
    _prepare_directory(path)
    return f"sqlite:///{path}"


def _prepare_directory(path: Path) -> None:
    """Create the database file's directory, or say in one sentence why it cannot exist."""
    try:
        if path.is_dir():
            raise StoreUnavailable(
                f"'{shown(str(path))}' is a directory; give a file in it, e.g. '{shown(str(path / 'sessions.db'))}'"
            )
        for ancestor in path.parents:
            if ancestor.exists():
                if not ancestor.is_dir():
                    raise StoreUnavailable(
                        f"cannot create the session database '{shown(str(path))}': "
                        f"'{shown(str(ancestor))}' is a file, not a directory"
                    )
                break
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreUnavailable(
            f"cannot create the session database '{shown(str(path))}': {error.strerror or error}"
        ) from None


def _driver_url(url: str) -> str:
    """PostgreSQL URLs use the psycopg 3 driver we ship (SQLAlchemy's default would be psycopg2)."""
    scheme, _, rest = url.partition("://")
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return url


def without_password(db: str) -> str:
    """A database URL as printed output may show it (the CLI's command lines, `make fleet`'s first
    line): its password left out, so the line still works where the password comes from PGPASSWORD
    or a password file, and shows nothing to whoever reads the terminal or a log it went to. A path,
    or a URL with no password, is shown as given."""
    if "://" not in db:
        return db
    try:
        url = sa.make_url(db)
    except ArgumentError:  # not a URL the store opened, so it holds no password it used
        return db
    if url.password is None:
        return db
    kept = sa.URL.create(url.drivername, url.username, None, url.host, url.port, url.database, url.query)
    return kept.render_as_string(hide_password=False)


def _safe_url(url: str) -> str:
    """The URL as a message may show it: no password, no huge echo."""
    try:
        text = sa.make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "the given database URL"
    return text if len(text) <= 80 else shown(text)


def _sentence(error: BaseException) -> str:
    """The first line of the database driver's own message: never SQLAlchemy's background link."""
    cause = getattr(error, "orig", None) or error
    lines = str(cause).strip().splitlines()
    return lines[0][:300] if lines else type(cause).__name__


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
    dbapi_connection.isolation_level = None  # pysqlite must not begin transactions itself: `_sqlite_begin` does


def _sqlite_begin(conn: Connection) -> None:
    """Writers take the write lock up front, so their reads cannot go stale before they write."""
    reading = conn.get_execution_options().get("andor_read", False)
    conn.connection.driver_connection.execute("BEGIN" if reading else "BEGIN IMMEDIATE")  # type: ignore[union-attr]


@functools.cache
def _event_reader() -> Callable[[int, str, str | None, str, int, float], Event]:
    """`Event.from_json`, the one reader of stored rows. The event models are imported on the first
    read, not with this module: `python -m sessions list` reads no event, and they are a third of
    its start-up."""
    from planner.events import Event

    return Event.from_json


class SqlStore(EventStore):
    """`EventStore` on any SQLAlchemy database."""

    def __init__(self, url: str) -> None:
        url = _driver_url(url)
        self.url = url
        self._serial: AbstractContextManager[Any] = nullcontext()
        self._listener: Any = None
        """The driver connection `wait_for_work` LISTENs on (PostgreSQL), opened on first use."""
        self._clock_offset: tuple[float, float] | None = None
        """`clock`'s (monotonic time read, database clock minus this machine's), PostgreSQL only."""
        try:
            if url.startswith("sqlite"):
                kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False}}
                if url in ("sqlite://", "sqlite:///:memory:"):
                    kwargs["poolclass"] = StaticPool
                    self._serial = threading.RLock()  # one shared connection: one transaction at a time
                self._engine: Engine = sa.create_engine(url, **kwargs)
                sa.event.listen(self._engine, "connect", _sqlite_connect)
                sa.event.listen(self._engine, "begin", _sqlite_begin)
            else:
                self._engine = sa.create_engine(
                    url,
                    pool_pre_ping=True,
                    pool_size=POOL_SIZE,
                    max_overflow=POOL_OVERFLOW,
                    connect_args={"application_name": f"andor:{os.getpid()}"},  # who is who in pg_stat_activity
                )
            self._migrate()
            dialect = self._engine.dialect
            self._database_clock = dialect.name == "postgresql"
            """Leases are written and judged by the database's clock (`_DATABASE_NOW`): runners of one
            PostgreSQL database may be on many machines, whose clocks may disagree. SQLite's are on one."""
            clock = self._database_clock
            self._advance = {fenced: _Direct(_ADVANCE[fenced, clock], dialect) for fenced in (False, True)}
            self._insert_events = _Direct(_INSERT_EVENTS, dialect)
            self._driver = dialect.loaded_dbapi  # its errors, raised by the statements `_Direct` runs
            self._notifies = dialect.name == "postgresql"
        except NoSuchModuleError:
            raise StoreUnavailable(
                f"unsupported database URL {_safe_url(url)}; give a file path, sqlite:///PATH or postgresql://USER@HOST/DB"
            ) from None
        except ImportError as error:
            raise StoreUnavailable(
                f"the database driver for {_safe_url(url)} is not installed ({error}); pip install 'psycopg[binary]'"
            ) from None
        except ArgumentError:
            raise StoreUnavailable(
                f"{_safe_url(url)} is not a database URL; give a file path or a postgresql:// URL"
            ) from None
        except SQLAlchemyError as error:
            raise StoreUnavailable(f"cannot open the session database {_safe_url(url)}: {_sentence(error)}") from None

    @contextmanager
    def _tx(self, *, write: bool = True) -> Iterator[Connection]:
        """One transaction; database errors leave as the store's own exceptions, here only."""
        driver = self._driver
        try:
            with self._serial, self._engine.connect() as conn:
                if not write:
                    conn.execution_options(andor_read=True)
                with conn.begin():
                    yield conn
        except (IntegrityError, driver.IntegrityError) as error:
            raise SeqConflict(f"a concurrent writer got there first: {_sentence(error)}") from error
        except (OperationalError, driver.OperationalError) as error:
            raise StoreUnavailable(f"session database error: {_sentence(error)}") from error
        except (SQLAlchemyError, driver.Error) as error:
            raise StoreError(f"session database error: {_sentence(error)}") from error

    def _migrate(self) -> None:
        """Apply missing migrations; a process that loses the race to another simply re-checks."""
        for attempt in range(5):
            try:
                with self._engine.begin() as conn:
                    if conn.dialect.name == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(7262110)"))  # one migrator at a time
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
                "data": e.payload.model_dump_json(),
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
        cause: str | None = None,
        cost_usd: float | None = None,
    ) -> None:
        now = time.time()
        with self._tx() as conn:
            if conn.execute(sa.select(_sessions.c.id).where(_sessions.c.id == session_id)).first() is not None:
                raise SeqConflict(
                    f"a session '{shown(session_id)}' already exists; choose another id or resume that one"
                )
            conn.execute(
                _sessions.insert().values(
                    id=session_id,
                    task=task,
                    model=model,
                    status=status,
                    cause=cause,
                    reason=reason,
                    steps=steps,
                    last_seq=events[-1].seq if events else 0,
                    created_at=now,
                    updated_at=now,
                    parent_id=parent_id,
                    forked_at=forked_at,
                    cost_usd=cost_usd,
                    status_since=now,
                )
            )
            if events:
                conn.execute(_events.insert(), self._rows(session_id, events))
            if status == _running():
                _notify(conn, session_id)
            _changed(conn, session_id)

    def append(
        self,
        session_id: str,
        events: Sequence[Event],
        *,
        status: str,
        reason: str | None,
        steps: int,
        handled: Sequence[str] = (),
        lease: int | None = None,
        beat: float | None = None,
        cause: str | None = None,
        cost_usd: float | None = None,
        task: str | None = None,
    ) -> int | None:
        if not events:
            return None
        after = events[0].seq - 1
        row = {
            "s_id": session_id,
            "s_after": after,
            "s_lease": lease,
            "s_status": status,
            "s_cause": cause,
            "s_reason": reason,
            "s_steps": steps,
            "s_last": events[-1].seq,
            "s_now": time.time(),
            "s_beat": beat,
            "s_cost": cost_usd,
            "s_task": task,
        }
        with self._tx() as conn:
            # The session row first: it checks sequence and lease together and (on PostgreSQL) locks the
            # row, so a concurrent enqueue sees either the whole batch or none of it.
            cursor = conn.connection.cursor()
            try:
                advance, insert = self._advance[lease is not None], self._insert_events
                cursor.execute(advance.sql, advance.bind(row))
                advanced = cursor.fetchone()
                if advanced is None:
                    raise self._refusal(conn, session_id, after, lease)
                cursor.executemany(insert.sql, insert.bind_many(self._rows(session_id, events)))
                if self._notifies:  # on the driver's cursor, like the writes above: one statement more per append
                    cursor.execute(_CHANGED_SQL, (session_id,))
            finally:
                cursor.close()
            last_order = advanced[0]
            if handled:
                conn.execute(
                    _commands.update()
                    .where(_commands.c.session_id == session_id, _commands.c.id.in_(list(handled)))
                    .values(handled=True)
                )
        return int(last_order)

    @staticmethod
    def _refusal(conn: Connection, session_id: str, after: int, lease: int | None) -> StoreError:
        """Why an append matched no row: no session, a lease that moved on, or a stale sequence number."""
        row = conn.execute(
            sa.select(_sessions.c.lease_gen, _sessions.c.lease_owner).where(_sessions.c.id == session_id)
        ).first()
        if row is None:
            return _not_found(session_id)
        if lease is not None and (row.lease_gen != lease or row.lease_owner is None):
            return _lease_lost(session_id, lease, row.lease_gen)
        return SeqConflict(f"session {session_id} moved on past event {after}")

    def enqueue(self, session_id: str, command_id: str, payload: dict[str, Any]) -> None:
        with self._tx() as conn:
            row = conn.execute(
                sa.select(_sessions.c.status, _sessions.c.last_seq)
                .where(_sessions.c.id == session_id)
                .with_for_update()
            ).first()
            if row is None:
                raise _not_found(session_id)
            if row.status in _ended():
                raise SessionFinished(
                    f"session {session_id} has ended ({row.status}); commands cannot change it — fork it to continue: "
                    f"python -m sessions fork {session_id} --at {row.last_seq}"
                )
            queued = conn.execute(sa.select(_commands.c.session_id).where(_commands.c.id == command_id)).first()
            if queued is not None:
                if queued.session_id == session_id:
                    return  # the same command queued twice is one command (commands are idempotent by id)
                raise SeqConflict(f"command id '{shown(command_id)}' is already used by another session; use a new id")
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
            conn.execute(_sessions.update().where(_sessions.c.id == session_id).values(last_order=order + 1))
            _notify(conn, session_id)
            _changed(conn, session_id)

    # -- reading ----------------------------------------------------------------------------------

    def load(self, session_id: str, *, after: int = 0, upto: int | None = None) -> list[Event]:
        query = sa.select(
            _events.c.seq, _events.c.kind, _events.c.version, _events.c.node_id, _events.c.data, _events.c.at
        ).where(_events.c.session_id == session_id, _events.c.seq > _clamp(after))
        if upto is not None:
            query = query.where(_events.c.seq <= _clamp(upto))
        with self._tx(write=False) as conn:
            rows = conn.execute(query.order_by(_events.c.seq)).all()
        if not rows and after == 0:
            self.session(session_id)
        read = _event_reader()
        return [read(seq, kind, node_id, data, version, at) for seq, kind, version, node_id, data, at in rows]

    def session(self, session_id: str) -> SessionInfo:
        with self._tx(write=False) as conn:
            row = conn.execute(sa.select(_sessions).where(_sessions.c.id == session_id)).mappings().first()
        if row is None:
            raise _not_found(session_id)
        return SessionInfo(**row)

    def sessions(self) -> list[SessionInfo]:
        with self._tx(write=False) as conn:
            rows = conn.execute(sa.select(_sessions).order_by(_sessions.c.created_at.desc())).mappings().all()
        return [SessionInfo(**row) for row in rows]

    def recent_actions(self, since: float) -> dict[str, int]:
        query = (
            sa.select(_events.c.session_id, sa.func.count())
            .where(sa.text(f"kind = '{_ACTION_KIND}'"), _events.c.at >= since)  # literal: the partial index's
            .group_by(_events.c.session_id)
        )
        with self._tx(write=False) as conn:
            return {session_id: count for session_id, count in conn.execute(query).all()}

    def listener(self) -> Any | None:
        """A new driver connection LISTENing on `CHANGED_CHANNEL` (its `notifies()` yields the ids of
        sessions that changed), in autocommit and outside the pool, for `sessions.store.feed`; None where
        the database sends no notifications (SQLite). The caller closes it."""
        if not self._notifies:
            return None
        pooled = self._engine.raw_connection()
        connection = pooled.driver_connection
        assert connection is not None, "a connection just checked out has its driver's"
        pooled.detach()
        connection.autocommit = True
        connection.execute(f"LISTEN {CHANGED_CHANNEL}")
        return connection

    def pending(self, session_id: str) -> list[QueuedCommand]:
        query = (
            sa.select(_commands.c.id, _commands.c.payload, _commands.c.queued_at, _commands.c.order_no)
            .where(_commands.c.session_id == session_id, _commands.c.handled.is_(False))
            .order_by(_commands.c.order_no)
        )
        with self._tx(write=False) as conn:
            rows = conn.execute(query).all()
        return [_queued(row.id, row.payload, row.queued_at, row.order_no) for row in rows]

    # -- runner lease -----------------------------------------------------------------------------

    def clock(self) -> float:
        """On PostgreSQL, this machine's time plus the database's lead over it, read once a minute: a view
        judges the leases it draws without a query each time, and in a minute two clocks drift apart by
        a millisecond or so."""
        if not self._database_clock:
            return time.time()
        known = self._clock_offset
        if known is None or time.monotonic() - known[0] > _CLOCK_RECHECK_S:
            with self._tx(write=False) as conn:
                before = time.time()
                database = float(conn.execute(sa.select(_DATABASE_NOW)).scalar_one())
                known = self._clock_offset = (time.monotonic(), database - (before + time.time()) / 2)
        return time.time() + known[1]

    def _lease_time(self, conn: Connection, now: float) -> float:
        """The time a lease is judged at in this transaction: the database's on PostgreSQL, the caller's
        `now` on SQLite."""
        if not self._database_clock:
            return now
        return float(conn.execute(sa.select(_DATABASE_NOW)).scalar_one())

    def claim(
        self,
        session_id: str,
        owner: str,
        now: float,
        stale_after: float,
        *,
        gone: Callable[[str], bool] = lambda owner: False,
        pid: int | None = None,
    ) -> int | None:
        with self._tx() as conn:
            row = conn.execute(
                sa.select(
                    _sessions.c.lease_owner,
                    _sessions.c.lease_gen,
                    _sessions.c.runner_pid,
                    _sessions.c.heartbeat_at,
                    _sessions.c.lease_seconds,
                )
                .where(_sessions.c.id == session_id)
                .with_for_update()
            ).first()
            if row is None:
                raise _not_found(session_id)
            now = self._lease_time(conn, now)  # read with the row locked: no heartbeat can land after it
            held = (row.lease_owner is not None or row.runner_pid is not None) and lease_live(
                row.heartbeat_at, row.lease_seconds, now, stale_after
            )
            if held and not (row.lease_owner is not None and gone(row.lease_owner)):
                return None
            taken = conn.execute(_take_lease(session_id, row.lease_gen, owner, pid, now, stale_after))
            if taken.rowcount == 1:
                _changed(conn, session_id)  # the console shows who holds the lease
        return row.lease_gen + 1 if taken.rowcount == 1 else None

    def heartbeat(self, session_id: str, lease: int, now: float) -> None:
        with self._tx() as conn:
            beat = conn.execute(
                _sessions.update()
                .where(
                    _sessions.c.id == session_id, _sessions.c.lease_gen == lease, _sessions.c.lease_owner.is_not(None)
                )
                .values(heartbeat_at=_DATABASE_NOW if self._database_clock else now)
            )
            if beat.rowcount != 1:
                row = conn.execute(sa.select(_sessions.c.lease_gen).where(_sessions.c.id == session_id)).first()
                raise _lease_lost(session_id, lease, row.lease_gen if row is not None else None)

    def release(self, session_id: str, lease: int) -> None:
        with self._tx() as conn:
            conn.execute(
                _sessions.update()
                .where(_sessions.c.id == session_id, _sessions.c.lease_gen == lease)
                .values(lease_owner=None, runner_pid=None, heartbeat_at=None, lease_seconds=None)
            )
            _notify(conn, session_id)
            _changed(conn, session_id)

    def claim_runnable(
        self, owner: str, now: float, stale_after: float, *, limit: int, pid: int | None = None
    ) -> list[tuple[str, int]]:
        if limit < 1:
            return []
        sessions = _sessions.c
        at = _DATABASE_NOW if self._database_clock else now  # as `claim` judges, in the same statement
        free = sa.or_(
            sa.and_(sessions.lease_owner.is_(None), sessions.runner_pid.is_(None)),
            sessions.heartbeat_at.is_(None),
            sessions.heartbeat_at < at - sa.func.coalesce(sessions.lease_seconds, stale_after),
        )  # the negation of `claim`'s "held"
        waiting = sa.exists().where(_commands.c.session_id == sessions.id, _commands.c.handled.is_(False))
        candidates = (
            sa.select(sessions.id, sessions.lease_gen)
            .where(sessions.status.not_in(_ended()), free, sa.or_(sessions.status == _running(), waiting))
            .order_by(sessions.updated_at, sessions.id)
            .limit(limit)
            .with_for_update(skip_locked=True, of=_sessions)  # SQLite has no row locks: its write lock serialises
        )
        taken: list[tuple[str, int]] = []
        with self._tx() as conn:
            for row in conn.execute(candidates).all():
                claimed = conn.execute(_take_lease(row.id, row.lease_gen, owner, pid, at, stale_after))
                if claimed.rowcount == 1:
                    taken.append((row.id, row.lease_gen + 1))
                    _changed(conn, row.id)
        return taken

    def wait_for_work(self, timeout: float) -> bool:
        if self._engine.dialect.name != "postgresql":
            time.sleep(timeout)
            return False
        try:
            listener = self._listen()
            woken = any(True for _ in listener.notifies(timeout=timeout, stop_after=1))
            for _ in listener.notifies(timeout=0):  # a burst of sessions wakes a worker once
                pass
        except (SQLAlchemyError, self._driver.Error) as error:
            self._stop_listening()
            raise StoreUnavailable(f"session database error while waiting for work: {_sentence(error)}") from error
        return woken

    def _listen(self) -> Any:
        """The driver connection this store LISTENs on: its own, in autocommit, outside the pool
        (a pooled connection would be handed to other work and its notifications lost)."""
        if self._listener is None:
            pooled = self._engine.raw_connection()
            listener = pooled.driver_connection
            assert listener is not None, "a connection just checked out has its driver's"
            pooled.detach()
            listener.autocommit = True
            listener.execute(f"LISTEN {_RUNNABLE_CHANNEL}")
            self._listener = listener
        return self._listener

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.close()
            except self._driver.Error:
                pass  # a connection that failed may fail to close too; it is dropped either way

    # -- plan templates ---------------------------------------------------------------------------

    def save_template(self, template: Template) -> Template:
        for _ in range(4):  # PostgreSQL: two saves of one name can race for the same version
            try:
                return self._save_template(template)
            except SeqConflict:
                continue
        return self._save_template(template)

    def _save_template(self, template: Template) -> Template:
        with self._tx() as conn:
            newest = conn.execute(
                sa.select(sa.func.coalesce(sa.func.max(_templates.c.version), 0)).where(
                    _templates.c.name == template.name
                )
            ).scalar_one()
            saved = template.model_copy(update={"version": newest + 1})
            conn.execute(
                _templates.insert().values(
                    name=saved.name,
                    version=saved.version,
                    description=saved.description,
                    data=saved.model_dump_json(),
                    created_at=time.time(),
                )
            )
        return saved

    def templates(self, name: str | None = None) -> list[Template]:
        query = sa.select(_templates.c.name, _templates.c.version, _templates.c.data)
        if name is not None:
            query = query.where(_templates.c.name == name)
        with self._tx(write=False) as conn:
            rows = conn.execute(query.order_by(_templates.c.name, _templates.c.version)).all()
        return [_template(row.name, row.version, row.data) for row in rows]

    def template(self, name: str, version: int | None = None) -> Template | None:
        query = sa.select(_templates.c.name, _templates.c.version, _templates.c.data).where(_templates.c.name == name)
        if version is not None:
            query = query.where(_templates.c.version == _clamp(version))
        with self._tx(write=False) as conn:
            row = conn.execute(query.order_by(_templates.c.version.desc()).limit(1)).first()
        return None if row is None else _template(row.name, row.version, row.data)

    def delete_templates(self, name: str, version: int | None = None) -> int:
        statement = _templates.delete().where(_templates.c.name == name)
        if version is not None:
            statement = statement.where(_templates.c.version == _clamp(version))
        with self._tx() as conn:
            return conn.execute(statement).rowcount

    # -- the attention inbox's marks --------------------------------------------------------------

    def mark_attention(self, operator: str, key: str, mark: str, now: float) -> None:
        where = (_attention_marks.c.operator == operator, _attention_marks.c.item == key)
        with self._tx() as conn:  # delete-then-insert: one statement both databases speak
            conn.execute(_attention_marks.delete().where(*where))
            conn.execute(_attention_marks.insert().values(operator=operator, item=key, mark=mark, marked_at=now))

    def attention_marks(self, operator: str, keys: Collection[str]) -> dict[str, str]:
        if not keys:
            return {}
        query = sa.select(_attention_marks.c.item, _attention_marks.c.mark).where(
            _attention_marks.c.operator == operator, _attention_marks.c.item.in_(list(keys))
        )
        with self._tx(write=False) as conn:
            return {row.item: row.mark for row in conn.execute(query)}

    # -- deleting a session -----------------------------------------------------------------------

    def delete_session(self, session_id: str, *, now: float | None = None, stale_after: float = STALE_AFTER) -> None:
        sessions = _sessions.c
        with self._tx() as conn:
            row = conn.execute(
                sa.select(sessions.lease_owner, sessions.runner_pid, sessions.heartbeat_at, sessions.lease_seconds)
                .where(sessions.id == session_id)
                .with_for_update()
            ).first()
            if row is None:
                raise _not_found(session_id)
            now = self._lease_time(conn, time.time() if now is None else now)  # the clock `claim` judges by
            if (row.lease_owner is not None or row.runner_pid is not None) and lease_live(
                row.heartbeat_at, row.lease_seconds, now, stale_after
            ):  # `claim`'s "held"
                raise SessionInUse(
                    f"session {session_id} is held by a live runner; stop it first "
                    f"(python -m sessions command {session_id} stop) and delete it once its runner has let go"
                )
            forks = list(
                conn.execute(
                    sa.select(sessions.id).where(sessions.parent_id == session_id).order_by(sessions.created_at)
                ).scalars()
            )
            if forks:
                one = len(forks) == 1
                raise SessionInUse(
                    f"session {session_id} cannot be deleted while its {_forks(forks)} "
                    f"{'exists (its log shows' if one else 'exist (their logs show'} this session's screenshots); "
                    f"delete {'it' if one else 'them'} first: python -m sessions delete {forks[0]}"
                )
            conn.execute(_events.delete().where(_events.c.session_id == session_id))
            conn.execute(_commands.delete().where(_commands.c.session_id == session_id))
            marks = _attention_marks.c.item.startswith(f"{session_id}:", autoescape=True)  # `Attention.key`
            conn.execute(_attention_marks.delete().where(marks))
            conn.execute(_sessions.delete().where(sessions.id == session_id))
            _changed(conn, session_id)

    def close(self) -> None:
        self._stop_listening()
        self._engine.dispose()


def _ended() -> frozenset[str]:
    """The statuses no command can change. Imported here, not at the top: reading the store (the CLI's
    `list`) must not load the planner's state and tree models."""
    from planner.state import TERMINAL

    return frozenset(status.value for status in TERMINAL)


def _running() -> str:
    from planner.state import RunStatus

    return RunStatus.RUNNING.value


def _notify(conn: Connection, session_id: str) -> None:
    """Tell listening workers (on commit) that this session may need a runner; PostgreSQL only."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_notify(_RUNNABLE_CHANNEL, session_id)))


_CHANGED_SQL = f"SELECT pg_notify('{CHANGED_CHANNEL}', %s)"
"""`_changed` on the driver's own cursor (psycopg's placeholder), for the append's hot path."""


def _changed(conn: Connection, session_id: str) -> None:
    """Tell listening readers (on commit) that something about this session changed; PostgreSQL only."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_notify(CHANGED_CHANNEL, session_id)))


def _clamp(seq: int) -> int:
    """A sequence bound the database can compare with (`--at 10**30` means "all events")."""
    return max(-1, min(seq, _SEQ_LIMIT))


def _queued(command_id: str, text: str, queued_at: float, order: int) -> QueuedCommand:
    try:
        payload = json.loads(text)
    except ValueError:
        return QueuedCommand(command_id, {}, queued_at, problem="its stored text is not valid JSON", order=order)
    if not isinstance(payload, dict):
        return QueuedCommand(command_id, {}, queued_at, problem="its stored text is not a JSON object", order=order)
    return QueuedCommand(command_id, payload, queued_at, order=order)


def _template(name: str, version: int, data: str) -> Template:
    """A stored template row as the model; a row no version of the model can read is a store error."""
    from pydantic import ValidationError

    from planner.inputs import describe_validation_error
    from planner.templates import Template

    try:
        return Template.model_validate_json(data).model_copy(update={"version": version})
    except ValidationError as error:
        raise StoreError(
            f"stored template {shown(name)} v{version} cannot be read ({describe_validation_error(error)}); "
            f"delete it: python -m sessions template delete {shown(name)}@{version}"
        ) from None


def _not_found(session_id: str) -> SessionNotFound:
    return SessionNotFound(f"no session '{shown(session_id)}'; `python -m sessions list` shows the sessions")


def _forks(ids: Sequence[str]) -> str:
    """What a refusal names: "fork A", "forks A, B and C", "forks A, B, C and 2 more"."""
    if len(ids) == 1:
        return f"fork {ids[0]}"
    named = list(ids[:3]) if len(ids) <= 3 else [*ids[:3], f"{len(ids) - 3} more"]
    return f"forks {', '.join(named[:-1])} and {named[-1]}"


def _lease_lost(session_id: str, lease: int, now_gen: int | None) -> LeaseLost:
    return LeaseLost(
        f"session {session_id} was taken over by another runner (lease {lease}, now {now_gen}); "
        "this runner stopped without changing the session"
    )


def open_store(target: str | os.PathLike[str] | None = None) -> SqlStore:
    """Open the store at a path or URL; default `$ANDOR_DB` or ./var/sessions.db (see `database_target`)."""
    return SqlStore(database_url(database_target(target)))
