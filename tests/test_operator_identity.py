"""Who did what: every command carries its operator (`by`), the runner records it with the command's
outcome, the nodes a command made or edited are that operator's, and the inspector, the reports,
the trace, the timeline, the command line and the simulated operator all say who."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import console_app, node_picker
from pydantic import ValidationError

from planner.commands import describe_command_error, parse_command
from planner.events import CommandApplied, CommandRejected, Event, Kind
from planner.state import RunStatus, replay
from sessions.cli import main
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.client.export import markdown_report, trace
from sessions.client.markdown import short
from sessions.client.report import html_report
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore, open_store
from sessions.worker.runner import Runner

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


def _apply_queued(store: EventStore, session_id: str) -> None:
    """Let a runner handle what is queued for a paused session, then leave it paused."""
    Runner(store, session_id).run(on_idle=lambda state: False)


def _signed_session(store: EventStore) -> str:
    """A paused session edited by three operators, with a refused command and one that cannot be read."""
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    queue_command(
        store, session_id, {"kind": "inject", "parent": "0", "node_type": "AND", "goals": ["find"], "by": "alice"}
    )
    queue_command(store, session_id, {"kind": "edit", "node": "0", "description": "find a brownie", "by": "bob"})
    queue_command(store, session_id, {"kind": "edit", "node": "0.1", "description": "search for it", "by": "carol"})
    queue_command(store, session_id, {"kind": "prune", "node": "0.9", "reason": "gone", "by": "dave"})
    store.enqueue(session_id, "unreadable", {"kind": "prune", "node": "0.1", "by": "erin"})  # no reason
    queue_command(store, session_id, {"kind": "prune", "node": "0.1", "reason": "not needed"})  # by no one known
    _apply_queued(store, session_id)
    return session_id


def test_a_command_names_its_operator_on_one_line_or_is_refused_in_one_sentence() -> None:
    assert parse_command({"kind": "pause", "by": "  alice@example.org "}).by == "alice@example.org"
    assert parse_command({"kind": "pause"}).by is None
    refusals = {}
    for bad in ["", "   ", "alice\nmallory", "alice\rbob", "tab\there", "x" * 201, 7]:
        with pytest.raises(ValidationError) as refused:
            parse_command({"kind": "pause", "by": bad})
        refusals[repr(bad)[:20]] = describe_command_error(refused.value)
    assert refusals["'alice\\nmallory'"] == "invalid pause command: operator: must be one line of printable text"
    assert (
        refusals["'   '"]
        == "invalid pause command: operator: cannot be blank; leave it out or give the operator's name"
    )
    assert all(r.startswith("invalid pause command: operator: ") for r in refusals.values()), refusals


def test_the_runner_records_who_sent_each_command_and_the_nodes_are_theirs(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite:///{tmp_path / 's.db'}")
    session_id = _signed_session(store)
    events = store.load(session_id)
    handled = [e.payload for e in events if isinstance(e.payload, CommandApplied | CommandRejected)]
    assert [(type(p).__name__, p.by) for p in handled] == [
        ("CommandApplied", "alice"),
        ("CommandApplied", "bob"),
        ("CommandApplied", "carol"),
        ("CommandRejected", "dave"),
        ("CommandRejected", "erin"),
        ("CommandApplied", None),
    ]
    state = load_state(store, session_id)
    assert state.status is RunStatus.PAUSED
    # 0.1 was made by alice; carol edited it, then a prune by no one known changed it again
    assert state.made_by == {"0.1": "alice"}
    assert state.edited_by == {"0": "bob"}, state.edited_by
    assert (replay(events).made_by, replay(events).edited_by) == (state.made_by, state.edited_by)

    markdown = markdown_report(session_id, state, events).split("## Operator interventions")[1]
    assert "| Event | By | Result | Command | Target | Detail |" in markdown
    for who in ("alice", "bob", "carol", "dave", "erin"):
        assert f"| {who} |" in markdown, who
    page = html_report(session_id, state, events)
    assert all(f"<td>{who}</td>" in page for who in ("alice", "bob", "carol", "dave", "erin"))
    nodes = {row["id"]: row for row in trace(session_id, state, events)["nodes"]}
    assert (nodes["0.1"]["made_by"], nodes["0"]["edited_by"], nodes["0"]["made_by"]) == ("alice", "bob", None)
    store.close()


def test_an_edited_action_that_approves_is_signed_by_its_operator() -> None:
    """An edit that approves a guarded action records no changes (no undo may take it back): the
    approved node is still the operator's edit."""
    from planner.commands import apply_command
    from planner.state import Recorder, SessionState

    state = SessionState()
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_CREATED, task="buy", start_url="http://shop.test/")
    recorder.record(Kind.NODE_EXPANDED, "0", type="AND", children=[{"id": "0.1", "description": "pay"}])
    recorder.record(Kind.NODE_EXPANDED, "0.1", type="ACTION", action="click [9]")
    recorder.record(Kind.APPROVAL_REQUESTED, "0.1", action="click [9]", rule="payment")
    apply_command(state, parse_command({"kind": "edit_action", "action": "click [10]", "by": "alice"}))
    assert state.tree["0.1"].protected and state.edited_by == {"0.1": "alice"}


def test_commands_recorded_before_operators_were_read_as_sent_by_no_one_known() -> None:
    applied = Event.from_data(
        3,
        "command_applied",
        "0",
        {"command_id": "c1", "command": {"kind": "pause"}, "warning": None, "changes": [], "undoes": None},
        version=2,
    )
    rejected = Event.from_data(4, "command_rejected", None, {"command_id": "c2", "reason": "no"}, version=1)
    assert (applied.version, applied.payload.by) == (3, None)  # type: ignore[attr-defined]
    assert (rejected.version, rejected.payload.by) == (2, None)  # type: ignore[attr-defined]


def test_the_timeline_shows_who_within_its_one_line_summary() -> None:
    from ui.views.timeline import _detail

    payload = CommandApplied(command_id="f" * 32, by="alice", command={"kind": "edit", "description": "x" * 500})
    assert "by=alice" in short(_detail(payload), 140)


# -- the command line ----------------------------------------------------------------------------------


def _queued_by(db: str, session_id: str) -> list[object]:
    store = open_store(db)
    try:
        return [queued.payload.get("by") for queued in store.pending(session_id)]
    finally:
        store.close()


def test_the_command_line_signs_commands_with_the_operator_option_the_environment_or_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "cli.db")
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    store.close()
    monkeypatch.delenv("ANDOR_OPERATOR", raising=False)
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):  # getpass.getuser reads these first
        monkeypatch.setenv(name, "os-user")
    assert main(["--db", db, "command", session_id, "constraints", "vegan", "--operator", "alice"]) == 0
    monkeypatch.setenv("ANDOR_OPERATOR", "bob@example.org")
    assert main(["--db", db, "command", session_id, "budget", "--max-cost", "3"]) == 0
    monkeypatch.delenv("ANDOR_OPERATOR")
    assert main(["--db", db, "command", session_id, "budget", "--max-cost", "2"]) == 0
    assert _queued_by(db, session_id) == ["alice", "bob@example.org", "os-user"]
    capsys.readouterr()

    monkeypatch.setenv("ANDOR_OPERATOR", "bob\nmallory")
    assert main(["--db", db, "command", session_id, "pause"]) == 2
    assert main(["--db", db, "command", session_id, "pause", "--operator", "   "]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert errors == [
        "error: $ANDOR_OPERATOR is not a usable operator name; give one line of at most 200 characters",
        "error: invalid pause command: operator: cannot be blank; leave it out or give the operator's name",
    ]
    monkeypatch.delenv("ANDOR_OPERATOR")

    assert main(["--db", db, "resume", session_id, "--operator", "carol", "--exit-on-pause"]) == 0
    store = open_store(db)
    handled = [e.payload for e in store.load(session_id) if isinstance(e.payload, CommandApplied)]
    store.close()
    assert [(p.command["kind"], p.by) for p in handled] == [
        ("constraints", "alice"),
        ("budget", "bob@example.org"),
        ("budget", "os-user"),
        ("resume", "carol"),
    ]


def test_who_started_and_who_forked_a_session_is_recorded_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 16, "who did what": a session's start and a fork are the operator's doing too (they named no one)."""
    db = str(tmp_path / "started.db")
    monkeypatch.setenv("ANDOR_OPERATOR", "dana")
    assert main(["--db", db, "run", "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--exit-on-pause"]) == 3
    assert main(["--db", db, "submit", "--task", BROWNIE_TASK, "--model", BROWNIE, "--operator", "erin"]) == 0
    store = open_store(db)
    started, submitted = (info.id for info in reversed(store.sessions()))
    assert main(["--db", db, "fork", started, "--at", "1", "--operator", "frank"]) == 0
    forked = store.sessions()[0].id
    assert [load_state(store, s).started_by for s in (started, submitted, forked)] == ["dana", "erin", "frank"]
    state = load_state(store, started)
    assert "- **Started by:** dana" in markdown_report(started, state, store.load(started))
    assert "<th>Started by</th><td>dana</td>" in html_report(started, state, store.load(started))
    store.close()
    capsys.readouterr()
    assert main(["--db", db, "fork", started, "--at", "1", "--operator", "a\nb"]) == 2
    assert "operator name" in capsys.readouterr().err


def test_the_simulated_operator_signs_its_commands() -> None:
    from demo.operator_sim import Policy, SimulatedOperator

    store = SqlStore("sqlite://")
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    operator = SimulatedOperator(store, session_id, Policy.model_validate({"name": "none", "rules": []}))
    assert operator(load_state(store, session_id)) is True
    assert [queued.payload["by"] for queued in store.pending(session_id)] == ["simulated operator"]
    store.close()


# -- the inspector ---------------------------------------------------------------------------------------------


@pytest.fixture
def db(app_db: str) -> str:
    return app_db


def test_the_inspector_says_which_operator_made_or_edited_a_node(db: str) -> None:
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    queue_command(
        store, session_id, {"kind": "inject", "parent": "0", "node_type": "AND", "goals": ["find"], "by": "alice"}
    )
    queue_command(store, session_id, {"kind": "edit", "node": "0", "description": "find *a* brownie", "by": "bob"})
    queue_command(store, session_id, {"kind": "inject", "parent": "0", "goals": ["then"], "by": "alice"})
    queue_command(store, session_id, {"kind": "edit", "node": "0.2", "description": "then note it", "by": "carol"})
    _apply_queued(store, session_id)
    store.close()

    def line(node_id: str) -> str:
        at = console_app()
        at.run()
        node_picker(at).select(node_id)
        at.run()
        assert not at.exception, at.exception
        return next(m.value for m in at.markdown if m.value.startswith(f"**{node_id}** ·"))

    assert " · made by operator alice · revisions" in line("0.1")
    assert " · made by planner · ✎ edited by bob · revisions" in line("0")
    assert " · made by operator alice · ✎ edited by carol · revisions" in line("0.2")


def test_the_operators_name_is_markdown_escaped_in_the_inspector(db: str) -> None:
    from sessions.client.markdown import md

    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    who = "[mallory](http://evil.test/) **x**"
    queue_command(
        store, session_id, {"kind": "inject", "parent": "0", "node_type": "AND", "goals": ["find"], "by": who}
    )
    _apply_queued(store, session_id)
    store.close()
    at = console_app()
    at.run()
    node_picker(at).select("0.1")
    at.run()
    assert any(f"made by operator {md(who)} ·" in m.value for m in at.markdown), [m.value for m in at.markdown]
