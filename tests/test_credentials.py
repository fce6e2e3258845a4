"""A PostgreSQL password reaches the server and nothing else: a worker and sessions on a role that must
log in with it (given in the URL, PGPASSWORD or a password file), then every row of the database,
every export and report, every artifact and every line the command line printed is searched for it."""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_helpers import finish, spawn, wait_until
from postgres import password_database

from sessions.cli import main
from sessions.pgserver import MissingPostgres
from sessions.sql import SqlStore

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
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    password = f"pw{uuid.uuid4().hex[:16]}"
    try:
        plain = password_database(postgres_url, password)
    except MissingPostgres as missing:
        pytest.skip(str(missing))
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
