"""Secrets through sessions: declared on the command line (or by $ANDOR_SECRET_NAME), typed by the
environment, and absent from everything a person or a file gets: `show`, `export`, `list`, the run's
JSON, every report format; bad input (a missing value, bytes that are not UTF-8) refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import cli, last_json
from conftest import BROWNIE_TASK

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.events import Kind
from planner.guard import GuardRules, make_guard
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ElementInfo
from planner.secrets import MASK
from planner.state import replay
from sessions.backends import Backend, build_backend
from sessions.client.commands import queue_command
from sessions.client.creation import create_session, fork_session
from sessions.client.history import TimeTravel
from sessions.client.report import FORMATS, write_report
from sessions.errors import SessionInputError
from sessions.store.reading import load_events, load_state
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner

PASSWORD = "demo-pass-123"
DECLARED_TASK = "Sign in with the password {{PASSWORD}} and tell me the greeting"
FOUND_TASK = f"Sign in with the password {PASSWORD} and tell me the greeting"


def _script(task: str, typed: str) -> dict[str, object]:
    return {
        "nodes": {
            task: {"type": "AND", "children": ["type the password", "read the greeting"]},
            "type the password": {"type": "ACTION", "action": f"type [3] [{typed}] [1]"},
            "read the greeting": {"type": "ACTION", "action": f"note [Hello, your password is {typed}]"},
        },
        "final_answer": f"Hello ({typed})",
    }


def _formats(store: SqlStore, session_id: str, folder: Path) -> dict[str, bytes]:
    """Every report format of the session, as bytes."""
    written = {}
    for suffix in FORMATS:
        if suffix == ".svg" and shutil.which("dot") is None:
            continue
        written[suffix] = write_report(store, session_id, folder / f"report{suffix}").read_bytes()
    return written


def _never(value: str, *texts: str | bytes) -> None:
    for text in texts:
        held = text.count(value.encode() if isinstance(text, bytes) else value)
        assert held == 0, f"the secret appears {held} times in: {text[:300]!r}"


# -- declared ---------------------------------------------------------------------------------------


def test_a_declared_secret_never_leaves_the_log_the_browser_reads(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script(DECLARED_TASK, "{{PASSWORD}}")))
    db = str(tmp_path / "s.db")
    ran = cli(
        "run", "--task", DECLARED_TASK, "--secret", f"PASSWORD={PASSWORD}", "--model", f"script:{script}", "--db", db
    )
    summary = last_json(ran)
    assert summary["status"] == "succeeded" and summary["final_answer"] == "Hello ({{PASSWORD}})"
    session_id = summary["session_id"]
    shown = [
        ran.stdout,
        ran.stderr,
        cli("show", session_id, "--db", db).stdout,
        cli("export", session_id, "--db", db).stdout,
        cli("list", "--db", db).stdout,
        cli("run", "--help").stdout,
    ]
    _never(PASSWORD, *shown)
    store = SqlStore(database_url(db))
    try:
        _never(PASSWORD, *_formats(store, session_id, tmp_path).values())
        raw = store.load(session_id)
        assert [e.kind for e in raw if PASSWORD in e.payload.model_dump_json()] == [Kind.SESSION_CREATED]
        assert raw[0].payload.secrets == {"PASSWORD": PASSWORD}  # type: ignore[attr-defined]
        assert load_state(store, session_id).secrets.declared == {"PASSWORD": MASK}
        env = build_backend(replay(raw)).env  # the runner's backend: the environment types the value
        assert isinstance(env, DryEnvironment) and env.secrets.declared == {"PASSWORD": PASSWORD}
        fork = fork_session(store, session_id, 3)
        forked = build_backend(replay(store.load(fork))).env
        assert isinstance(forked, DryEnvironment) and forked.secrets.declared == {"PASSWORD": PASSWORD}
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT kind FROM events WHERE data LIKE ?", (f"%{PASSWORD}%",)).fetchall()
    assert rows == [("session_created",), ("session_created",)], "the parent's and the fork's first event only"


def test_the_environment_variable_gives_a_placeholder_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script(DECLARED_TASK, "{{PASSWORD}}")))
    db = str(tmp_path / "s.db")
    monkeypatch.setenv("ANDOR_SECRET_PASSWORD", PASSWORD)
    ran = cli("submit", "--task", DECLARED_TASK, "--model", f"script:{script}", "--db", db, "--paused")
    session_id = last_json(ran)["session_id"]
    store = SqlStore(database_url(db))
    try:
        assert store.load(session_id)[0].payload.secrets == {"PASSWORD": PASSWORD}  # type: ignore[attr-defined]
        assert store.session(session_id).task == DECLARED_TASK
    finally:
        store.close()


def test_a_bundled_task_brings_its_own_secret_to_the_command_line(tmp_path: Path) -> None:
    """The bundled checkout task writes {{ACCOUNT_PASSWORD}} and declares its value: typed on the command line
    as it stands, it needs no --secret (the session gets the bundled value)."""
    from demo.tasks import load_tasks

    task = next(t for t in load_tasks() if t.id == "checkout-french-press")
    db = str(tmp_path / "s.db")
    ran = cli("submit", "--task", task.task, "--start-url", "http://127.0.0.1:9/", "--db", db, "--paused")
    session_id = last_json(ran)["session_id"]
    store = SqlStore(database_url(db))
    try:
        assert store.load(session_id)[0].payload.secrets == task.secrets  # type: ignore[attr-defined]
    finally:
        store.close()


def _no_session(db: str) -> None:
    assert last_json(cli("list", "--db", db))["sessions"] == [], "nothing was written"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--task", DECLARED_TASK],
            (
                "error: the task writes {{PASSWORD}} but gives it no value; add --secret PASSWORD=VALUE or set "
                "$ANDOR_SECRET_PASSWORD"
            ),
        ),
        (
            ["--task", DECLARED_TASK, "--secret", "PASSWORD=abc"],
            (
                "error: the secret PASSWORD is shorter than 4 characters; masking it would hide ordinary text wherever "
                "it appears"
            ),
        ),
        (
            ["--task", DECLARED_TASK, "--secret", "PASS WORD=abcdefgh"],
            (
                "error: argument --secret: write a secret as NAME=VALUE, NAME being a letter or underscore, then letters, "
                "digits or underscores; see `python -m sessions run --help`"
            ),
        ),
        (
            ["--task", "caf\udce9 task"],
            "error: the value of --task is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`",
        ),
        (
            ["--task", DECLARED_TASK, "--secret", "PASSWORD=caf\udce9-value"],
            "error: the value of --secret is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`",
        ),
        (
            ["--task=caf\udce9", "--paused"],
            "error: the value of --task is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`",
        ),
        (
            ["--task", "t", "--model", "\udcff"],
            "error: the value of --model is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`",
        ),
        (
            ["--task", "t", "--paused", "caf\udce9"],
            "error: the argument 'caf\\udce9' is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line_and_writes_nothing(tmp_path: Path, args: list[str], said: str) -> None:
    db = str(tmp_path / "s.db")
    refused = cli("run", *args, "--db", db, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [said]
    assert "abcdefgh" not in refused.stderr and "-value" not in refused.stderr, "a secret's value is never echoed"
    if Path(db).exists():
        _no_session(db)


def test_bytes_that_are_not_utf8_are_refused_by_the_demo_command_line_too(tmp_path: Path) -> None:
    refused = cli("run", "caf\udce9", "--db", str(tmp_path / "s.db"), check=False, program="demo")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: the argument 'caf\\udce9' is not UTF-8 text; give it in UTF-8; see `python -m demo --help`"
    ]
    refused = cli("show", "s1", "--db", "\udce9.db", check=False)
    assert refused.stderr.splitlines() == [
        "error: the value of --db is not UTF-8 text; give it in UTF-8; see `python -m sessions --help`"
    ]
    assert not any("\udce9" in name for name in os.listdir(Path.cwd())), "no database was made under that name"


def test_create_session_refuses_a_placeholder_without_a_value_and_hides_a_spelt_out_one(tmp_path: Path) -> None:
    store = SqlStore(database_url(tmp_path / "s.db"))
    try:
        with pytest.raises(SessionInputError) as missing:
            create_session(store, DECLARED_TASK, "demo")
        assert str(missing.value) == (
            "the task writes {{PASSWORD}} but no secret PASSWORD is given; give its value or write the task without it"
        )
        assert store.sessions() == []
        session_id = create_session(store, FOUND_TASK, "demo", secrets={"PASSWORD": PASSWORD})
        assert store.session(session_id).task == DECLARED_TASK
        assert store.load(session_id)[0].payload.task == DECLARED_TASK  # type: ignore[attr-defined]
    finally:
        store.close()


# -- found ------------------------------------------------------------------------------------------


class _PasswordField(DryEnvironment):
    """The dry environment whose element 3 is a password field."""

    def target(self, action: str) -> ElementInfo | None:
        return ElementInfo(role="textbox", name="Password", input_type="password") if "[3]" in action else None


def _found_session(tmp_path: Path) -> tuple[SqlStore, str]:
    """A session whose task spells a password out, typed into a password field (guarded, approved)."""
    store = SqlStore(database_url(tmp_path / "s.db"))
    path = tmp_path / "script.json"
    path.write_text(json.dumps(_script(FOUND_TASK, PASSWORD)))
    config = EngineConfig(constraints=False)
    session_id = create_session(store, FOUND_TASK, f"script:{path}", config=config, start_url=DRY_START)
    script = Script.model_validate(_script(FOUND_TASK, PASSWORD))
    backend = Backend(ScriptedModel(script), _PasswordField(), make_guard(GuardRules(), DRY_START))
    runner = Runner(store, session_id, backend=backend)

    def approve(state: object) -> bool:
        if not store.pending(session_id):
            queue_command(store, session_id, {"kind": "approve"})
        return True

    state = runner.run(on_idle=approve, should_stop=lambda: runner.state.finished)
    assert state.finished, state.reason
    return store, session_id


def test_a_found_password_is_masked_in_every_format_the_listing_and_every_masked_read(tmp_path: Path) -> None:
    store, session_id = _found_session(tmp_path)
    try:
        raw = store.load(session_id)
        assert sum(PASSWORD in e.payload.model_dump_json() for e in raw) > 5, "the raw log keeps it, for resumes"
        assert [e.kind for e in raw].count(Kind.SECRET_FOUND) == 1
        formats = _formats(store, session_id, tmp_path)
        assert set(formats) >= {".html", ".json", ".md", ".dot", ".graphml"}
        for suffix, content in formats.items():
            assert content.count(PASSWORD.encode()) == 0, suffix
        info = store.session(session_id)
        assert info.task == f"Sign in with the password {MASK} and tell me the greeting"
        _never(PASSWORD, info.task, info.reason or "")
        _never(PASSWORD, *(e.payload.model_dump_json() for e in load_events(store, session_id)))
        for upto in (1, 4):  # before the password was found, time travel masks it too
            early = load_events(store, session_id, upto)
            _never(PASSWORD, *(e.payload.model_dump_json() for e in early))
            assert TimeTravel(store).at(session_id, upto).task == info.task
    finally:
        store.close()
    db = str(tmp_path / "s.db")
    _never(
        PASSWORD,
        cli("show", session_id, "--db", db).stdout,
        cli("show", session_id, "--at", "2", "--db", db).stdout,
        cli("export", session_id, "--db", db).stdout,
        cli("list", "--db", db).stdout,
    )


def test_without_secrets_reading_costs_nothing(tmp_path: Path) -> None:
    store = SqlStore(database_url(tmp_path / "s.db"))
    try:
        session_id = create_session(store, BROWNIE_TASK, "demo")
        raw = store.load(session_id)
        assert [a.payload for a in load_events(store, session_id)] == [b.payload for b in raw]
    finally:
        store.close()
