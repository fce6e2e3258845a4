"""The console's views and forms, headless (streamlit.testing AppTest), on dry scripted sessions."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import answered, app, console_app, keyed, markdown_text, node_picker, show_tab
from streamlit.testing.v1 import AppTest
from waiting import wait_until

from planner.config import Breakpoint, EngineConfig
from planner.events import Cause, Kind
from planner.tree import NodeType, Origin, Status
from sessions.client.commands import queue_command
from sessions.client.creation import create_session, fork_session
from sessions.client.markdown import md
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from ui.commands import Outcome
from ui.forms import scope
from ui.status import outcome

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


@pytest.fixture
def db(app_db: str) -> str:
    return app_db


def fill_own_brownie_task(at: AppTest) -> None:
    """The new-session form filled for the brownie task as one's own, on a dry run with its script."""
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_area(key="new_task_text").input(BROWNIE_TASK)
    at.text_input(key="new_start_url").input("")
    at.text_input(key="new_model").input(BROWNIE)


def test_empty_console_invites_a_first_session(db: str) -> None:
    at = app()
    assert any("No sessions yet" in caption.value for caption in at.sidebar.caption)
    assert "Start a session from the sidebar" in markdown_text(at)


def test_start_form_creates_and_runs_a_session(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDOR_OPERATOR", "gina")  # the console's operator on loopback, who starts it
    at = app()
    fill_own_brownie_task(at)
    at.form_submit_button(key="start_session").click()
    at.run()
    assert not at.exception, at.exception
    store = open_store(db)
    [info] = store.sessions()
    wait_until(lambda: load_state(store, info.id).finished, "load_state(store, info.id).finished")
    assert load_state(store, info.id).started_by == "gina"
    at.run()
    assert "answered, not checked" in markdown_text(at)
    assert "started by gina · step " in markdown_text(at)
    show_tab(at, "Task & answer")  # drawn only while open
    assert any("Fudgy vegan brownies (4.8 stars)" in t.value for t in at.text)


def test_a_start_press_applied_twice_starts_one_session(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit can apply one press again in the next run; that run carries the drawing the press came
    from, so it opens the session the press started instead of starting another."""
    monkeypatch.setattr("ui.commands.new_command_id", lambda: "one-drawing")  # every press: one drawing
    at = app()
    fill_own_brownie_task(at)
    at.form_submit_button(key="start_session").click()
    at.run()
    at.form_submit_button(key="start_session").click()
    at.run()
    assert not at.exception, at.exception
    [info] = open_store(db).sessions()
    assert at.query_params["session"] in (info.id, [info.id]), "the page shows the session the press started"


def test_a_fork_press_applied_twice_makes_one_fork(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """As with Start: the second application of one Fork press opens the fork the first one made."""
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.worker.runner import Runner

    monkeypatch.setattr("ui.commands.new_command_id", lambda: "one-drawing")
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    Runner(store, session_id, backend=Backend(ScriptedModel(load("brownie.json")), DryEnvironment())).run()
    at = console_app(session_id)
    at.run()
    show_tab(at, "Timeline")
    at.slider(key=f"timeline_{session_id}").set_value(3)
    at.run()
    at.button(key="fork_btn").click().run()
    [fork] = [info.id for info in store.sessions() if info.parent_id]
    show_tab(at, "Timeline")
    at.button(key="fork_btn").click().run()  # drawn with the same id: the same press, applied again
    assert not at.exception, at.exception
    assert [info.id for info in store.sessions() if info.parent_id] == [fork], "one press, one fork"
    assert at.query_params["session"] in (fork, [fork]), "the page shows the fork the press made"


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
    wait_until(lambda: load_state(store, session_id).steps == 1, "load_state(store, session_id).steps == 1")
    at.run()
    assert "paused after one step" in markdown_text(at)
    at.button(key="ctl_resume").click()
    at.run()
    wait_until(lambda: load_state(store, session_id).finished, "load_state(store, session_id).finished")
    at.run()
    assert ":material/help: answered, not checked** — done in" in markdown_text(at), "no check: only believed"
    show_tab(at, "All sessions")
    [sessions] = [d.value for d in at.dataframe if "age" in d.value.columns]
    assert sessions["status"].tolist() == ["answered, not checked"], "the sessions table follows the run"


def test_inject_and_prune_forms_show_the_engines_answer(db: str) -> None:
    store = open_store(db)
    session_id, at = expanded_and_paused(store)
    at.run()
    node_picker(at).select("0.1")
    at.run()
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert at.error[0].value == "Write at least one sub-goal, one per line, before pressing Inject."
    keyed(at.text_area, "inject_goals").input("one alternative")
    meaning = keyed(at.radio, "inject_meaning")
    assert meaning.value == "its first steps: the planner plans the rest", "the useful meaning is the default"
    meaning.set_value("its only alternatives (OR): the planner adds none")
    keyed(at.text_input, "inject_scores").input("0.5, 0.7")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert at.error[0].value == md("Give one score per alternative (1), or none.")
    assert keyed(at.text_area, "inject_goals").value == "one alternative", "a refused form keeps its input"
    keyed(at.radio, "inject_meaning").set_value("its first steps: the planner plans the rest")
    keyed(at.text_input, "inject_scores").set_value("")
    keyed(at.text_area, "inject_goals").input("Check it is vegan")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    answered(at, "inject applied")
    unplanned = load_state(store, session_id).tree
    assert unplanned["0.1"].type is NodeType.UNKNOWN, "the planner still plans 0.1 when the run reaches it"
    assert [(c.description, c.origin) for c in unplanned.children(unplanned["0.1"])] == [
        ("Check it is vegan", Origin.OPERATOR)
    ]

    node_picker(at).select("0")
    at.run()
    assert not at.error, "0.1's refusal does not show under 0"
    keyed(at.text_area, "inject_goals").input("Check the reviews\nNote the rating")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    answered(at, "inject applied")
    assert keyed(at.text_area, "inject_goals").value == "", "the redraw that shows the answer has the input cleared"
    state = load_state(store, session_id)
    assert [state.tree[c].description for c in state.tree["0"].children][-2:] == [
        "Check the reviews",
        "Note the rating",
    ]

    node_picker(at).select("0.3")
    at.run()
    assert not [s.value for s in at.success if "inject" in s.value], "the inject's answer shows only under 0"
    at.form_submit_button(key="prune_submit").click()
    at.run()
    assert [e.value for e in at.error] == ["Give a reason for the prune: it is recorded with the node."]
    keyed(at.text_input, "prune_reason").input("typed for 0.3")
    node_picker(at).select("0.2")
    at.run()
    assert keyed(at.text_input, "prune_reason").value == "", "0.3's prune reason does not leak into 0.2's form"
    node_picker(at).select("0.3")
    at.run()
    keyed(at.text_input, "prune_reason").input("not needed")
    at.form_submit_button(key="prune_submit").click()
    at.run()
    answered(at, "prune applied")
    assert load_state(store, session_id).tree["0.3"].reason == "operator: not needed"
    assert keyed(at.text_input, "prune_reason").value == ""


def test_pruning_an_action_that_ran_shows_the_engines_warning_under_the_form(db: str) -> None:
    """The engine warns that a pruned action already ran in the browser; the form says so, not only
    "prune applied"."""
    from conftest import MECHANICS, load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.worker.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", config=MECHANICS)
    runner = Runner(store, session_id, backend=Backend(ScriptedModel(load("brownie.json")), DryEnvironment()))
    runner.run(should_stop=lambda: "0.1" in runner.state.tree and runner.state.tree["0.1"].status is Status.SUCCESS)
    action = load_state(store, session_id).tree["0.1"].action
    at = app()
    node_picker(at).select("0.1")
    at.run()
    keyed(at.text_input, "prune_reason").input("wrong search")
    at.form_submit_button(key="prune_submit").click()
    at.run()
    warning = (
        f"prune applied — already ran in the browser: 0.1 ({action}); pruning takes it out of the plan but "
        "does not undo it"
    )
    deadline = time.monotonic() + 30
    while md(warning) not in [w.value for w in at.warning]:
        assert time.monotonic() < deadline, f"no warning under the prune form: {[s.value for s in at.success]}"
        time.sleep(0.05)
        at.run()
    assert not [s.value for s in at.success if "prune applied" in s.value], "the warning is not a plain success"


def test_a_finished_node_says_why_its_description_has_no_form(db: str) -> None:
    """A node that succeeded, or was pruned, has no description form: one line says so, and a pruned one
    points to the Reopen button beside it."""
    from conftest import MECHANICS, load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.worker.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", config=MECHANICS)
    runner = Runner(store, session_id, backend=Backend(ScriptedModel(load("brownie.json")), DryEnvironment()))
    runner.run(should_stop=lambda: "0.1" in runner.state.tree and runner.state.tree["0.1"].status is Status.SUCCESS)
    at = app()
    node_picker(at).select("0.1")
    at.run()
    assert not [t for t in at.text_area if (t.key or "").startswith("edit_description_")], "no form for 0.1"
    assert md(
        "0.1 is finished (SUCCESS): its description stays as it ran; inject a sub-goal beside it to do more."
    ) in [c.value for c in at.caption]
    node_picker(at).select("0.2")
    at.run()
    keyed(at.text_input, "prune_reason").input("not needed")
    at.form_submit_button(key="prune_submit").click()
    at.run()
    answered(at, "prune applied")
    at.run()
    assert md("0.2 is finished (PRUNED): reopen it first (Reopen, above) to edit its description.") in [
        c.value for c in at.caption
    ]
    assert at.button(key="reopen_btn").label == "Reopen 0.2", "the Reopen it points to is in the same tab"


def test_a_request_from_before_the_last_redraw_keeps_the_selection(db: str) -> None:
    """Every request carries the values of the widgets the browser shows. One sent before the browser
    drew the latest selection (the live panel's timer fires every 0.75 s) must not select the old node
    again. `_run` with saved widget states is such a request; the public `run` always sends the newest."""
    store = open_store(db)
    _, at = expanded_and_paused(store)
    at.run()
    node_picker(at).select("0.1")
    at.run()
    stale = at._tree.get_widget_states()  # the browser shows 0.1
    at.button(key="next_node").click()
    at.run()
    assert node_picker(at).value == "0.2"
    at._run(stale)  # the timer's request, sent before the browser drew 0.2
    assert not at.exception, at.exception
    assert node_picker(at).value == "0.2", "a request from before the redraw took the selection back"
    assert "Edit the plan at 0.2" in markdown_text(at), "the forms on screen are the selected node's"
    at.run()
    assert node_picker(at).value == "0.2"


def test_a_request_from_before_the_last_redraw_keeps_the_session(db: str) -> None:
    """The same for the session: a request from a browser still showing the old session must not
    bring it back (the console must never show the wrong session)."""
    store = open_store(db)
    first = create_session(store, "first task", BROWNIE, start_url="dry://start", paused=True)
    second = create_session(store, "second task", BROWNIE, start_url="dry://start", paused=True)
    at = app()
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    assert picker.value == second, "the newest session opens first"
    stale = at._tree.get_widget_states()
    picker.select(first)
    at.run()
    assert "first task" in markdown_text(at)
    at._run(stale)  # the timer's request, sent before the browser drew the first session
    assert not at.exception, at.exception
    assert "first task" in markdown_text(at), "a request from before the redraw brought the old session back"
    assert at.query_params["session"] in (first, [first]), "the URL names the session on screen"


def _click_row(at: AppTest, table: object, row: int) -> None:
    """What the browser sends when a row of a selectable table is clicked: the page's widget values with
    the table's selection (AppTest has no way to click a row)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    states = at._tree.get_widget_states()
    clicked = WidgetState(id=table.proto.id, string_value=json.dumps({"selection": {"rows": [row], "columns": []}}))  # type: ignore[attr-defined]
    kept = [state for state in states.widgets if state.id != clicked.id]
    del states.widgets[:]
    states.widgets.extend([*kept, clicked])
    at._run(states)
    assert not at.exception, at.exception


def test_a_row_of_the_sessions_table_opens_that_session(db: str) -> None:
    """All sessions is a picker too: clicking a row opens its session (URL and heading), and the click
    keeps no hold on the table once another session is open."""
    store = open_store(db)
    first = create_session(store, "first task", BROWNIE, start_url="dry://start", paused=True)
    fork = fork_session(store, first, 1)
    second = create_session(store, "second task", BROWNIE, start_url="dry://start", paused=True)
    at = app()
    assert "second task" in markdown_text(at), "the newest session opens first"
    show_tab(at, "All sessions")
    [table] = [d for d in at.dataframe if "worker" in d.value.columns]
    assert table.value["id"].tolist() == [second, fork, first]
    assert {"status", "why", "task", "steps", "age", "last change", "worker", "fork of"} <= set(table.value.columns)
    assert table.value["fork of"].tolist() == ["", f"{first} at event 1", ""]
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    assert picker.options == [
        f"second task · {second}",
        f"first task · {fork} · fork of {first} at event 1",
        f"first task · {first}",
    ], "a fork reads as a fork of its parent, never as the parent"
    _click_row(at, table, 2)
    at.run()  # the click's run asked for a whole one (`select_session`)
    assert "first task" in markdown_text(at) and "second task" not in markdown_text(at)
    assert at.query_params["session"] in (first, [first]), "the URL names the session on screen"
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    assert picker.value == first, "the sidebar's picker follows the table"
    picker.select(second)
    at.run()
    assert "second task" in markdown_text(at), "the row clicked before does not take the session back"
    at.run()
    assert "second task" in markdown_text(at)


def expanded_and_paused(store: EventStore) -> tuple[str, AppTest]:
    """A dry session resumed from the console and paused by the plan-review breakpoint after the root's
    expansion, and the console showing it."""
    config = EngineConfig(breakpoints=frozenset({Breakpoint.AFTER_EXPANSION}))
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", config=config, paused=True)
    at = app()
    at.button(key="ctl_resume").click()
    at.run()
    wait_until(
        lambda: (state := load_state(store, session_id)).status.value == "paused" and len(state.tree) > 1,
        '(state := load_state(store, session_id)).status.value == "paused" and len(state.tree) > 1',
    )
    return session_id, at


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
    wait_until(
        lambda: load_state(store, session_id).config.breakpoints == {Breakpoint.BEFORE_ACTION},
        "load_state(store, session_id).config.breakpoints == {Breakpoint.BEFORE_ACTION}",
    )
    at.button(key="ctl_resume").click()
    at.run()
    wait_until(
        lambda: "breakpoint: before 0.1" in (load_state(store, session_id).reason or ""),
        '"breakpoint: before 0.1" in (load_state(store, session_id).reason or "")',
    )


def test_an_interrupted_session_can_be_resumed(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    at = app()
    assert "interrupted (no runner is active)" in markdown_text(at)
    at.button(key="ctl_resume").click()
    at.run()
    wait_until(lambda: load_state(store, session_id).finished, "load_state(store, session_id).finished")


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


def test_status_line_names_the_check_on_a_finished_goal_and_the_recovery_of_a_failed_one() -> None:
    """The moments a redraw rarely lands on: a goal checked once its children are done, and a failed
    node being recovered, with the reason it failed."""
    from conftest import load, new_state

    from planner.browser.dry import DryEnvironment
    from planner.engine import Engine
    from planner.models.scripted import ScriptedModel
    from ui.status import status_line

    script = load("brownie_fail.json")
    state, _ = new_state(BROWNIE_TASK, EngineConfig())
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    said = [status_line(state)]
    while engine.step():
        said.append(status_line(state))
    assert "checking whether 0 is done" in said, said
    assert "recovering 0.2.1 (dry run: 'click [31]' is scripted to fail)" in said, said


def test_time_travel_keeps_the_newest_states_and_forgets_the_oldest(db: str) -> None:
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.client.history import TimeTravel
    from sessions.worker.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    Runner(store, session_id, backend=Backend(ScriptedModel(load("brownie.json")), DryEnvironment())).run()
    travel = TimeTravel(store, size=2)
    first = travel.at(session_id, 2)
    assert travel.at(session_id, 2) is first, "a state asked for again comes from the cache"
    travel.at(session_id, 3)
    travel.at(session_id, 4)  # a third state: the least recently used one goes
    assert travel.at(session_id, 2) is not first and travel.at(session_id, 2).seq == first.seq == 2


def test_constraints_are_shown_and_set_from_the_edit_tab(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    show_tab(at, "Task & answer")
    assert any("Not extracted yet" in c.value for c in at.caption)
    [box] = [t for t in at.text_area if t.label.startswith("Task constraints")]
    box.input("vegan\n\n  rating 4 or more ")
    at.form_submit_button(key="constraints_submit").click()
    at.run()
    wait_until(
        lambda: load_state(store, session_id).constraints == ["vegan", "rating 4 or more"],
        'load_state(store, session_id).constraints == ["vegan", "rating 4 or more"]',
    )
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
        wait_until(
            lambda: f"before {node_id} " in (load_state(store, session_id).reason or ""),  # noqa: B023
            f"the pause before {node_id}",
        )
        at.run()
    node_picker(at).select("0.3")
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
    wait_until(
        lambda: load_state(store, session_id).config.max_cost_usd == 2.5,
        "load_state(store, session_id).config.max_cost_usd == 2.5",
    )
    at.run()
    assert "cost cap $2.5" in markdown_text(at)
    answered(at, "cost cap applied")  # the form's name, never the command's kind ("budget applied")
    at.form_submit_button(key="budget_submit").click()  # the same cap again
    at.run()
    deadline = time.monotonic() + 30
    while not any("that is the cost cap already" in e.value for e in at.error):
        assert time.monotonic() < deadline, f"no refusal of the unchanged cap: {[e.value for e in at.error]}"
        time.sleep(0.05)
        at.run()


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
    at = console_app(LIVE)
    at.run()
    assert not at.exception, at.exception
    calls = [e.seq for e in open_store(db).load(LIVE) if e.kind is Kind.MODEL_CALL]
    for node_id in INSPECTED:
        node_picker(at).select(node_id)
        for seq in calls:  # a model call's prompt and answer are drawn once its expander is open
            at.session_state[f"model_call_{seq}"] = True
        at.run()
        views.append((f"node {node_id}", markdown_strings(at)))
    show_tab(at, "Timeline")
    at.slider(key=f"timeline_{LIVE}").set_value(20)
    at.run()
    views.append(("the timeline at event 20", markdown_strings(at)))
    done = console_app(DONE)
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
    at.session_state["_form_results"] = {
        (scope(session_id), "budget"): (Outcome("rejected", f"there is no node '{hostile}'"), (), None)
    }
    at.session_state["_flash_controls"] = (session_id, Outcome("rejected", hostile), None)
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
    from planner.questions import Question
    from ui.views.timeline import _detail

    assert _detail(StatusChanged(status=Status.FAIL, reason="no results")).startswith("status=FAIL, reason=no results")
    call = _detail(ModelCalled(question=Question.EXPAND, prompt="the whole prompt", raw="{...}", ok=False, error="bad"))
    assert "question=expand" in call and "error=bad" in call
    assert "prompt" not in call and "the whole prompt" not in call


def test_the_inspector_cuts_long_text_and_tells_a_failure_from_a_prune(db: str) -> None:
    """Issue 12, defects 5 and 7: a failed action the engine then pruned reads "✗ FAILED, then PRUNED"
    (not like an operator's prune), a failed root only "✗ FAILED" (issue 27), and a long description
    is cut with the whole of it one click away."""
    store = open_store(db)
    failing = create_session(store, BROWNIE_TASK, f"script:{SCRIPTS / 'brownie_fail.json'}", start_url="dry://start")
    from ui.context import console

    console().client.restart(failing)
    wait_until(lambda: load_state(store, failing).finished, "load_state(store, failing).finished")
    at = app()
    node_picker(at).select("0.2.1")
    at.run()
    assert load_state(store, failing).tree["0.2.1"].status is Status.PRUNED
    assert "**✗ FAILED**, then **PRUNED**" in markdown_text(at)
    node_picker(at).select("0.3")
    at.run()
    assert "FAILED" not in markdown_text(at), "a node that never failed says nothing of failure"
    unrepaired = create_session(
        store,
        BROWNIE_TASK,
        f"script:{SCRIPTS / 'brownie_fail.json'}",
        start_url="dry://start",
        config=EngineConfig(repair=False),
    )
    console().client.restart(unrepaired)
    wait_until(lambda: load_state(store, unrepaired).finished, "the unrepaired run to end")
    assert load_state(store, unrepaired).tree["0"].status is Status.PRUNED, "the engine prunes the failed root"
    at = app()  # the newest session, on its root
    shown = [line for line in markdown_text(at).splitlines() if line.startswith("**0** ·")]
    assert shown and "**✗ FAILED** · made by" in shown[0], shown

    task = ("find the cheapest espresso machine " * 100).strip()
    create_session(store, task, BROWNIE, start_url="dry://start", paused=True)
    at = app()  # the newest session, on its root, whose description is the task
    [shown] = [t.value for t in at.text if t.value.startswith("find the cheapest") and t.value != task]
    assert len(shown) <= 602 and shown.endswith(" …"), shown
    [whole] = [e for e in at.expander if e.label == f"Whole description ({len(task):,} characters)"]
    assert [t.value for t in whole.text] == [task]

    # A reason is cut too (an operator's prune reason may run to 2,000 characters), whole one click away.
    reason = ("the shop lists this item twice, so skip it " * 45).strip()
    pruned = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    queue_command(store, pruned, {"kind": "inject", "parent": "0", "node_type": "AND", "goals": ["look it up"]})
    queue_command(store, pruned, {"kind": "prune", "node": "0.1", "reason": reason})
    console().client.restart(pruned)
    wait_until(
        lambda: (node := load_state(store, pruned).tree.get("0.1")) is not None and node.status is Status.PRUNED,
        '(node := load_state(store, pruned).tree.get("0.1")) is not None and node.status is Status.PRUNED',
    )
    at = app()
    node_picker(at).select("0.1")
    at.run()
    [line] = [m.value for m in at.markdown if m.value.startswith("Reason: ")]
    assert len(line) < 700 and line.endswith("…"), line
    [whole] = [e for e in at.expander if e.label.startswith("Whole reason (")]
    assert [t.value for t in whole.text] == [f"operator: {reason}"]


def test_a_bundled_tasks_answer_is_checked_beside_the_status(db: str) -> None:
    from demo.tasks import load_tasks
    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import Script, ScriptedModel
    from sessions.backends import Backend
    from sessions.worker.runner import Runner

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
    at = console_app(session_id)
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
    from sessions.client.diagnose import diagnose_session
    from sessions.worker.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False, repair=False))
    script = load("brownie_fail.json")
    Runner(store, session_id, backend=Backend(ScriptedModel(script), DryEnvironment(script.fail_actions))).run()
    found = diagnose_session(store, session_id, "demo").diagnosis
    assert found is not None and found.critical_steps
    at = console_app(session_id)
    at.run()
    show_tab(at, "Task & answer")
    assert not at.exception, at.exception
    assert any(m.value.startswith("**Diagnosis** (demo)") for m in at.markdown)
    cited = [step.node_id for step in found.critical_steps if step.node_id]
    buttons = [b for b in at.button if b.label.startswith("Show ")]
    assert [b.label for b in buttons] == [f"Show {node_id}" for node_id in cited]
    buttons[0].click()
    at.run()
    assert node_picker(at).value == cited[0]


def test_the_timeline_draws_the_past_plan_and_compares_a_fork_with_its_parent(db: str) -> None:
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.client.creation import fork_session
    from sessions.worker.runner import Runner

    store = open_store(db)
    config = EngineConfig(constraints=False, repair=False)
    parent = create_session(store, BROWNIE_TASK, "demo", config=config)
    good = load("brownie.json")
    Runner(store, parent, backend=Backend(ScriptedModel(good), DryEnvironment())).run()
    fork = fork_session(store, parent, 3)
    failing = load("brownie_fail.json")
    queue_command(store, fork, {"kind": "resume"})
    Runner(store, fork, backend=Backend(ScriptedModel(failing), DryEnvironment(failing.fail_actions))).run()
    at = console_app(fork)
    at.run()
    show_tab(at, "Timeline")
    assert not at.exception, at.exception
    assert any(m.value.startswith(f"**Compared with {md(parent)}** (forked at event 3") for m in at.markdown)
    compared = next(df.value for df in at.dataframe if "in this fork" in df.value.columns)
    assert len(compared) > 0 and (compared["in the parent"] != compared["in this fork"]).all()
    # The failed alternatives of the fork are marked ✗ in its compared chart, as in the live one (the
    # engine pruned them: without the mark they read as an operator's prune).
    failed = load_state(store, fork).failed
    assert failed and all(node_id in chart_failures(at, "Plan tree of this fork") for node_id in failed)
    assert not chart_failures(at, f"Plan tree of the parent, {parent}"), "the parent's run never failed"
    at.slider(key=f"timeline_{fork}").set_value(load_state(store, fork).seq - 1)
    at.run()
    assert not at.exception, at.exception
    past = chart_failures(at, re.compile(r"^Plan tree at event \d+$"))
    assert past == failed, "the plan scrubbed back to draws its failures like the live one"
    at.slider(key=f"timeline_{fork}").set_value(4)
    at.run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Since event 4: ") and "(marked Δ)" in c.value for c in at.caption)


def chart_failures(at: AppTest, alt: str | re.Pattern[str]) -> set[str]:
    """The node ids the chart named `alt` draws as failures (✗)."""
    charts = [
        json.loads(e.proto.spec)
        for e in at.get("echarts_chart")
        if (e.proto.alt == alt if isinstance(alt, str) else alt.match(e.proto.alt))
    ]
    assert len(charts) == 1, f"one chart {alt!r}"
    items = charts[0]["series"][0]["data"]
    return {item["id"] for item in items if "✗" in item["label"]["formatter"].split("\n")[0]}  # its marks line


def _press_twice_then_once_more(db: str, session_id: str) -> None:
    """A Step press whose callback Streamlit runs twice (its replay: the same drawing, so the same command
    id), then a press on the page drawn after it (a new id)."""
    from planner.commands import Step
    from ui.commands import new_command_id, send
    from ui.context import console

    ctx = console()
    drawn_with = new_command_id()
    send(ctx, session_id, Step(), drawn_with)
    send(ctx, session_id, Step(), drawn_with)
    send(ctx, session_id, Step(), new_command_id())


def test_a_press_whose_callback_streamlit_replays_sends_one_command(db: str) -> None:
    """The replayed callback of one press is one command; a press on a later drawing is another."""
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, paused=True)
    at = AppTest.from_function(_press_twice_then_once_more, args=(db, session_id), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    # The console's runner may answer a command between the two reads: queue first, then the log, by id.
    queued = {command.command_id for command in store.pending(session_id)}
    answered = {
        e.payload.command_id for e in store.load(session_id) if e.kind.value in ("command_applied", "command_rejected")
    }
    assert len(queued | answered) == 2, f"two presses, two commands: {queued} queued, {answered} answered"


def test_a_pick_whose_callback_streamlit_skipped_still_opens_the_session(db: str) -> None:
    """A timer request of the live panel can carry the picker's new value first: Streamlit then stores
    the value but skips the sidebar picker's callback (it runs only the fragment's), and the full run
    after it finds no change. The page must still show the session the picker shows."""
    store = open_store(db)
    first = create_session(store, "first task", BROWNIE, start_url="dry://start", paused=True)
    create_session(store, "second task", BROWNIE, start_url="dry://start", paused=True)
    at = app()
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    at.session_state[picker.key] = first  # the value arrives without its callback
    at.run()
    assert not at.exception, at.exception
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    assert picker.value == first
    assert "first task" in markdown_text(at), "the picker shows the first session and so must the page"
    assert at.query_params["session"] in (first, [first]), "the URL names the session on screen"


def test_a_node_pick_whose_callback_streamlit_skipped_still_selects_the_node(db: str) -> None:
    """The same for the node selector: its value arriving without its callback still selects the node."""
    _, at = expanded_and_paused(open_store(db))
    at.run()
    at.session_state[node_picker(at).key] = "0.2"
    at.run()
    assert not at.exception, at.exception
    assert node_picker(at).value == "0.2"
    assert "Edit the plan at 0.2" in markdown_text(at), "the forms on screen are the picked node's"


def test_only_the_open_lower_tab_is_drawn_and_the_timeline_keeps_its_place(db: str) -> None:
    """The timeline and the sessions table cost every tick, so a closed tab of theirs is not drawn;
    the timeline's slider still opens where the operator left it."""
    from conftest import load

    from planner.browser.dry import DryEnvironment
    from planner.models.scripted import ScriptedModel
    from sessions.backends import Backend
    from sessions.worker.runner import Runner

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    script = load("brownie.json")
    Runner(store, session_id, backend=Backend(ScriptedModel(script), DryEnvironment())).run()
    at = console_app(session_id)
    at.run()
    slider = f"timeline_{session_id}"
    assert not [s for s in at.slider if s.key == slider], "the closed Timeline tab is drawn"
    assert not [d for d in at.dataframe if "age" in d.value.columns], "the closed All sessions tab is drawn"
    show_tab(at, "Timeline")
    at.slider(key=slider).set_value(3)
    at.run()
    show_tab(at, "All sessions")
    assert [d for d in at.dataframe if "age" in d.value.columns], "the open All sessions tab is drawn"
    show_tab(at, "Timeline")
    assert at.slider(key=slider).value == 3, "the timeline lost its place while its tab was closed"


def test_a_value_left_under_a_pickers_key_does_not_choose_for_the_operator(db: str) -> None:
    """A node picker keyed by 0.2 may have held another value earlier (in this session or another):
    selecting 0.2 afresh shows 0.2, not that leftover."""
    _, at = expanded_and_paused(open_store(db))
    at.run()
    node_picker(at).select("0.1")
    at.run()
    at.session_state["node_pick_0.2"] = "0.3"  # left over from a picker of the same key
    at.button(key="next_node").click()
    at.run()
    assert not at.exception, at.exception
    assert node_picker(at).value == "0.2", "a leftover value chose the node instead of the J key"


def test_a_model_calls_prompt_and_answer_are_drawn_only_while_its_expander_is_open(db: str) -> None:
    """A closed call builds nothing: highlighting every call's prompt again on each redraw of a live
    run was a fifth of the browser's work."""
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    at.button(key="ctl_step").click()  # the root's expansion: one model call for node 0
    at.run()
    wait_until(
        lambda: any(e.kind is Kind.MODEL_CALL for e in store.load(session_id)),
        "any(e.kind is Kind.MODEL_CALL for e in store.load(session_id))",
    )
    at.run()
    [call] = [e for e in store.load(session_id) if e.kind is Kind.MODEL_CALL]
    assert [e.label for e in at.expander if e.label.startswith(f"#{call.seq} ")], "the call is listed"
    assert not at.code, "a closed call draws no prompt or answer"
    at.session_state[f"model_call_{call.seq}"] = True
    at.run()
    shown = [c.value for c in at.code]
    assert shown[-1] == json.dumps(call.payload.output, indent=2, ensure_ascii=False), "the answer, once open"


def test_the_exports_of_a_session_that_moved_while_it_stood_still_reach_its_newest_event(db: str) -> None:
    """Issue 12, defect 3: files built when the exports were opened must not stay behind the log once
    the session moved (a report downloaded after the run ended said "running"). A page whose session
    is not running is drawn only on a change, so each such drawing builds them again."""
    from ui.context import console

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = app()
    at.session_state["exports"] = True  # the expander opened
    at.run()
    assert [b.label for b in at.button if b.label.startswith("Refresh: ")] == ["Refresh: the files reach event 1"]
    queue_command(store, session_id, {"kind": "budget", "max_cost_usd": 3.0})
    console().client.restart(session_id)
    wait_until(
        lambda: load_state(store, session_id).config.max_cost_usd == 3.0,
        "load_state(store, session_id).config.max_cost_usd == 3.0",
    )
    at.run()
    seq = load_state(store, session_id).seq
    assert [b.label for b in at.button if b.label.startswith("Refresh: ")] == [f"Refresh: the files reach event {seq}"]


def test_a_link_to_a_session_the_store_does_not_have_says_so(db: str) -> None:
    """Issue 12, defect 1: a stale shared link opened the newest session as if it were the one linked."""
    store = open_store(db)
    older = create_session(store, "an older task", BROWNIE, start_url="dry://start", paused=True)
    newest = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    at = console_app("gone0000")
    at.run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == [
        "The link names session gone0000, which this store does not have; this is the newest."
    ]
    assert at.query_params["session"] == newest
    [picker] = [box for box in at.selectbox if (box.key or "").startswith("session_pick_")]
    picker.select(older)
    at.run()
    assert not at.warning, "the operator opened another session: the note has done its work"


def test_a_database_the_console_cannot_reach_is_one_sentence_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, on_loopback: None
) -> None:
    import streamlit as st

    monkeypatch.setenv("ANDOR_DB", "postgresql://andor:secretpw@127.0.0.1:1/nodb")
    monkeypatch.setenv("ANDOR_SHOP", "0")
    st.cache_resource.clear()
    try:
        at = console_app()
        at.run()
        assert not at.exception, at.exception
        [error] = [e.value for e in at.error]
        assert error.startswith("cannot open the session database postgresql+psycopg://andor:***@127.0.0.1:1/nodb")
        assert "secretpw" not in error and error.endswith("the page tries again when it is next drawn.")
    finally:
        st.cache_resource.clear()


def test_green_means_checked_a_succeeded_run_is_otherwise_only_answered() -> None:
    """Issue 27: two runs whose answer check failed read "✓ succeeded". The planner's "succeeded" is a
    belief; only a passed check earns the ✓."""
    assert outcome("succeeded", Cause.ANSWER_CHECKED.value) == ("answer checked", ":material/check_circle:")
    assert outcome("succeeded", Cause.ANSWER_MISSED.value) == ("answer check not met", ":material/rule:")
    for cause in (Cause.FINISHED.value, None, "a cause of a later version"):
        assert outcome("succeeded", cause) == ("answered, not checked", ":material/help:")
    assert outcome("awaiting_approval", Cause.APPROVAL.value) == ("awaiting approval", ":material/front_hand:")
