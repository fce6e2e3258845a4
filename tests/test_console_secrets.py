"""The console never shows a secret (headless, streamlit.testing AppTest): not in the status line, the
approval box, the inspector, the tree's labels, the timeline, the inbox or the session listing; a
password found after the page first drew makes it fold the log again, masked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from console_helpers import console_app, node_picker
from streamlit.testing.v1 import AppTest
from test_console_app import show_tab
from test_secrets_sessions import FOUND_TASK, PASSWORD, _PasswordField, _script

from planner.config import EngineConfig
from planner.guard import GuardRules, make_guard
from planner.models.scripted import Script, ScriptedModel
from planner.secrets import MASK
from planner.state import RunStatus, SessionState
from sessions.backends import Backend
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from sessions.worker.runner import Runner
from ui.forms import not_text


@pytest.fixture
def db(app_db: str) -> str:
    return app_db


def page_text(at: AppTest) -> str:
    """Everything the page holds, as its elements' protos: texts, labels, values, options, tables and
    the tree chart's labels alike."""
    found: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.append(str(proto))
        if getattr(node, "type", None) in ("arrow_data_frame", "dataframe"):
            found.append(node.value.to_string())
        children = getattr(node, "children", None) or {}
        for child in children.values() if isinstance(children, dict) else children:
            walk(child)

    walk(at._tree)
    return "\n".join(found)


def _open(session_id: str) -> AppTest:
    at = console_app(session_id)
    at.run()
    assert not at.exception, at.exception
    return at


def _run(db: str, session_id: str, path: Path, stop: Any) -> SessionState:
    """Run the session here, on the dry environment whose element 3 is a password field, until `stop(state)`."""
    store = open_store(db)
    script = Script.model_validate(json.loads(path.read_text()))
    backend = Backend(ScriptedModel(script), _PasswordField(), make_guard(GuardRules(), "dry://start"))
    runner = Runner(store, session_id, backend=backend)
    return runner.run(should_stop=lambda: stop(runner.state), on_idle=lambda _: False)


def test_a_password_found_after_the_page_drew_is_masked_everywhere_it_shows(db: str, tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(_script(FOUND_TASK, PASSWORD)))
    store = open_store(db)
    config = EngineConfig(constraints=False)
    session_id = create_session(store, FOUND_TASK, f"script:{path}", start_url="dry://start", config=config)
    _run(db, session_id, path, lambda state: len(state.tree) > 1)  # the root expanded, nothing typed yet
    at = _open(session_id)
    assert PASSWORD in page_text(at), "not yet a secret: the task spells it out"

    queue_command(store, session_id, {"kind": "resume"})  # the first run left it paused
    held = _run(db, session_id, path, lambda state: False)  # to the approval of the password's typing
    assert held.status is RunStatus.AWAITING_APPROVAL and held.approval is not None
    assert PASSWORD in held.approval.action, "the runner's own state keeps the value, to type it"
    at.run()
    assert not at.exception, at.exception
    seen = {"status line, approval box, tree, inbox": page_text(at)}
    [action] = [field for field in at.text_input if field.label == "Action"]
    assert action.value == f"type [3] [{MASK}] [1]"
    node_picker(at).select("0.1")
    at.run()
    seen["the inspector of the action"] = page_text(at)
    show_tab(at, "Timeline")
    at.slider(key=f"timeline_{session_id}").set_value(2)
    at.run()
    seen["the timeline at event 2"] = page_text(at)
    show_tab(at, "All sessions")
    seen["the session listing"] = page_text(at)
    for where, text in seen.items():
        assert PASSWORD not in text, f"{where} shows the password"
    status = next(
        line for line in seen["status line, approval box, tree, inbox"].splitlines() if "awaiting approval**" in line
    )
    assert "type \\\\[3\\\\] \\\\[••••\\\\] \\\\[1\\\\] at 0.1 (password field)" in status, status
    assert load_state(store, session_id).task == FOUND_TASK.replace(PASSWORD, MASK)
    assert store.session(session_id).task == FOUND_TASK.replace(PASSWORD, MASK)


def test_the_new_session_form_takes_secrets_and_refuses_a_placeholder_without_one(db: str) -> None:
    at = console_app()
    at.run()
    task = "Sign in with {{PASSWORD}} and stop"
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_area(key="new_task_text").input(task)
    at.text_input(key="new_start_url").input("")
    at.text_input(key="new_model").input("demo")
    at.text_input(key="new_secret_name_0").input("PASSWRD")
    at.text_input(key="new_secret_value_0").input(PASSWORD)
    at.form_submit_button(key="start_session").click()
    at.run()
    [refusal] = [e.value for e in at.sidebar.error]
    assert refusal.startswith("Not started: the task writes") and "PASSWORD" in refusal, refusal
    assert at.text_input(key="new_secret_value_0").value == PASSWORD, "what was typed is kept"
    assert at.text_input(key="new_secret_value_0").proto.type == at.text_input(key="new_secret_value_0").proto.PASSWORD
    store = open_store(db)
    assert store.sessions() == []
    at.text_input(key="new_secret_name_0").input("PASSWORD")
    at.form_submit_button(key="start_session").click()
    at.run()
    assert not at.sidebar.error
    [info] = store.sessions()
    assert info.task == task and store.load(info.id)[0].payload.secrets == {"PASSWORD": PASSWORD}  # type: ignore[attr-defined]
    at.run()
    assert PASSWORD not in page_text(at).replace(f'value: "{PASSWORD}"', ""), "only the form's own field holds it"


def test_form_input_that_is_not_text_is_refused_in_one_sentence() -> None:
    """Text no UTF-8 can hold (a lone surrogate) cannot come through Streamlit's own widgets, whose
    protocol carries UTF-8 only (AppTest cannot even set one); the check guards what a form builds."""
    sentence = "A field holds characters that are not text (they cannot be stored as UTF-8); retype them."
    assert not_text({"kind": "note", "text": ["fine", {"caf\udce9": "x"}]}) == sentence
    assert not_text(["caf\udce9"]) == sentence
    assert not_text({"kind": "note", "text": "café", "n": 3}) is None
