"""Each rule has one home: the shared status sets, child ids, the model-spec grammar, the default
database, the command-outcome poll, the CLI verbs built from the command models, one exception tree
per package, and a demo model whose playbook is stored with its session."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import planner
import sessions
from planner.browser.dry import DRY_START
from planner.commands import COMMAND_MODELS
from planner.errors import InvalidTransition, ModelOutputError, PlannerError
from planner.events import Event, Kind
from planner.models.offline import OfflineModel, Playbook
from planner.questions import View
from planner.status import IN_PROGRESS, REOPENABLE, move
from planner.tree import Node, NodeType, Status, Tree
from sessions.backends import ModelSpec, build_backend, parse_model_spec, prepare_model
from sessions.cli import build_parser
from sessions.client.commands import wait_for_outcome
from sessions.client.creation import create_session
from sessions.errors import SessionsError, UnknownModel
from sessions.store import DEFAULT_DATABASE, database_target
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore


def _bundled_task() -> tuple[str, Playbook]:
    from demo.tasks import load_tasks

    task = next(task for task in load_tasks() if task.playbook is not None)
    assert task.playbook is not None
    return task.task, task.playbook


def test_status_sets_say_what_can_be_reopened_and_what_is_in_progress() -> None:
    assert frozenset({Status.FAIL, Status.PRUNED, Status.DELETED}) == REOPENABLE
    assert frozenset({Status.VISITED, Status.FAIL}) == IN_PROGRESS


def _status_writers() -> list[str]:
    """`x.status = ...` in the product, except the run status (`state.status`) and `planner.status.move`."""
    root = Path(__file__).resolve().parent.parent
    writers = []
    for path in sorted(p for package in ("planner", "sessions", "ui", "demo") for p in (root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "status":
                    owner = ast.unparse(target.value)
                    if owner != "state" and path.relative_to(root).as_posix() != "planner/status.py":
                        writers.append(f"{path.relative_to(root)}:{node.lineno} {owner}.status")
    return writers


def test_node_statuses_change_only_through_the_transition_table() -> None:
    assert _status_writers() == []
    node = Node(id="0.1", description="t", type=NodeType.ACTION, status=Status.PRUNED, children=[])
    with pytest.raises(InvalidTransition, match=r"node 0\.1: PRUNED -> SUCCESS is not a legal transition"):
        move(node, Status.SUCCESS)
    move(node, Status.UNVISITED)
    assert node.status is Status.UNVISITED


def test_child_ids_number_on_past_closed_children() -> None:
    tree = Tree()
    tree.nodes["0"] = Node(id="0", description="t", type=NodeType.AND, children=["0.1", "0.2"])
    assert tree.new_child_ids(tree.nodes["0"], 3) == ["0.3", "0.4", "0.5"]
    assert tree.new_child_ids(tree.nodes["0"], 0) == []


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("demo", ModelSpec("demo")),
        ("claude", ModelSpec("claude")),
        ("claude:claude-haiku-4-5", ModelSpec("claude", "claude-haiku-4-5")),
        ("script:a/b.json", ModelSpec("script", "a/b.json")),
        ("replay:3f2a", ModelSpec("replay", "3f2a")),
    ],
)
def test_the_model_spec_grammar_is_read_in_one_place(spec: str, parsed: ModelSpec) -> None:
    assert parse_model_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["", "claude:", "demo:x", "Demo", "gpt", "script"])
def test_an_unknown_model_spec_is_refused_with_the_choices(spec: str) -> None:
    with pytest.raises(UnknownModel, match="use demo, script:PATH, claude"):
        parse_model_spec(spec)


def test_the_default_database_is_decided_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANDOR_DB", raising=False)
    assert database_target() == DEFAULT_DATABASE
    monkeypatch.setenv("ANDOR_DB", "")
    assert database_target() == DEFAULT_DATABASE
    monkeypatch.setenv("ANDOR_DB", "x.db")
    assert database_target() == "x.db"
    assert database_target("") == ""  # an explicit empty target stays an error for the store to refuse


def test_the_outcome_poll_reads_only_events_after_the_command_was_queued() -> None:
    store = SqlStore("sqlite://")
    create_session(store, "task", "demo", start_url=DRY_START, session_id="s")
    rejected = {"command_id": "c1", "reason": "no such node"}
    store.append(
        "s", [Event.from_data(2, Kind.COMMAND_REJECTED, None, rejected)], status="running", reason=None, steps=0
    )
    store.append(
        "s",
        [Event.from_data(3, Kind.COMMAND_APPLIED, None, {"command_id": "c2"})],
        status="running",
        reason=None,
        steps=0,
    )
    outcome = wait_for_outcome(store, "s", "c1", 60, after=1)
    assert outcome is not None and not outcome.applied and outcome.reason == "no such node" and outcome.seq == 2
    applied = wait_for_outcome(store, "s", "c2", 60, after=2)
    assert applied is not None and applied.applied and applied.seq == 3
    assert wait_for_outcome(store, "s", "c1", 0.2, after=2) is None, "an outcome before `after` was read"


def _verb_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = top.choices["command"]
    verbs = next(a for a in command._actions if isinstance(a, argparse._SubParsersAction))
    return dict(verbs.choices)


def test_every_command_model_is_a_cli_verb_taking_exactly_its_fields() -> None:
    verbs = _verb_parsers()
    assert sorted(verbs) == sorted(kind.replace("_", "-") for kind in COMMAND_MODELS)
    for kind, model in COMMAND_MODELS.items():
        options = {
            action.dest
            for action in verbs[kind.replace("_", "-")]._actions
            if action.dest not in ("help", "db", "wait", "timeout")
        }
        assert options == set(model.model_fields) - {"kind", "command_id"}, f"the {kind} verb and its model differ"


def _errors_defined_in(package: object) -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):  # type: ignore[attr-defined]
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


@pytest.mark.parametrize(("package", "root"), [(planner, PlannerError), (sessions, SessionsError)])
def test_each_package_raises_errors_of_its_own_tree_only(package: object, root: type[Exception]) -> None:
    errors = _errors_defined_in(package)
    assert errors, "no errors found: the walk is broken"
    outside = [f"{e.__module__}.{e.__name__}" for e in errors if not issubclass(e, root)]
    assert not outside, f"{outside} are outside the {root.__name__} tree"
    documented = (package.__doc__ or "") + (importlib.import_module(root.__module__).__doc__ or "")
    missing = [e.__name__ for e in errors if e.__name__ not in documented]
    assert not missing, f"{missing} are not in the tree documented at the package's root"


def test_bad_session_input_is_a_sessions_error() -> None:
    from sessions.errors import SessionInputError

    store = SqlStore("sqlite://")
    with pytest.raises(SessionInputError, match="the task is empty"):
        create_session(store, "  ", "demo", start_url=DRY_START)


def test_a_demo_session_keeps_the_playbook_it_started_with(monkeypatch: pytest.MonkeyPatch) -> None:
    task, playbook = _bundled_task()
    store = SqlStore("sqlite://")
    create_session(store, task, "demo", start_url=DRY_START, session_id="s")

    def changed() -> list[object]:
        raise AssertionError("a resume read demo/tasks.json")

    monkeypatch.setattr("demo.tasks.load_tasks", changed)
    backend = build_backend(load_state(store, "s"))
    assert isinstance(backend.model, OfflineModel)
    assert backend.model.playbooks == {task: playbook}


def test_a_demo_session_records_that_its_task_has_no_playbook() -> None:
    assert prepare_model("demo") == {"playbook": None}
    store = SqlStore("sqlite://")
    create_session(store, "a task no playbook knows", "demo", start_url=DRY_START, session_id="s")
    model = build_backend(load_state(store, "s")).model
    assert isinstance(model, OfflineModel) and model.playbooks == {}
    tree = Tree()
    tree.nodes["0"] = Node(id="0", description="dance a jig")
    view = View(task="a task no playbook knows", tree=tree, node=tree.nodes["0"], observation="", url="http://x/")
    with pytest.raises(ModelOutputError, match="the demo model has no playbook for this task"):
        model.expand(view)


def test_a_demo_session_recorded_before_playbooks_were_stored_runs_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task, _ = _bundled_task()
    store = SqlStore("sqlite://")
    create_session(store, task, "demo", start_url=DRY_START, session_id="s")
    state = load_state(store, "s")
    state.model_data = {}
    monkeypatch.setattr("demo.tasks.load_tasks", lambda *_: pytest.fail("a resume read demo/tasks.json"))
    model = build_backend(state).model
    assert isinstance(model, OfflineModel) and model.playbooks == {}
