"""The console's views headless (streamlit.testing AppTest), on dry sessions: what the end-to-end tests
of the operator's words, the timeline, co-planning and counterfactual re-asks checked in Chromium and
a browser is not needed for. A refused form says why in one sentence and sends nothing; a failure
breakpoint set from the form stops the run with the failure's URL quoted as it is; a pruned action
that ran says to reopen it first; a bundled task's answer is checked beside the status; the timeline
draws the past plan with what changes later marked, and a fork opens as itself, compared with its
parent; the plan review table's edits make one plan command the run follows; a re-ask shows the new
plan beside the original and Adopt applies it with its provenance."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import BROWNIE_TASK, MECHANICS, SCRIPTS, load
from console_helpers import (
    TASKS,
    approval_box,
    console_app,
    expanded,
    keyed,
    markdown_text,
    node_picker,
    redraw_until,
    show_tab,
)
from streamlit.testing.v1 import AppTest
from test_tree_chart import NARROWEST, drawn_at, in_view
from waiting import wait_until

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import Breakpoint, EngineConfig
from planner.events import CommandApplied, Kind, ModelCalled
from planner.frames import active_path
from planner.models.scripted import Script, ScriptedModel
from planner.questions import Question
from planner.state import RunStatus, replay
from planner.status import REMOVED
from planner.tree import NodeType, Origin, Status
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.client.creation import fork_session as create_fork
from sessions.client.markdown import md
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from sessions.worker.runner import Runner
from ui.views.coplan import ORDER_STEP

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"
PYDANTIC = ("List should have", "validation error", "Input should be", "after validation", "Value error", "[type=")
"""pydantic's own wording, which no operator should ever read."""


@pytest.fixture
def db(app_db: str) -> str:
    return app_db


# -- helpers (copied from tests/test_console_app.py, where their twins live) ----------------------------


def alerts(at: AppTest) -> list[str]:
    return [a.value for a in (*at.error, *at.warning, *at.info, *at.success)]


def run_dry(store: EventStore, session_id: str, script: Script) -> None:
    """Run the session in this process on the dry environment until it stops running."""
    backend = Backend(ScriptedModel(script), DryEnvironment(script.fail_actions))
    Runner(store, session_id, backend=backend).run(on_idle=lambda state: False)


def chart_option(at: AppTest, alt: str | re.Pattern[str]) -> dict[str, Any]:
    """The ECharts option of the one chart named `alt`."""
    charts = [
        json.loads(e.proto.spec)
        for e in at.get("echarts_chart")
        if (e.proto.alt == alt if isinstance(alt, str) else alt.match(e.proto.alt))
    ]
    assert len(charts) == 1, f"one chart {alt!r}: {[e.proto.alt for e in at.get('echarts_chart')]}"
    option: dict[str, Any] = charts[0]
    return option


def chart_labels(at: AppTest, alt: str | re.Pattern[str]) -> dict[str, str]:
    """Node id -> the first line of its label (its marks, type and id) in the chart named `alt`."""
    return {
        item["id"]: item["label"]["formatter"].split("\n")[0] for item in chart_option(at, alt)["series"][0]["data"]
    }


def session_picker(at: AppTest) -> Any:
    [picker] = [box for box in at.sidebar.selectbox if (box.key or "").startswith("session_pick_")]
    return picker


# -- the operator's words (was tests/test_console_words_e2e.py) -----------------------------------------


def test_forms_that_cannot_make_a_command_say_why_in_one_sentence_and_send_nothing(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url=DRY_START, config=MECHANICS, paused=True)
    at = console_app(session_id)
    at.run()
    assert not at.exception, at.exception
    assert node_picker(at).value == "0"

    keyed(at.text_area, "inject_goals").input("\n   \n\n")
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert "Write at least one sub-goal, one per line, before pressing Inject." in [e.value for e in at.error], (
        "blank lines are no sub-goal"
    )
    keyed(at.text_area, "inject_goals").input("\n".join(f"check shop {i}" for i in range(51)))
    at.form_submit_button(key="inject_submit").click()
    at.run()
    assert "Sub-goals: too many (51); at most 50" in [e.value for e in at.error], "51 sub-goals, in the form's words"
    said = [text for text in alerts(at) if any(phrase in text for phrase in PYDANTIC)]
    assert not said, f"pydantic's wording reached the operator: {said}"

    # The cap's field has its range, so the browser refuses -5 itself ("Please enter a value between 0.00
    # and 10000.00") and the form never sends it.
    [cap] = [n for n in at.number_input if "spent so far" in n.label]
    assert (cap.proto.has_min, cap.proto.min, cap.proto.has_max, cap.proto.max) == (True, 0.0, True, 10_000.0)

    state = load_state(store, session_id)
    assert state.config.max_cost_usd is None and not state.tree["0"].children, "nothing refused was applied"
    assert store.pending(session_id) == [], "the refusals were the forms' own: nothing was queued"
    assert not [e for e in store.load(session_id) if e.kind is Kind.COMMAND_REJECTED]


FILTER_URL = "http://shop.test/category/headphones?min_price=&max_price=100&min_rating="
"""A URL full of `_` and `&`, as the demo shop's broken price filter has it."""


def filtering_script(tmp_path: Path) -> Path:
    """The brownie task whose second step opens FILTER_URL, which fails (tests/test_console_words_e2e.py
    shows the failure in Chromium)."""
    goto = f"goto [{FILTER_URL}]"
    script = {
        "nodes": {
            BROWNIE_TASK: {
                "type": "AND",
                "children": ["Search for vegan chocolate brownie", "Filter by price", "Note"],
            },
            "Search for vegan chocolate brownie": {
                "type": "ACTION",
                "action": "type [12] [vegan chocolate brownie] [1]",
            },
            "Filter by price": {"type": "ACTION", "action": goto},
            "Note": {"type": "ACTION", "action": "note [Fudgy vegan brownies, 4.8 stars]"},
        },
        "fail_actions": [goto],
        "final_answer": "Fudgy vegan brownies (4.8 stars)",
    }
    path = tmp_path / "filtering.json"
    path.write_text(json.dumps(script))
    return path


def test_a_failure_breakpoint_from_the_form_quotes_the_url_and_a_pruned_action_says_reopen_it_first(
    db: str, tmp_path: Path
) -> None:
    store = open_store(db)
    config = EngineConfig(constraints=False, repair=False)
    model = f"script:{filtering_script(tmp_path)}"
    session_id = create_session(store, BROWNIE_TASK, model, start_url=DRY_START, config=config, paused=True)
    at = console_app(session_id)
    at.run()
    keyed(at.multiselect, "bp_choice").select(Breakpoint.ON_FAILURE)
    at.form_submit_button(key="bp_submit").click()
    redraw_until(at, lambda at: "breakpoints applied" in alerts(at), '"breakpoints applied"')
    assert load_state(store, session_id).config.breakpoints == {Breakpoint.ON_FAILURE}

    at.button(key="ctl_resume").click()
    at.run()
    wait_until(
        lambda: (
            (state := load_state(store, session_id)).status is RunStatus.PAUSED
            and (state.reason or "").startswith("breakpoint: 0.2 failed")
        ),
        "the pause at the failed price filter",
    )
    assert FILTER_URL in (load_state(store, session_id).reason or "")
    at.run()
    # The status line quotes the URL as it is: no escape before `_` or `&` (a backslash shows when it
    # precedes no markup), and a word joiner after `http:` so that no renderer makes it a link. The
    # browser side of this is tests/test_console_words_e2e.py.
    [status] = [m.value for m in at.markdown if "breakpoint: 0.2 failed" in m.value]
    assert FILTER_URL.replace("http:", "http:\u2060") in status, status

    # Pruning the action that already ran: the engine's warning under the form, then no description form
    # but one line saying to reopen it first, with Reopen right there.
    node_picker(at).select("0.1")
    at.run()
    keyed(at.text_input, "prune_reason").input("the search is not part of the answer")
    at.form_submit_button(key="prune_submit").click()
    warned = md("prune applied — already ran in the browser: 0.1 (")
    redraw_until(at, lambda at: any(w.value.startswith(warned) for w in at.warning), "the already-ran warning")
    [warning] = [w.value for w in at.warning if w.value.startswith(warned)]
    assert warning.endswith("does not undo it"), warning
    assert load_state(store, session_id).tree["0.1"].status is Status.PRUNED
    at.run()
    assert md("0.1 is finished (PRUNED): reopen it first (Reopen, above) to edit its description.") in [
        c.value for c in at.caption
    ]
    assert at.button(key="reopen_btn").label == "Reopen 0.1"
    assert not [t for t in at.text_area if (t.key or "").startswith("edit_description_")], "no description form"


def test_a_bundled_tasks_answer_that_names_everything_is_met_beside_the_status(db: str) -> None:
    task = TASKS["keyboard-brand-backpack"]
    script = Script.model_validate(
        {
            "nodes": {task.task: {"type": "AND", "children": ["a"]}, "a": {"type": "ACTION", "action": "click [1]"}},
            "final_answer": "Northwind is the top brand; its Northwind Metro 18L costs $54.99",
        }
    )
    store = open_store(db)
    session_id = create_session(store, task.task, "demo", config=EngineConfig(constraints=False))
    run_dry(store, session_id, script)
    at = console_app(session_id)
    at.run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success if "Answer check" in s.value] == [
        "Answer check: met (it names every string the task's answer must contain)."
    ]
    assert not [w.value for w in at.warning if "Answer check" in w.value]


# -- the timeline and forks (was the first test of tests/test_console_timeline_e2e.py) ------------------


def test_scrubbing_back_draws_the_past_plan_marked_and_a_fork_opens_as_itself_beside_its_parent(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    run_dry(store, session_id, load("brownie.json"))
    final = load_state(store, session_id)
    assert final.status is RunStatus.SUCCEEDED
    expanded = next(e.seq for e in store.load(session_id) if e.kind is Kind.NODE_EXPANDED and e.node_id == "0")
    children = final.tree["0"].children

    at = console_app(session_id)
    at.run()
    show_tab(at, "Timeline")
    event = at.number_input(key=f"timeline_event_{session_id}")
    assert event.value is None and event.placeholder == f"{final.seq} (live)", "it opens at the live end"
    event.set_value(expanded)
    at.run()
    assert not at.exception, at.exception
    assert any(m.value.startswith(f"At event {expanded}: ") for m in at.markdown)
    # The past plan is a chart of its own: the root's sub-goals as planned, each marked Δ since every
    # one of them changes afterwards; the live chart marks nothing.
    past = chart_labels(at, f"Plan tree at event {expanded}")
    assert set(children) <= set(past), past
    assert all(past[child].startswith("Δ ") for child in children), past
    live = chart_labels(at, re.compile(r"^Plan tree of \d+ nodes"))
    assert past != live and not any("Δ" in label for label in live.values()), live
    assert any(re.match(rf"Since event {expanded}: \d+ nodes changed", c.value) for c in at.caption)

    # Fork there: the fork opens as itself, named as a fork of its parent, paused.
    at.button(key="fork_btn").click().run()
    assert not at.exception, at.exception
    [fork_id] = [info.id for info in store.sessions() if info.parent_id]
    assert at.query_params["session"] in (fork_id, [fork_id]), "the URL names the fork"
    picker = session_picker(at)
    assert picker.value == fork_id
    assert picker.options[picker.index].endswith(f" · {fork_id} · fork of {session_id} at event {expanded}")
    assert f"### {md(BROWNIE_TASK)}" in markdown_text(at), "its heading"
    fork = load_state(store, fork_id)
    assert fork.status is RunStatus.PAUSED and fork.forked_from == (session_id, expanded)

    # The fork's timeline compares it with its parent: both plans drawn side by side, differences marked.
    show_tab(at, "Timeline")
    assert any(m.value.startswith(f"**Compared with {md(session_id)}**") for m in at.markdown)
    ours = chart_labels(at, "Plan tree of this fork")
    theirs = chart_labels(at, f"Plan tree of the parent, {session_id}")
    for child in children:
        assert theirs[child].startswith("Δ ") and ours[child].startswith("Δ "), (child, ours, theirs)
    assert any(re.match(r"Plan of the parent, .*: \d+ of its nodes differ", c.value) for c in at.caption)


def test_the_timeline_steps_one_event_at_a_time_and_jumps_to_a_typed_one(db: str) -> None:
    """Issue 27: the slider alone had neither a box to type an event in nor a step button, and each arrow
    key press redrew the page. The arrows (◀ / ▶) move one event, the box jumps to the event typed, the
    slider follows both, and at the live end the timeline follows the run."""
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    run_dry(store, session_id, load("brownie.json"))
    last = load_state(store, session_id).seq
    at = console_app(session_id)
    at.run()
    show_tab(at, "Timeline")

    def shown() -> tuple[int, int | None, int]:
        [line] = [m.value for m in at.markdown if m.value.startswith("At event ")]
        seq = int(line.split(":")[0].removeprefix("At event "))
        return (
            seq,
            at.number_input(key=f"timeline_event_{session_id}").value,
            at.slider(key=f"timeline_{session_id}").value,
        )

    # At the live end, which moves at every step of a running session, the box is empty (a value set
    # from the script would replace what the operator is typing) and says the end in its placeholder.
    assert shown() == (last, None, last) and at.button(key="timeline_on").disabled, "at the live end, nothing after"
    at.number_input(key=f"timeline_event_{session_id}").set_value(7).run()
    assert shown() == (7, 7, 7), "the event typed"
    assert chart_labels(at, "Plan tree at event 7"), "the plan as it was then"
    at.button(key="timeline_on").click().run()
    assert shown() == (8, 8, 8), "one event on"
    for _ in range(3):
        at.button(key="timeline_back").click().run()
    assert shown() == (5, 5, 5), "three events back, one at a time"
    at.slider(key=f"timeline_{session_id}").set_value(2).run()
    assert shown() == (2, 2, 2), "the slider, for long jumps"
    at.button(key="timeline_back").click().run()
    assert shown() == (1, 1, 1) and at.button(key="timeline_back").disabled, "no event before the first"
    at.number_input(key=f"timeline_event_{session_id}").set_value(last).run()
    assert shown() == (last, None, last), "back at the live end"
    assert any(c.value.startswith("This is the live plan") for c in at.caption)
    assert not at.exception, at.exception


def _wide_script(tmp_path: Path) -> str:
    """A task of twelve sub-goals of four actions each: a plan far wider than any chart."""
    task = "Find the cheapest printer of every brand"
    brands = [f"Check brand {i} printers" for i in range(1, 13)]
    nodes: dict[str, Any] = {task: {"type": "AND", "children": brands}}
    for brand in brands:
        steps = [f"{brand}: step {j}" for j in range(1, 5)]
        nodes[brand] = {"type": "AND", "children": steps}
        nodes.update({step: {"type": "ACTION", "action": f"note [{step}]"} for step in steps})
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"nodes": nodes, "final_answer": "done"}))
    return task


PAST = 420
"""Pixels: the height of the timeline's past plan and of each of a fork's compared plans."""


def test_the_timeline_and_a_forks_comparison_follow_the_agent_until_the_operator_selects_a_node(
    db: str, tmp_path: Path
) -> None:
    """Issue 27: a fork's compared plans and the timeline's past plan did not follow the agent: zoomed in
    around it, the way down to it left the chart (a fork's root sat above its chart). Like the live tree,
    they show the agent's node and the way down to it, until the operator selects a node."""
    store = open_store(db)
    task = _wide_script(tmp_path)
    session_id = create_session(
        store, task, f"script:{tmp_path / 'wide.json'}", start_url=DRY_START, config=EngineConfig(constraints=False)
    )
    run_dry(store, session_id, Script.model_validate_json((tmp_path / "wide.json").read_text()))
    events = store.load(session_id)
    seq = next(e.seq for e in events if e.kind is Kind.STEP and e.node_id == "0.7.3")
    then = [node.id for node, _ in active_path(replay(events[:seq]).tree)]
    assert then == ["0", "0.7", "0.7.3"], then

    def shows(option: dict[str, Any], node_id: str, width: float = NARROWEST) -> bool:
        return in_view(option, node_id, width, PAST)

    fork_id = create_fork(store, session_id, seq)
    at = console_app(fork_id)
    show_tab(at, "Timeline")
    ours = chart_option(at, "Plan tree of this fork")
    assert shows(ours, "0.7.3"), drawn_at(ours, NARROWEST, PAST)["0.7.3"]
    assert shows(ours, "0"), f"the fork's root is in view: {drawn_at(ours, NARROWEST, PAST)['0']}"

    node_picker(at).select("0.2.1").run()
    [follow] = [t for t in at.toggle if t.label == "Follow agent"]
    assert not follow.value, "a pick turns following off"
    ours = chart_option(at, "Plan tree of this fork")
    assert shows(ours, "0.2.1") and not shows(ours, "0.7.3", 1100), "the chart shows the pick instead"
    follow.set_value(True).run()
    assert shows(chart_option(at, "Plan tree of this fork"), "0.7.3"), "following again"

    at = console_app(session_id)
    show_tab(at, "Timeline")
    at.number_input(key=f"timeline_event_{session_id}").set_value(seq).run()
    past = chart_option(at, f"Plan tree at event {seq}")
    drawn = drawn_at(past, NARROWEST, PAST)
    assert shows(past, "0.7.3"), drawn["0.7.3"]
    assert all(0 <= drawn[n][0] <= NARROWEST and 0 <= drawn[n][1] <= PAST for n in then), {n: drawn[n] for n in then}
    assert not at.exception, at.exception


# -- approvals (the logic under tests/test_console_timeline_e2e.py, which keeps the browser's side) -----


def test_a_second_approval_box_never_shows_the_first_ones_answer(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The press's answer belongs to the request it answered. Here the second request comes at once (the
    browser test's comes after several steps of the demo shop, maybe after a plain "applied" has faded)."""
    monkeypatch.setenv("ANDOR_RUNNER", "workers")  # the guarded runner of this test is the session's only one

    def guard(action: str, target: object) -> str | None:
        return "typing and clicks need approval" if action.startswith(("type", "click")) else None

    def run_guarded() -> None:
        backend = Backend(ScriptedModel(load("brownie.json")), DryEnvironment(), guard)
        Runner(store, session_id, backend=backend).run(on_idle=lambda state: False)

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url=DRY_START, config=MECHANICS)
    run_guarded()
    first = load_state(store, session_id).approval
    assert first is not None and first.node_id == "0.1"
    at = approval_box(session_id)
    at.form_submit_button(key="approve_submit").click()
    at.run()
    assert not at.exception, at.exception
    assert "approval queued; it applies at the next step boundary" in alerts(at), "the press's answer, under its box"

    run_guarded()  # the approval applied, on to the next guarded action
    second = load_state(store, session_id).approval
    assert second is not None and second.node_id not in ("", first.node_id), second
    header = f"**:material/front_hand: Approval required** at {md(second.node_id)}: "
    for redraw in range(3):
        at.run()
        assert not at.exception, at.exception
        assert any(m.value.startswith(header) for m in at.markdown), "the second approval box"
        answers = [text for text in alerts(at) if re.search(r"approval (applied|queued)", text)]
        assert answers == [], f"the first approval's answer shows under the second box (redraw {redraw + 1})"


# -- co-planning (was tests/test_console_coplan_e2e.py) -------------------------------------------------


def _edit_table(at: AppTest, edits: dict[str, Any]) -> None:
    """What the browser sends once the operator has edited the plan review's table: the page's widget
    values with the table's edits (AppTest has no way to type into a data editor)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    [table] = [d for d in at.dataframe if (d.proto.id or "") and "plan_table_" in d.proto.id]
    states = at._tree.get_widget_states()
    edited = WidgetState(id=table.proto.id, string_value=json.dumps(edits))
    kept = [state for state in states.widgets if state.id != edited.id]
    del states.widgets[:]
    states.widgets.extend([*kept, edited])
    at._run(states)
    assert not at.exception, at.exception


def test_the_first_plan_edited_in_the_review_table_is_one_edit_the_run_follows(db: str) -> None:
    store = open_store(db)
    review = MECHANICS.model_copy(update={"review_first_plan": True})
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url=DRY_START, config=review)
    run_dry(store, session_id, load("brownie.json"))
    state = load_state(store, session_id)
    assert (state.status, state.reason) == (RunStatus.PAUSED, "plan review: 0 expanded as AND")
    at = console_app(session_id)
    at.run()
    assert any(m.value.startswith("**Plan review**: 0 was expanded as AND") for m in at.markdown)
    # Issue 27: a typed "0.1" became 0 (the column's step), a new row's id read "None", and about 35
    # characters of a sub-goal showed. What the browser's grid is told:
    [table] = [d for d in at.dataframe if "plan_table_" in (d.proto.id or "")]
    columns = json.loads(table.proto.columns)
    assert columns["order"]["type_config"]["step"] == ORDER_STEP <= 0.1
    assert columns["id"]["default"] == "" and columns["description"]["width"] >= 360

    # Delete row 2 (0.2, the selection), add a row, and move it up by its order number.
    added = {"order": 1.5, "description": "Open recipe A (4.8 stars)"}
    _edit_table(at, {"edited_rows": {}, "added_rows": [added], "deleted_rows": [1]})
    at.button(key="plan_start").click()
    at.run()
    assert not at.exception, at.exception

    def planned() -> list[str]:
        tree = load_state(store, session_id).tree
        return [c for c in tree["0"].children if tree[c].status not in REMOVED]

    wait_until(lambda: planned() == ["0.1", "0.4", "0.3"], f"the edited plan in its new order (now {planned()})")
    state = load_state(store, session_id)
    assert (state.tree["0.2"].status, state.tree["0.2"].reason) == (Status.PRUNED, "operator: removed in plan review")
    assert (state.tree["0.4"].origin, state.tree["0.4"].description) == (Origin.OPERATOR, added["description"])
    assert [e.payload.command["kind"] for e in state.edits] == ["plan"], "one edit on the undo stack"  # type: ignore[attr-defined]
    wait_until(lambda: load_state(store, session_id).finished, "the run to finish")
    redraw_until(at, lambda at: not any("Plan review" in m.value for m in at.markdown), "the review box gone")
    state = load_state(store, session_id)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert [state.tree[c].status for c in ("0.1", "0.4", "0.3")] == [Status.SUCCESS] * 3
    assert state.tree["0.2"].type is NodeType.UNKNOWN, "the deleted row never ran"


# -- counterfactual re-ask (was tests/test_console_counterfactual_e2e.py) -------------------------------

STEPS = ["open the Keyboards category", "sort by rating", "note the brand of the top keyboard"]


def test_the_roots_expansion_reasked_shows_both_plans_and_adopt_applies_it_with_its_provenance(db: str) -> None:
    store = open_store(db)
    review = MECHANICS.model_copy(update={"review_first_plan": True})
    task = TASKS["keyboard-brand-backpack"].task
    session_id = create_session(store, task, "demo", start_url=DRY_START, config=review)
    Runner(store, session_id).run(on_idle=lambda state: False)
    assert load_state(store, session_id).reason == "plan review: 0 expanded as AND"
    [call] = [
        e.seq
        for e in store.load(session_id)
        if isinstance(e.payload, ModelCalled) and e.payload.question is Question.EXPAND and e.node_id == "0"
    ]
    at = console_app(session_id)
    at.run()
    assert node_picker(at).value == "0"
    keyed(at.text_area, "reask_instruction").input(", then ".join(STEPS))
    at.button(key="reask_submit").click()
    at.run()
    assert not at.exception, at.exception
    assert any(c.value.startswith(f"Call #{call} asked again") for c in at.caption)
    plans = [c for c in at.code if c.value.startswith("0 AND · ")]
    assert all(c.proto.wrap_lines for c in plans), "each plan wraps its lines (issue 27: ~20 characters wide)"
    original, new = (c.value for c in plans)
    assert "  − 0.1 search for backpacks from the top keyboard brand" in original.splitlines(), original
    assert f"  + {STEPS[0]}" in new.splitlines(), new
    last = load_state(store, session_id).seq
    assert last == store.session(session_id).last_seq, "the re-ask wrote nothing to the log"

    at.button(key="reask_adopt").click()
    redraw_until(at, lambda at: "plan applied" in alerts(at), '"plan applied" under the form')

    def open_children() -> list[str]:
        tree = load_state(store, session_id).tree
        return [child.description for child in tree.children(tree["0"]) if child.status is Status.UNVISITED]

    assert open_children() == STEPS, "the adopted plan under the root"
    [applied] = [e.payload for e in store.load(session_id) if isinstance(e.payload, CommandApplied)]
    assert applied.command["provenance"] == f"counterfactual of call #{call}"
    assert md(f"From the counterfactual of call #{call}") in [c.value for c in at.caption], (
        "the last edit says where from"
    )


LIVE = 560
"""Pixels: the height of the live tree's chart."""


def _live_chart(at: AppTest) -> dict[str, Any]:
    return chart_option(at, re.compile(r"^Plan tree of \d+ nodes"))


def test_the_tree_follows_the_agent_until_the_operator_selects_a_node(app_store: EventStore, tmp_path: Path) -> None:
    """Issue 27: a wide plan (20 steps) opens around the step the agent is about to take, not around
    the selected root; picking a node turns "Follow agent" off and shows the pick instead, and turning
    it on again brings the agent back."""
    steps = [f"note step {i}" for i in range(1, 21)]
    wide = {BROWNIE_TASK: {"type": "AND", "children": steps}} | {s: {"type": "ACTION", "action": s} for s in steps}
    script = tmp_path / "wide.json"
    script.write_text(json.dumps({"nodes": wide}))
    session_id, at = expanded(app_store, model=f"script:{script}")
    assert load_state(app_store, session_id).tree["0"].children[-1] == "0.20"

    chart = _live_chart(at)
    assert in_view(chart, "0.1", NARROWEST, LIVE) and not in_view(chart, "0.17", 1100, LIVE), "the agent's next step"
    [follow] = [t for t in at.toggle if t.label == "Follow agent"]
    assert follow.value

    node_picker(at).select("0.17")
    at.run()
    chart = _live_chart(at)
    assert in_view(chart, "0.17", NARROWEST, LIVE) and not in_view(chart, "0.1", 1100, LIVE), "the operator's pick"
    [follow] = [t for t in at.toggle if t.label == "Follow agent"]
    assert not follow.value, "a pick turns following off"

    follow.set_value(True)
    at.run()
    assert in_view(_live_chart(at), "0.1", NARROWEST, LIVE), "following again"


def test_an_answer_reads_answered_until_the_operator_accepts_it_from_the_task_and_answer_tab(
    app_store: EventStore,
) -> None:
    """Issue 27: a succeeded run without an answer check is the planner's belief, never a green ✓;
    the operator's Accept (with a reason) is recorded in the log and the status line says so."""
    script = Script.model_validate(load("brownie.json"))
    session_id = create_session(app_store, BROWNIE_TASK, BROWNIE, start_url=DRY_START)
    run_dry(app_store, session_id, script)
    assert load_state(app_store, session_id).status is RunStatus.SUCCEEDED
    at = console_app(session_id)
    show_tab(at, "Task & answer")
    assert ":material/help: answered, not checked**" in markdown_text(at)
    assert "**Final answer** · :material/help: answered, not checked" in markdown_text(at)

    keyed(at.text_input, "verdict_reason").input("checked the recipe page myself")
    at.form_submit_button(key="verdict_accept").click().run()
    assert not [a for a in alerts(at) if "ccepted" in a], "the line under the answer answers the press, no message"
    judged = load_state(app_store, session_id).answer_verdict
    assert judged is not None and judged.accepted and judged.reason == "checked the recipe page myself"
    redraw_until(at, lambda at: ":material/check_circle: answer accepted**" in markdown_text(at), "✓ accepted")
    assert any(c.value.startswith("Accepted by ") and "checked the recipe page myself" in c.value for c in at.caption)
