"""Node breakpoints: "break here" on one node pauses the run as it is about to enter that node, once
per entry, until the operator removes it; refusals are one sentence; the command line spells it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, MECHANICS, new_state

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import Edit, NodeBreakpoint, Prune, Reopen, Resume, SetBreakpoints, Step, apply_command
from planner.config import Breakpoint
from planner.engine import Engine
from planner.events import Cause, Event, Kind
from planner.frames import Frame, next_position
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, SessionState, apply
from planner.tree import Status
from sessions.cli import main
from sessions.client.attention import Need, needing_attention
from sessions.client.creation import create_session
from sessions.store.sql import open_store
from ui.tree_chart import build_chart, legend_markdown

AT_03 = "breakpoint: at 0.3 (set by operator)"


def _started(script: Script, steps: int) -> tuple[SessionState, Engine, list[Event]]:
    state, log = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    for _ in range(steps):
        log += engine.step()
    return state, engine, log


def _run(engine: Engine, log: list[Event]) -> None:
    """Step until the engine stops by itself (paused, waiting or finished)."""
    for _ in range(200):
        events = engine.step()
        if not events:
            return
        log += events


def _send(state: SessionState, log: list[Event], command: object) -> tuple[str, str | None]:
    events = apply_command(state, command)  # type: ignore[arg-type]
    log += events
    return events[-1].kind.value, getattr(events[-1].payload, "reason", None)


def _pauses(log: list[Event], reason: str) -> int:
    return sum(1 for e in log if e.kind is Kind.SESSION_STATUS and e.payload.reason == reason)


def test_the_run_pauses_as_it_is_about_to_enter_the_node_and_passes_it_once(brownie: Script) -> None:
    state, engine, log = _started(brownie, 1)  # the root expanded: 0.1, 0.2, 0.3
    assert _send(state, log, NodeBreakpoint(node="0.3")) == ("command_applied", None)
    _run(engine, log)
    assert (state.status, state.reason) == (RunStatus.PAUSED, AT_03)
    position = next_position(state.tree)
    assert position is not None and (position.node.id, position.frame) == ("0.3", Frame.ENTERING)
    assert state.tree["0.3"].status is Status.UNVISITED, "paused before 0.3's own step"
    assert state.tree["0.2"].status is Status.SUCCESS, "the nodes before it ran"
    _send(state, log, Resume())
    _run(engine, log)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert _pauses(log, AT_03) == 1, "0.3 expands into an action, then runs it: one entry, one pause"
    assert state.config.node_breakpoints == {"0.3"}, "the breakpoint stays set until removed"


def test_the_pause_is_a_breakpoints_and_the_inbox_files_it_so(brownie: Script, tmp_path: Path) -> None:
    """A pause at a node breakpoint carries the breakpoint cause, as one before an action does: with none,
    the attention inbox filed it as a session paused by a problem."""
    state, engine, log = _started(brownie, 1)
    _send(state, log, NodeBreakpoint(node="0.3"))
    _run(engine, log)
    assert (state.reason, state.cause) == (AT_03, Cause.BREAKPOINT)
    store = open_store(str(tmp_path / "s.db"))
    create_session(store, BROWNIE_TASK, "demo", start_url=DRY_START, config=MECHANICS, session_id="bp", paused=True)
    listed = replace(store.session("bp"), status=state.status.value, cause=state.cause.value, reason=state.reason)
    assert [(item.need, item.why) for item in needing_attention([listed])] == [(Need.BREAKPOINT, AT_03)]


def test_a_node_entered_again_after_a_reset_pauses_again(brownie: Script) -> None:
    state, engine, log = _started(brownie, 1)
    _send(state, log, NodeBreakpoint(node="0.1"))
    _run(engine, log)
    assert state.reason == "breakpoint: at 0.1 (set by operator)"
    _send(state, log, Step())
    _run(engine, log)
    assert state.reason == "paused after one step" and state.tree["0.1"].action is not None, "0.1 is an action now"
    _send(state, log, Edit(node="0.1", description="Search for brownies", reexpand=True))
    _send(state, log, Resume())
    _run(engine, log)
    assert state.reason == "breakpoint: at 0.1 (set by operator)", "0.1 is entered afresh after its reset"
    assert _pauses(log, state.reason) == 2


def test_a_breakpoint_set_on_the_next_action_holds_it_once_with_before_action_too(brownie: Script) -> None:
    state, engine, log = _started(brownie, 2)  # 0.1 expanded as an action, about to run
    _send(state, log, SetBreakpoints(breakpoints=[Breakpoint.BEFORE_ACTION]))
    _send(state, log, NodeBreakpoint(node="0.1"))
    _run(engine, log)
    assert state.reason == "breakpoint: at 0.1 (set by operator)"
    _send(state, log, Resume())
    engine.step()
    assert state.tree["0.1"].status is Status.SUCCESS, "resumed past both breakpoints of the same entry"


def test_removing_the_breakpoint_lets_the_run_go_on(brownie: Script) -> None:
    state, engine, log = _started(brownie, 1)
    _send(state, log, NodeBreakpoint(node="0.3"))
    assert _send(state, log, NodeBreakpoint(node="0.3", off=True)) == ("command_applied", None)
    assert state.config.node_breakpoints == frozenset()
    _run(engine, log)
    assert state.status is RunStatus.SUCCEEDED and _pauses(log, AT_03) == 0


def test_refusals_are_one_sentence_each(brownie: Script) -> None:
    state, engine, log = _started(brownie, 1)
    assert _send(state, log, NodeBreakpoint(node="9.9"))[1] == "there is no node '9.9' in this session"
    assert _send(state, log, NodeBreakpoint(node="0.3", off=True))[1] == "0.3 has no breakpoint to remove"
    _send(state, log, NodeBreakpoint(node="0.3"))
    assert _send(state, log, NodeBreakpoint(node="0.3"))[1] == "0.3 already has a breakpoint"
    _send(state, log, Prune(node="0.2", reason="not needed"))
    assert _send(state, log, NodeBreakpoint(node="0.2"))[1] == "0.2 has already finished (PRUNED); reopen it first"
    _send(state, log, Reopen(node="0.2"))
    assert _send(state, log, NodeBreakpoint(node="0.2"))[0] == "command_applied", "a reopened node can get one"
    for _ in range(2):
        engine.step()
    assert state.tree["0.1"].status is Status.SUCCESS
    refusal = "0.1 has already succeeded; set the breakpoint on a node still to come"
    assert _send(state, log, NodeBreakpoint(node="0.1"))[1] == refusal
    assert _send(state, log, NodeBreakpoint(node="0.3", off=True))[0] == "command_applied"


def test_a_fold_of_the_log_gives_the_same_config_and_pass(brownie: Script) -> None:
    state, engine, log = _started(brownie, 1)
    _send(state, log, NodeBreakpoint(node="0.3"))
    _send(state, log, NodeBreakpoint(node="0.2"))
    _run(engine, log)
    assert state.reason == "breakpoint: at 0.2 (set by operator)"
    folded = SessionState()
    for event in log:
        stored = json.loads(json.dumps(event.data))  # as a store keeps it
        apply(folded, Event.from_data(event.seq, event.kind.value, event.node_id, stored, event.version, event.at))
    assert folded.config == state.config and folded.config.node_breakpoints == {"0.2", "0.3"}
    assert folded.breakpoint_passed == state.breakpoint_passed == "0.2"
    changes = [e.payload.changes for e in log if e.kind is Kind.CONFIG_CHANGED]
    assert changes == [{"node_breakpoints": ["0.3"]}, {"node_breakpoints": ["0.2", "0.3"]}], "sorted, whole set"


@pytest.mark.parametrize(("flags", "off"), [((), False), (("--off",), True)])
def test_the_command_line_spells_it(tmp_path: Path, flags: tuple[str, ...], off: bool) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    create_session(store, BROWNIE_TASK, "demo", start_url=DRY_START, config=MECHANICS, session_id="bp", paused=True)
    assert main(["command", "bp", "breakpoint", "--node", "0.3", *flags, "--operator", "ana", "--db", db]) == 0
    queued = [q.payload for q in store.pending("bp")]
    assert len(queued) == 1 and {k: v for k, v in queued[0].items() if k not in ("command_id", "provenance")} == {
        "kind": "breakpoint",
        "by": "ana",
        "node": "0.3",
        "off": off,
    }


def test_the_tree_marks_a_node_with_a_breakpoint_and_its_tooltip_says_so(brownie: Script) -> None:
    state, _, log = _started(brownie, 1)
    _send(state, log, NodeBreakpoint(node="0.3"))
    items = {item["id"]: item for item in build_chart(state).option["series"][0]["data"]}
    assert items["0.3"]["label"]["formatter"].startswith("⏸ ")
    assert "breakpoint set" in items["0.3"]["tooltip"]["formatter"]
    others = [item for node_id, item in items.items() if node_id != "0.3"]
    assert not any("⏸" in item["label"]["formatter"] or "breakpoint" in item["tooltip"]["formatter"] for item in others)
    assert "⏸ = your breakpoint" in legend_markdown()
