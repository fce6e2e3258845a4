"""The console's views and forms, headless (streamlit.testing AppTest), on dry scripted sessions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from conftest import BROWNIE_TASK, SCRIPTS
from streamlit.testing.v1 import AppTest

from planner.config import Breakpoint, EngineConfig
from planner.tree import Status
from sessions.markdown import md
from sessions.reading import load_state
from sessions.runner import create_session, queue_command
from sessions.sql import open_store
from ui.forms import scope

APP = str(Path(__file__).resolve().parent.parent / "app.py")
BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    path = str(tmp_path / "console.db")
    monkeypatch.setenv("ANDOR_DB", path)
    monkeypatch.setenv("ANDOR_SHOP", "0")
    st.cache_resource.clear()
    yield path
    from ui.context import console

    console().pool.shutdown()
    st.cache_resource.clear()


def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    return at


def wait_for(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_empty_console_invites_a_first_session(db: str) -> None:
    at = app()
    assert "No sessions yet" in at.sidebar.info[0].value
    assert "Start a session from the sidebar" in markdown_text(at)


def test_start_form_creates_and_runs_a_session(db: str, tmp_path: Path) -> None:
    at = app()
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_area(key="new_task_text").input(BROWNIE_TASK)
    at.text_input(key="new_start_url").input("")
    at.text_input(key="new_model").input(BROWNIE)
    at.form_submit_button(key="start_session").click()
    at.run()
    assert not at.exception, at.exception
    store = open_store(db)
    [info] = store.sessions()
    wait_for(lambda: load_state(store, info.id).finished)
    at.run()
    assert "succeeded" in markdown_text(at)
    assert any("Fudgy vegan brownies (4.8 stars)" in t.value for t in at.text)


def test_start_form_reports_bad_input_without_losing_it(db: str) -> None:
    at = app()
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_area(key="new_task_text").input("   ")
    at.text_input(key="new_start_url").input("")
    at.form_submit_button(key="start_session").click()
    at.run()
    assert "Not started: the task is empty" in at.sidebar.error[0].value
    at.text_input(key="new_model").input("gpt-nothing")
    at.text_area(key="new_task_text").input("a real task")
    at.form_submit_button(key="start_session").click()
    at.run()
    assert "unknown model 'gpt-nothing'" in at.sidebar.error[0].value
    assert at.text_area(key="new_task_text").value == "a real task"
    assert open_store(db).sessions() == []


def test_controls_send_commands_and_show_the_result(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    assert "paused" in markdown_text(at)
    assert at.button(key="ctl_pause").disabled
    at.button(key="ctl_step").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).steps == 1)
    at.run()
    assert "paused after one step" in markdown_text(at)
    at.button(key="ctl_resume").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).finished)
    at.run()
    assert "succeeded" in markdown_text(at)
    [sessions] = [d.value for d in at.dataframe if "age" in d.value.columns]
    assert sessions["status"].tolist() == ["succeeded"], "the sessions table follows the run"


def test_inject_and_prune_forms_show_the_engines_answer(db: str) -> None:
    store = open_store(db)
    config = EngineConfig(breakpoints=frozenset({Breakpoint.AFTER_EXPANSION}))
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", config=config, paused=True)
    at = app()
    at.button(key="ctl_resume").click()
    at.run()
    wait_for(
        lambda: load_state(store, session_id).steps >= 1 and load_state(store, session_id).status.value == "paused"
    )
    at.run()
    at.selectbox(key="node").select("0.1")
    at.run()
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert at.error[0].value == "Write at least one sub-goal, one per line, before pressing Inject."
    keyed(at.text_area, "inject_goals").input("one alternative")
    keyed(at.radio, "inject_type").set_value("OR")
    keyed(at.text_input, "inject_scores").input("0.5, 0.7")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert at.error[0].value == md("Give one score per alternative (1), or none.")
    assert keyed(at.text_area, "inject_goals").value == "one alternative", "a refused form keeps its input"

    at.selectbox(key="node").select("0")
    at.run()
    assert not at.error, "0.1's refusal does not show under 0"
    keyed(at.text_area, "inject_goals").input("Check the reviews\nNote the rating")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert any("inject applied" in s.value for s in at.success)
    assert keyed(at.text_area, "inject_goals").value == "", "a successful inject clears its input"
    state = load_state(store, session_id)
    assert [state.tree[c].description for c in state.tree["0"].children][-2:] == [
        "Check the reviews",
        "Note the rating",
    ]

    at.selectbox(key="node").select("0.3")
    at.run()
    assert not at.success, "the inject's answer shows only under 0"
    at.form_submit_button(key="prune_submit").click()
    at.run()
    assert [e.value for e in at.error] == ["Give a reason for the prune: it is recorded with the node."]
    keyed(at.text_input, "prune_reason").input("typed for 0.3")
    at.selectbox(key="node").select("0.2")
    at.run()
    assert keyed(at.text_input, "prune_reason").value == "", "0.3's prune reason does not leak into 0.2's form"
    at.selectbox(key="node").select("0.3")
    at.run()
    keyed(at.text_input, "prune_reason").input("not needed")
    at.form_submit_button(key="prune_submit").click()
    at.run()
    assert load_state(store, session_id).tree["0.3"].reason == "operator: not needed"
    assert any("prune applied" in s.value for s in at.success)
    assert keyed(at.text_input, "prune_reason").value == ""


def keyed(widgets, name: str):  # type: ignore[no-untyped-def]
    """The one widget of a form whose key is `name` in the scope on screen (`ui.forms.Scope.key`)."""
    [widget] = [w for w in widgets if (w.key or "").startswith(f"{name}-")]
    return widget


def test_hostile_text_is_shown_as_text(db: str) -> None:
    store = open_store(db)
    create_session(
        store, "<img src=x onerror=alert(1)> [link](javascript:alert(2))", BROWNIE, start_url="dry://start", paused=True
    )
    at = app()
    rendered = markdown_text(at)
    import re

    assert not re.search(r"(?<!\\)<img", rendered), "an unescaped tag reached the page"
    assert not re.search(r"(?<!\\)\]\(javascript", rendered), "a live link reached the page"
    assert r"\<img src=x onerror=alert(1)\>" in rendered


def test_breakpoints_form_changes_a_running_session(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    keyed(at.multiselect, "bp_choice").select(Breakpoint.BEFORE_ACTION)
    at.form_submit_button(key="bp_submit").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).config.breakpoints == {Breakpoint.BEFORE_ACTION})
    at.button(key="ctl_resume").click()
    at.run()
    wait_for(lambda: "breakpoint: before 0.1" in (load_state(store, session_id).reason or ""))


def test_an_interrupted_session_can_be_resumed(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    at = app()
    assert "interrupted (no runner is active)" in markdown_text(at)
    at.button(key="ctl_resume").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).finished)


def test_status_line_says_what_the_agent_does() -> None:
    from conftest import load, new_state

    from planner.browser.dry import DryEnvironment
    from planner.commands import Pause, apply_command
    from planner.engine import Engine
    from planner.models.scripted import ScriptedModel
    from ui.status import status_line

    state, _ = new_state(BROWNIE_TASK, EngineConfig())
    engine = Engine(state, ScriptedModel(load("brownie.json")), DryEnvironment())
    assert status_line(state) == "reading the task's constraints"
    engine.step()
    assert status_line(state) == "expanding 0"
    engine.step()
    engine.step()
    assert status_line(state) == "executing type [12] [vegan chocolate brownie] [1] at 0.1"
    assert status_line(state, runner_alive=False).startswith("interrupted")
    apply_command(state, Pause())
    assert status_line(state) == "paused by operator"


def test_constraints_are_shown_and_set_from_the_edit_tab(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    assert any("Not extracted yet" in c.value for c in at.caption)
    [box] = [t for t in at.text_area if t.label.startswith("Task constraints")]
    box.input("vegan\n\n  rating 4 or more ")
    at.form_submit_button(key="constraints_submit").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).constraints == ["vegan", "rating 4 or more"])
    at.run()
    assert any(m.value == "- vegan" for m in at.markdown)
    [box] = [t for t in at.text_area if t.label.startswith("Task constraints")]
    assert box.value == "vegan\nrating 4 or more"


def test_the_inspector_says_when_an_action_was_planned_ahead(db: str) -> None:
    store = open_store(db)
    config = EngineConfig(breakpoints=frozenset({Breakpoint.BEFORE_ACTION}))
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", config=config, paused=True)
    at = app()
    for node_id in ("0.1", "0.2.1", "0.3"):
        at.button(key="ctl_resume").click()
        at.run()
        wait_for(lambda: f"before {node_id} " in (load_state(store, session_id).reason or ""))  # noqa: B023
        at.run()
    at.selectbox(key="node").select("0.3")
    at.run()
    assert any(c.value == "Expansion: action planned ahead on this page; no model call" for c in at.caption)


def test_the_cost_cap_is_set_from_the_edit_tab_and_shown_in_the_status(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    [cap] = [n for n in at.number_input if "spent so far" in n.label]
    cap.set_value(2.5)
    at.form_submit_button(key="budget_submit").click()
    at.run()
    wait_for(lambda: load_state(store, session_id).config.max_cost_usd == 2.5)
    at.run()
    assert "cost cap $2.5" in markdown_text(at)


def markdown_strings(at: AppTest) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer: the bodies of Markdown, captions
    and alerts, and the labels and help of every widget, button, expander and tab. (Plain text, code,
    dataframes and selectbox options are never parsed, so they are left out.)"""
    found: list[str] = []

    def walk(node: object) -> None:
        kind = getattr(node, "type", None)
        if kind in ("markdown", "caption", "error", "warning", "info", "success", "title", "header", "subheader"):
            found.append(node.value)  # type: ignore[attr-defined]
        for attr in ("label", "help"):
            value = getattr(node, attr, None)
            if isinstance(value, str):
                found.append(value)
        children = getattr(node, "children", None) or {}
        for child in children.values() if isinstance(children, dict) else children:
            walk(child)

    walk(at._tree)
    return found


def test_every_markdown_string_of_a_hostile_session_is_escaped(db: str) -> None:
    from test_console_hostile import DONE, HOST, INSPECTED, LIVE, first_line, live_markup, store_sessions

    store_sessions(open_store(db), HOST)
    views: list[tuple[str, list[str]]] = []
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["session"] = LIVE
    at.run()
    assert not at.exception, at.exception
    for node_id in INSPECTED:
        at.selectbox(key="node").select(node_id)
        at.run()
        views.append((f"node {node_id}", markdown_strings(at)))
    at.slider(key=f"timeline_{LIVE}").set_value(20)
    at.run()
    views.append(("the timeline at event 20", markdown_strings(at)))
    done = AppTest.from_file(APP, default_timeout=30)
    done.query_params["session"] = DONE
    done.run()
    views.append(("the failed session", markdown_strings(done)))
    for view, strings in views:
        for text in strings:
            assert live_markup(text) == [], f"{view}: {text!r} reaches Markdown unescaped"
    shown = "\n".join(parsed for _, strings in views for parsed in strings).replace("\\", "").replace("\u2060", "")
    for tag in (
        "progress",
        "expansion-note",
        "model-error",
        "usage-key",
        "rule",
        "pause-reason",
        "finish-reason",
        "note",
    ):
        assert first_line(tag, HOST) in shown, f"the {tag} field is not shown"


def test_refusals_and_errors_quote_text_as_text(db: str) -> None:
    from test_console_hostile import HOST, live_markup, payloads

    session_id = create_session(open_store(db), BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    hostile = " ".join(payloads(HOST))
    at = app()
    at.run()
    at.session_state["_form_results"] = {(scope(session_id), "budget"): (False, f"there is no node '{hostile}'")}
    at.session_state["_flash_controls"] = (session_id, False, hostile)
    at.run()
    errors = [e.value for e in at.error]
    assert len(errors) == 2 and all(live_markup(e) == [] for e in errors), errors
    at.text_area(key="new_task_text").input("a task")
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_input(key="new_model").input(f"![b](http://{HOST}/model.png)")
    at.form_submit_button(key="start_session").click()
    at.run()
    [refusal] = [e.value for e in at.sidebar.error]
    assert refusal.startswith("Not started: unknown model") and live_markup(refusal) == [], refusal


def test_the_timeline_summarises_each_event_through_its_payload_model() -> None:
    from planner.events import ModelCalled, StatusChanged
    from planner.operators import Operator
    from ui.views.timeline import _detail

    assert _detail(StatusChanged(status=Status.FAIL, reason="no results")).startswith("status=FAIL, reason=no results")
    call = _detail(ModelCalled(operator=Operator.EXPAND, prompt="the whole prompt", raw="{...}", ok=False, error="bad"))
    assert "operator=expand" in call and "error=bad" in call
    assert "prompt" not in call and "the whole prompt" not in call


def test_the_inspector_cuts_long_text_and_tells_a_failure_from_a_prune(db: str) -> None:
    """Issue 12, defects 5 and 7: a failed action the engine then pruned reads "✗ FAILED, then PRUNED"
    (not like an operator's prune), and a long description is cut with the whole of it one click away."""
    store = open_store(db)
    failing = create_session(store, BROWNIE_TASK, f"script:{SCRIPTS / 'brownie_fail.json'}", start_url="dry://start")
    from ui.context import console

    console().pool.ensure_running(failing)
    wait_for(lambda: load_state(store, failing).finished)
    at = app()
    at.selectbox(key="node").select("0.2.1")
    at.run()
    assert load_state(store, failing).tree["0.2.1"].status is Status.PRUNED
    assert "**✗ FAILED**, then **PRUNED**" in markdown_text(at)
    at.selectbox(key="node").select("0.3")
    at.run()
    assert "FAILED" not in markdown_text(at), "a node that never failed says nothing of failure"

    task = ("find the cheapest espresso machine " * 100).strip()
    create_session(store, task, BROWNIE, start_url="dry://start", paused=True)
    at = app()  # the newest session, on its root, whose description is the task
    [shown] = [t.value for t in at.text if t.value.startswith("find the cheapest") and t.value != task]
    assert len(shown) <= 602 and shown.endswith(" …"), shown
    [whole] = [e for e in at.expander if e.label == f"Whole description ({len(task):,} characters)"]
    assert [t.value for t in whole.text] == [task]


def test_a_bundled_tasks_answer_is_checked_beside_the_status(db: str) -> None:
    from demo.tasks import load_tasks
    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import Script, ScriptedModel
    from sessions.backends import Backend
    from sessions.runner import Runner

    task = next(t for t in load_tasks() if t.id == "keyboard-brand-backpack")
    script = Script.model_validate(
        {
            "nodes": {task.task: {"type": "AND", "children": ["a"]}, "a": {"type": "ACTION", "action": "click [1]"}},
            "final_answer": "The Acme Daypack 20L at $49.99",
        }
    )
    store = open_store(db)
    session_id = create_session(store, task.task, "demo", config=EngineConfig(constraints=False))
    Runner(store, session_id, backend=Backend(ScriptedModel(script), DryEnvironment())).run()
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["session"] = session_id
    at.run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if "Answer check" in w.value] == [
        md("Answer check: not met — missing Northwind, Northwind Metro 18L, 54.99.")
    ]


def test_a_failed_sessions_diagnosis_is_shown_with_buttons_to_its_nodes(db: str) -> None:
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.diagnose import diagnose_session
    from sessions.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False, repair=False))
    script = load("brownie_fail.json")
    Runner(store, session_id, backend=Backend(ScriptedModel(script), DryEnvironment(script.fail_actions))).run()
    found = diagnose_session(store, session_id, "demo").diagnosis
    assert found is not None and found.critical_steps
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["session"] = session_id
    at.run()
    assert not at.exception, at.exception
    assert any(m.value.startswith("**Diagnosis** (demo)") for m in at.markdown)
    cited = [step.node_id for step in found.critical_steps if step.node_id]
    buttons = [b for b in at.button if b.label.startswith("Show ")]
    assert [b.label for b in buttons] == [f"Show {node_id}" for node_id in cited]
    buttons[0].click()
    at.run()
    assert at.selectbox(key="node").value == cited[0]


def test_the_timeline_draws_the_past_plan_and_compares_a_fork_with_its_parent(db: str) -> None:
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.runner import Runner, fork_session

    store = open_store(db)
    config = EngineConfig(constraints=False, repair=False)
    parent = create_session(store, BROWNIE_TASK, "demo", config=config)
    good = load("brownie.json")
    Runner(store, parent, backend=Backend(ScriptedModel(good), DryEnvironment())).run()
    fork = fork_session(store, parent, 3)
    failing = load("brownie_fail.json")
    queue_command(store, fork, {"kind": "resume"})
    Runner(store, fork, backend=Backend(ScriptedModel(failing), DryEnvironment(failing.fail_actions))).run()
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["session"] = fork
    at.run()
    assert not at.exception, at.exception
    assert any(m.value.startswith(f"**Compared with {md(parent)}** (forked at event 3") for m in at.markdown)
    compared = next(df.value for df in at.dataframe if "in this fork" in df.value.columns)
    assert len(compared) > 0 and (compared["in the parent"] != compared["in this fork"]).all()
    at.slider(key=f"timeline_{fork}").set_value(4)
    at.run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Since event 4: ") and "(marked Δ)" in c.value for c in at.caption)


def _press_twice_then_once_more(db: str, session_id: str) -> None:
    """A Step press whose callback Streamlit runs twice before drawing (its replay), then a press on
    the page drawn after it."""
    from ui.commands import drawn, send
    from ui.context import console

    ctx = console()
    send(ctx, session_id, {"kind": "step"}, wait=0)
    send(ctx, session_id, {"kind": "step"}, wait=0)
    drawn()
    send(ctx, session_id, {"kind": "step"}, wait=0)


def test_a_press_whose_callback_streamlit_replays_sends_one_command(db: str) -> None:
    """The replayed callback of one press is not queued again; a press after the page was drawn is."""
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, paused=True)
    at = AppTest.from_function(_press_twice_then_once_more, args=(db, session_id), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    queued = [command.payload["kind"] for command in store.pending(session_id)]
    applied = [e for e in store.load(session_id) if e.kind.value in ("command_applied", "command_rejected")]
    assert len(queued) + len(applied) == 2, f"two presses, two commands: {queued} and {len(applied)} answered"
