"""Bad input to the store and the session functions gets one sentence an operator understands: no
traceback, no second SQLAlchemy line, never a huge input echoed back."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import cli

from planner.browser.dry import DRY_START
from sessions.client.creation import create_session, fork_session
from sessions.errors import SessionInputError
from sessions.store import StoreUnavailable
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore, database_url, open_store


def _one_sentence(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and "sqlalche.me" not in text and "Background on this error" not in text, text
    assert len(text) < 400, f"{len(text)} characters: {text[:200]}"
    return text


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("", "the database path is empty"),
        ("   ", "the database path is empty"),
        ("var/x\x00.db", "contains a NUL byte"),
        ("a" * 100_000, "100,000 characters long; the limit is 4,096"),
        ("mysqlx://h/db", "unsupported database URL"),
    ],
)
def test_unusable_database_targets(target: str, says: str) -> None:
    with pytest.raises(StoreUnavailable) as raised:
        open_store(target)
    assert says in _one_sentence(raised.value)


def test_an_empty_db_is_an_error_not_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANDOR_DB", str(tmp_path / "default.db"))
    with pytest.raises(StoreUnavailable, match="empty"):
        open_store("")
    assert not (tmp_path / "default.db").exists()


def test_a_path_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "FILE").write_text("not a directory")
    with pytest.raises(StoreUnavailable) as raised:
        database_url(tmp_path / "FILE" / "x.db")
    assert "FILE' is a file, not a directory" in _one_sentence(raised.value)


def test_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as raised:
        database_url(tmp_path)
    assert "is a directory; give a file in it" in _one_sentence(raised.value)


def test_a_name_too_long_for_the_file_system(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as raised:
        database_url(tmp_path / ("n" * 300) / "x.db")
    assert "cannot create the session database" in _one_sentence(raised.value)


def test_postgres_urls_use_the_shipped_driver() -> None:
    assert database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"


def test_an_unreachable_server_is_one_sentence_without_the_password() -> None:
    with pytest.raises(StoreUnavailable) as raised:
        SqlStore("postgresql://andor:s3cret@127.0.0.1:1/sessions")
    text = _one_sentence(raised.value)
    assert text.startswith("cannot open the session database postgresql+psycopg://andor:***@127.0.0.1:1/sessions: ")
    assert "s3cret" not in text


@pytest.mark.parametrize("session_id", ["x" * 100_000, "", "a/b", "a b", "é", "x" * 65])
def test_session_ids(session_id: str) -> None:
    store = SqlStore("sqlite://")
    with pytest.raises(SessionInputError) as raised:
        create_session(store, "task", "demo", start_url=DRY_START, session_id=session_id)
    assert "give 1 to 64 letters, digits, '.', '_' or '-'" in _one_sentence(raised.value)
    assert store.sessions() == []


@pytest.mark.parametrize("at", [10**30, -(10**30), -1, 0, 3, True])
def test_fork_and_time_travel_points_outside_the_log(at: int) -> None:
    store = SqlStore("sqlite://")
    create_session(store, "task", "demo", start_url=DRY_START, session_id="s")
    store.append("s", [], status="running", reason=None, steps=0)
    last = store.session("s").last_seq
    assert last == 1
    for call in (lambda: fork_session(store, "s", at), lambda: load_state(store, "s", upto=at)):
        with pytest.raises(SessionInputError) as raised:
            call()
        assert f"session s has events 1 to {last}; choose one of them, not " in _one_sentence(raised.value)
    assert [info.id for info in store.sessions()] == ["s"]
    assert fork_session(store, "s", 1) != "s"


def test_the_cli_answers_bad_input_with_exit_2_and_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    create_session(store, "task", "demo", start_url=DRY_START, session_id="s")
    store.close()
    for args in (
        ("fork", "s", "--db", db, "--at", str(10**30)),
        ("fork", "s", "--db", db, "--at", "0"),
        ("list", "--db", ""),
        ("resume", "x" * 100_000, "--db", db),
    ):
        result = cli(*args, check=False)
        assert result.returncode == 2, (args[0], result.stderr[-500:])
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) < 300, result.stderr[-500:]
