"""A PostgreSQL password reaches the server and nothing else: a worker and sessions on a role that must
log in with it (given in the URL, PGPASSWORD or a password file), then every row of the database,
every export and report, every artifact and every line the command line printed is searched for it;
`make fleet` on such a URL prints it nowhere and puts it on no child's command line (which `ps` shows
to every user); and the console on it shows it in no element of its page."""

from __future__ import annotations

import json
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_helpers import finish, spawn, start_fleet
from console_helpers import console_app
from postgres import password_database
from streamlit.testing.v1 import AppTest
from waiting import wait_until

from planner.browser.dry import DRY_START
from sessions.cli import main
from sessions.client.creation import create_session
from sessions.store.pgserver import MissingPostgres
from sessions.store.sql import SqlStore

pytestmark = pytest.mark.slow

TASK = "check two products"
SCRIPT = {
    "nodes": {
        TASK: {"type": "AND", "children": ["open 1", "note 1"]},
        "open 1": {"type": "ACTION", "action": "click [1]"},
        "note 1": {"type": "ACTION", "action": "note [product 1 checked]"},
    },
    "final_answer": "both checked",
}


def _with_password(url: str, password: str) -> str:
    return str(sa.make_url(url).set(password=password).render_as_string(hide_password=False))


@pytest.fixture
def protected(postgres_url: str) -> tuple[str, str]:
    """(password, the URL of a database whose role must log in with it, without the password)."""
    password = f"pw{uuid.uuid4().hex[:16]}"
    try:
        plain = password_database(postgres_url, password)
    except MissingPostgres as missing:
        pytest.skip(str(missing))
    return password, plain


def _everything_in(url: str) -> dict[str, str]:
    """Every row of every table of the database, as text, by table."""
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        tables = sa.MetaData()
        tables.reflect(engine)
        with engine.connect() as conn:
            return {
                f"table {name}": repr(conn.execute(sa.select(table)).all()) for name, table in tables.tables.items()
            }
    finally:
        engine.dispose()


def test_a_password_is_in_no_event_row_report_or_output(
    protected: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    password, plain = protected
    secret = _with_password(plain, password)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    seen: dict[str, str] = {}

    def cli(name: str, *args: str) -> int:
        code = main(list(args))
        out, err = capsys.readouterr()
        seen[f"output of {name}"] = out + err
        return code

    # The server checks the password: a wrong one is refused (and not echoed either).
    assert cli("a wrong password", "--db", _with_password(plain, "not" + password), "list") == 2
    assert "password authentication failed" in seen["output of a wrong password"]
    assert (
        cli(
            "a closed port",
            "--db",
            _with_password(plain, password).replace(f":{sa.make_url(plain).port}/", ":1/"),
            "list",
        )
        == 2
    )

    # Sessions made with the password in the URL, and through a password file.
    model = f"script:{script}"
    assert cli("submit", "--db", secret, "submit", "--task", TASK, "--model", model, "--id", "queued") == 0
    assert (
        cli(
            "run",
            "--db",
            secret,
            "run",
            "--task",
            TASK,
            "--model",
            model,
            "--id",
            "held",
            "--paused",
            "--exit-on-pause",
        )
        == 3
    )
    passfile = tmp_path / "pgpass"
    host = sa.make_url(plain)
    passfile.write_text(f"{host.host}:{host.port}:{host.database}:{host.username}:{password}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    assert (
        cli("submit (password file)", "--db", plain, "submit", "--task", TASK, "--model", model, "--id", "filed") == 0
    )
    monkeypatch.delenv("PGPASSFILE")

    # A worker with the password in PGPASSWORD runs them all.
    monkeypatch.setenv("PGPASSWORD", password)
    worker = spawn("worker", "--db", plain, "--artifacts", str(tmp_path / "artifacts"), "--lease-seconds", "4")
    monkeypatch.delenv("PGPASSWORD")
    store = SqlStore(secret)
    try:
        assert cli("command", "--db", secret, "command", "held", "resume", "--wait", "--timeout", "120") == 0
        wait_until(
            lambda: [s.status for s in store.sessions()] == ["succeeded"] * 3,
            "the worker to finish the three sessions",
            timeout=120,
        )
        assert cli("a missing session", "--db", secret, "command", "nosuch", "pause") == 2
        assert cli("list", "--db", secret, "list") == 0
        assert cli("export", "--db", secret, "export", "held") == 0
        assert cli("show", "--db", secret, "show", "held") == 0
        for ext in (".md", ".html", ".json"):
            out = tmp_path / f"report{ext}"
            assert cli(f"report {ext}", "--db", secret, "report", "held", "--out", str(out)) == 0
            seen[f"report {ext}"] = out.read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = finish(worker, "the worker to stop on SIGTERM")
        store.close()
    seen["the worker's output"] = out + err
    assert worker.returncode == 0, err[-1000:]
    seen.update(_everything_in(secret))
    for path in (tmp_path / "artifacts").rglob("*"):
        if path.is_file():
            seen[f"artifact {path.name}"] = path.read_bytes().decode(errors="replace")

    assert "table events" in seen and "table commands" in seen and "table sessions" in seen, sorted(seen)
    leaks = {where: text for where, text in seen.items() if password in text}
    assert not leaks, {where: text[:300] for where, text in leaks.items()}


# -- make fleet ----------------------------------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (its children, theirs, ...), as /proc lists them now."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        for child in children:
            found += [child, *_descendants(child)]
    return found


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:  # it ended meanwhile
        return ""


def test_the_fleet_prints_no_password_and_gives_it_to_no_childs_command_line(
    protected: tuple[str, str], tmp_path: Path
) -> None:
    """`make fleet --db URL` with the password in the URL: its own command line is the user's, but what
    it prints, its children's command lines (world-readable in /proc) and their logs hold no password,
    and the workers still reach the database (they finish a session)."""
    password, plain = protected
    secret = _with_password(plain, password)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    fleet, lines, reader = start_fleet("--db", secret, "--workers", "2")
    store = SqlStore(secret)
    seen: dict[str, str] = {}
    try:
        wait_until(
            lambda: fleet.poll() is not None or any("Ctrl-C stops them all" in line for line in lines),
            "the fleet to say it is up",
            timeout=120,
        )
        assert fleet.poll() is None, f"the fleet exited while starting: {lines}"
        children = _descendants(fleet.pid)
        assert len(children) >= 4, f"two workers, the demo shop and the console: {children}"
        seen.update({f"the command line of process {pid}": _command_line(pid) for pid in children})
        session_id = create_session(store, TASK, f"script:{script}", start_url=DRY_START)
        wait_until(
            lambda: store.session(session_id).status == "succeeded", "a fleet worker to finish the session", timeout=120
        )
        root = Path(next(m[1] for line in lines if (m := re.search(r"temporary files in (\S+)\)", line))))
        for log in root.glob("*.log"):
            seen[f"log {log.name}"] = log.read_text(errors="replace")
        fleet.send_signal(signal.SIGINT)
        assert fleet.wait(timeout=90) == 0, f"the fleet stops cleanly: {lines}"
    finally:
        if fleet.poll() is None:
            fleet.kill()
            fleet.wait()
        store.close()
    reader.join(timeout=10)
    seen["what the fleet printed"] = "".join(lines)
    assert "fleet: database postgresql://" in seen["what the fleet printed"], lines
    assert any(name.startswith("log worker") for name in seen), sorted(seen)
    leaks = {where: text for where, text in seen.items() if password in text}
    assert not leaks, {where: text[:300] for where, text in leaks.items()}


# -- the console ---------------------------------------------------------------------------------------------


def _page_text(at: AppTest) -> str:
    """Everything the page sent the browser: every element's message, text, labels, help and data alike."""
    texts: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            texts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(texts)


@pytest.fixture
def console_on(monkeypatch: pytest.MonkeyPatch, on_loopback: None) -> Iterator[None]:
    """The console's process-wide resources made anew for an AppTest on `$ANDOR_DB` (set by the test),
    as a client of workers (no runner of its own) and with no demo shop."""
    import streamlit as st

    monkeypatch.setenv("ANDOR_RUNNER", "workers")
    monkeypatch.setenv("ANDOR_SHOP", "0")
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_the_console_shows_the_password_nowhere(
    protected: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_on: None
) -> None:
    """On a database URL with the password, every page element (the listing, the session, its
    reasons) is searched for it; then on a wrong password, the page that says so."""
    password, plain = protected
    secret = _with_password(plain, password)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    store = SqlStore(secret)
    try:
        session_id = create_session(store, TASK, f"script:{script}", start_url=DRY_START, paused=True)
    finally:
        store.close()
    monkeypatch.setenv("ANDOR_DB", secret)
    at = console_app(session_id, timeout=60)
    at.run()
    assert not at.exception, at.exception
    page = _page_text(at)
    assert TASK in page and session_id in page, "the page shows the session"
    assert password not in page

    import streamlit as st

    st.cache_resource.clear()
    monkeypatch.setenv("ANDOR_DB", _with_password(secret, "not" + password))
    refused = console_app(timeout=60)
    refused.run()
    shown = _page_text(refused) + "".join(str(e.value) for e in refused.exception)
    assert "password authentication failed" in shown, shown[:1000]
    assert password not in shown, shown[:1000]
