"""What the console's runner does after an operator's prune or rejection, and how a failure is shown, headless
(streamlit.testing AppTest) on dry scripted sessions: the console logic that tests/test_console_e2e.py used
to check through a real Chromium, which keeps only what a browser can show.
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import approval_box, console_app, expanded, keyed, node_picker, redraw_until, settled
from streamlit.testing.v1 import AppTest

from planner.browser.dry import DryEnvironment
from planner.config import EngineConfig
from planner.events import ActionExecuted, ApprovalGranted, Cause
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus
from planner.tree import NodeType, Status
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.worker.runner import Runner

BROWNIE_FAIL = f"script:{SCRIPTS / 'brownie_fail.json'}"


def executed(store: EventStore, session_id: str) -> list[str]:
    """The nodes whose action the environment ran, in order."""
    return [e.node_id or "" for e in store.load(session_id) if isinstance(e.payload, ActionExecuted)]


def status_box(at: AppTest) -> list[str]:
    """The session's status line when it is drawn as an error (red): a failed run."""
    return [e.value for e in at.error if e.value.startswith("**:material/cancel: failed** — ")]


def test_a_pending_step_pruned_from_the_console_never_runs_and_its_siblings_do(app_store: EventStore) -> None:
    """The prune form on a step not yet expanded, then Resume: the runner skips the step (never expanded,
    never run) with the operator's reason, and the later sibling still runs to a successful end."""
    store = app_store
    session_id, at = expanded(store)
    assert load_state(store, session_id).tree["0"].children == ["0.1", "0.2", "0.3"]
    node_picker(at).select("0.2")
    at.run()
    keyed(at.text_input, "prune_reason").input("choosing is not needed")
    at.form_submit_button(key="prune_submit").click().run()
    redraw_until(at, lambda _: any(s.value == "prune applied" for s in at.success), "the prune applied")
    at.button(key="ctl_resume").click().run()
    settled(at, lambda: load_state(store, session_id).finished, "the run to finish")

    state = load_state(store, session_id)
    assert state.status is RunStatus.SUCCEEDED, (state.status, state.reason)
    pruned = state.tree["0.2"]
    assert (pruned.status, pruned.reason) == (Status.PRUNED, "operator: choosing is not needed")
    assert pruned.type is NodeType.UNKNOWN and pruned.children == [], "a pruned step is never expanded"
    assert executed(store, session_id) == ["0.1", "0.3"], "only the steps left in the plan ran"
    assert state.tree["0.3"].status is Status.SUCCESS


GUARDED = Script.model_validate(
    {
        "nodes": {
            BROWNIE_TASK: {"type": "AND", "children": ["search", "add it to the cart", "note the total"]},
            "search": {"type": "ACTION", "action": "type [12] [brownie pan] [1]"},
            "add it to the cart": {"type": "ACTION", "action": "click [9]"},
            "note the total": {"type": "ACTION", "action": "note [total]"},
        },
        "final_answer": "the cart total",
    }
)


def _add_to_cart_is_guarded(action: str, target: object) -> str | None:
    return "element named 'Add to cart' matches 'add to cart'" if action == "click [9]" else None


def _held_click(store: EventStore, tmp_path: Path) -> str:
    """A dry session (no repair) run until its add-to-cart click [9] at 0.2 waits for approval."""
    script = tmp_path / "guarded.json"
    script.write_text(json.dumps(GUARDED.model_dump(mode="json")))
    config = EngineConfig(constraints=False, repair=False)
    session_id = create_session(store, BROWNIE_TASK, f"script:{script}", start_url="dry://start", config=config)
    backend = Backend(ScriptedModel(GUARDED), DryEnvironment(), _add_to_cart_is_guarded)
    Runner(store, session_id, backend=backend).run(on_idle=lambda state: False)
    held = load_state(store, session_id)
    assert held.status is RunStatus.AWAITING_APPROVAL and held.approval is not None
    assert (held.approval.node_id, held.approval.action) == ("0.2", "click [9]")
    return session_id


def test_a_rejection_with_nothing_left_pauses_the_run_for_a_changed_plan(app_store: EventStore, tmp_path: Path) -> None:
    """The approval box's "Reject and let the planner recover", with a reason, where the plan has no
    other way (no alternative, no repair): the held click never runs, the node fails with the
    operator's reason, and the run pauses saying so instead of ending failed (what a changed plan does
    then: `tests/test_commands.py`)."""
    store = app_store
    session_id = _held_click(store, tmp_path)

    at = approval_box(session_id)
    keyed(at.text_input, "approval_reason").input("no purchases in a demo")
    at.form_submit_button(key="reject_submit").click().run()
    settled(
        at, lambda: load_state(store, session_id).status is RunStatus.PAUSED, "the run to pause after the rejection"
    )

    state = load_state(store, session_id)
    assert (state.status, state.cause) == (RunStatus.PAUSED, Cause.NO_ALTERNATIVE), (state.status, state.reason)
    assert state.tree["0.2"].reason == "rejected by operator: no purchases in a demo", state.tree["0.2"]
    assert executed(store, session_id) == ["0.1"], "the rejected click never ran, nor anything after it"
    redraw_until(
        at,
        lambda _: any("nothing is left to try after the rejected action" in m.value for m in at.markdown),
        "the status line saying why the run paused",
    )
    assert not status_box(at), "a paused run is not drawn as failed"
    assert not any("Approval required" in m.value for m in at.markdown), "the approval box is gone"


def test_approve_refuses_while_the_action_field_shows_another_action(app_store: EventStore, tmp_path: Path) -> None:
    """Issue 27: after an edit was typed (or refused by the runner) the field showed click [9999] while
    Approve ran the held click [9]; now Approve says so and sends nothing, and with the held action
    put back it approves."""
    store = app_store
    session_id = _held_click(store, tmp_path)

    at = approval_box(session_id)
    keyed(at.text_input, "approval_action").input("click [9999]")
    at.form_submit_button(key="approve_submit").click().run()
    said = [e.value for e in at.error]
    assert any("The Action field holds click \\[9999\\], not the held action" in m for m in said), said
    assert approvals(store, session_id) == [] and store.pending(session_id) == [], "nothing was sent"
    assert load_state(store, session_id).status is RunStatus.AWAITING_APPROVAL

    keyed(at.text_input, "approval_action").input("click [9]")
    at.form_submit_button(key="approve_submit").click().run()
    settled(at, lambda: approvals(store, session_id) == ["click [9]"], "the held click approved as it was")


def approvals(store: EventStore, session_id: str) -> list[str]:
    """The actions the log says were approved."""
    return [e.payload.action for e in store.load(session_id) if isinstance(e.payload, ApprovalGranted)]


def chart_items(at: AppTest, nodes: int) -> dict[str, dict[str, Any]]:
    """The nodes the live chart of a session of `nodes` nodes draws, by id."""
    alt = f"Plan tree of {nodes} nodes"
    charts = [json.loads(e.proto.spec) for e in at.get("echarts_chart") if e.proto.alt == alt]
    assert len(charts) == 1, f"one chart {alt!r}: {[e.proto.alt for e in at.get('echarts_chart')]}"
    return {item["id"]: item for item in charts[0]["series"][0]["data"]}


def test_a_failed_action_the_engine_pruned_is_drawn_red_with_why_in_the_finished_runs_tree(
    app_store: EventStore,
) -> None:
    """Issue 12, defect 5: in a finished run's tree (finished branches folded, as the page draws it) each
    action that failed and was then pruned by the engine is still drawn, marked ✗ in red, with the
    failure in its tooltip, unlike a prune of the operator's."""
    from ui.context import console

    store = app_store
    session_id = create_session(store, BROWNIE_TASK, BROWNIE_FAIL, start_url="dry://start")
    console().client.restart(session_id)
    deadline = time.monotonic() + 30
    while not load_state(store, session_id).finished:
        assert time.monotonic() < deadline, "timed out waiting for the failing script's run to end"
        time.sleep(0.05)
    state = load_state(store, session_id)
    failed = sorted(state.failed)
    by_engine = [n for n in failed if state.tree[n].status is Status.PRUNED and state.tree[n].reason]
    assert by_engine, f"the failing script's actions fail and the engine prunes them: {failed}"

    at = console_app(session_id)
    at.run()
    assert not at.exception, at.exception
    items = chart_items(at, len(state.tree))
    for node_id in failed:
        assert node_id in items, f"the failure at {node_id} is folded away: {sorted(items)}"
        item = items[node_id]
        assert item["label"]["formatter"].split("\n")[0].startswith("✗ "), item["label"]
        assert item["itemStyle"]["color"] == "#CC3311", f"{node_id} is not drawn red: {item['itemStyle']}"
    for node_id in by_engine:
        tooltip = items[node_id]["tooltip"]["formatter"]
        assert "<b>failed</b>, then taken out of the plan" in tooltip, tooltip
        assert f"why it failed: {html.escape(state.tree[node_id].reason or '')[:40]}" in tooltip, tooltip
    assert not [i for n, i in items.items() if n not in failed and "✗" in i["label"]["formatter"].split("\n")[0]]
