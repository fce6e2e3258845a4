"""Shared test helpers: run a scripted session in memory, and snapshot state for comparison."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from planner.operators import CallRecord, Reply
from planner.state import Recorder, SessionState

if TYPE_CHECKING:
    from ui.server import ConsoleProcess

SCRIPTS = Path(__file__).parent / "scripts"
os.environ.setdefault("DEMO_SHOP_SLOW_SECONDS", "0.3")
"""The demo shop's slow pages wait 2 s for a person; in the tests a short delay still tells them apart
(tests/test_demo_shop.py checks the delay itself), and the suite runs them many times."""

BROWNIE_TASK = "Find a vegan chocolate brownie recipe with 4+ rating"


def load(name: str) -> Script:
    return Script.model_validate_json((SCRIPTS / name).read_text())


CENT = 0.01


class Billed:
    """The brownie script at one cent a call (100 input, 10 output tokens), so a cost cap can be
    reached on the dry environment."""

    name = "billed"

    def __init__(self) -> None:
        self._inner = ScriptedModel(load("brownie.json"))

    def __getattr__(self, operator: str) -> Any:
        answer = getattr(self._inner, operator)

        def billed(*args: Any) -> Reply[Any]:
            usage = {"input_tokens": 100, "output_tokens": 10, "cost_usd": CENT}
            return Reply(answer(*args).output, CallRecord(usage=usage))

        return billed


MECHANICS = EngineConfig(constraints=False)
"""Tests of the DFS mechanics count steps from the root's expansion; constraint extraction, a step
before it, is tested on its own (test_constraints.py) and in the demo, Claude and browser runs."""


def new_state(task: str, config: EngineConfig | None = None) -> tuple[SessionState, list[Event]]:
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(
        Kind.SESSION_CREATED,
        task=task,
        model="script",
        start_url=DRY_START,
        config=(config or MECHANICS).model_dump(mode="json"),
    )
    return state, recorder.take()


def run_script(
    script: Script, task: str, config: EngineConfig | None = None, max_steps: int = 500
) -> tuple[SessionState, list[Event], Engine]:
    """Run a scripted session on the dry environment to the end; returns state, all events, engine."""
    state, log = new_state(task, config)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    drive(engine, log, max_steps)
    return state, log, engine


def drive(engine: Engine, log: list[Event], max_steps: int = 500) -> None:
    """Step until the engine has nothing to do (finished, paused, waiting), collecting the events."""
    for _ in range(max_steps):
        events = engine.step()
        if not events:
            return
        log.extend(events)


def frames(log: list[Event]) -> list[tuple[str, str | None, str]]:
    return [(e.node_id or "", e.payload.frame, e.payload.work) for e in log if e.kind is Kind.STEP]


def snapshot(state: SessionState) -> dict[str, Any]:
    """Everything observable about a state, in a comparable form."""
    return {
        "nodes": [node.model_dump(mode="json") for node in state.tree.walk()],
        "status": state.status.value,
        "reason": state.reason,
        "notes": list(state.notes),
        "final_answer": state.final_answer,
        "constraints": state.constraints,
        "proposals": dict(state.proposals),
        "steps": state.steps,
        "seq": state.seq,
        "url": state.url,
        "handled": sorted(state.handled_commands),
        "approval": repr(state.approval),
    }


@pytest.fixture
def brownie() -> Script:
    return load("brownie.json")


def dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright drives the same Chromium the product finds (never a downloaded one)."""
    from planner.browser.chromium import find_chromium, launch_args

    return {**browser_type_launch_args, "executable_path": find_chromium(), "args": launch_args()}


@pytest.fixture(scope="session")
def postgres_url() -> Any:
    """A PostgreSQL server for this test run: $ANDOR_TEST_POSTGRES when set, otherwise a throwaway one
    started with initdb/pg_ctl in a temporary directory and stopped at the end."""
    from postgres import MissingPostgres, PostgresServer

    if url := os.environ.get("ANDOR_TEST_POSTGRES"):
        yield url
        return
    try:
        server = PostgresServer().start()
    except MissingPostgres as missing:
        pytest.skip(str(missing))
    try:
        yield server.url
    finally:
        server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files with a test on pytest-playwright's `page`/`browser` fixtures run last, whole.

    Those fixtures keep one Playwright (and its asyncio loop) on the main thread for the rest of the
    session, and Playwright's sync API allows one per thread, so a `BrowserEnvironment` a later
    test starts on the main thread would be refused. Whole files, because `make test`'s workers
    (pytest-xdist, `--dist loadfile`) take a file at a time in this order: a file that also had
    other tests was placed where its first test stood and ran its browser tests early on its worker
    (the demo runs after them on that worker then failed). Order within each group is kept.
    """
    browser_files = {
        item.path for item in items if {"page", "browser", "context"} & set(getattr(item, "fixturenames", ()))
    }
    if browser_files:
        late = [item for item in items if item.path in browser_files]
        items[:] = [item for item in items if item.path not in browser_files] + late


# -- the console's end-to-end files -------------------------------------------------------------------


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    """A `streamlit run app.py` console of the module's own, on free ports with its own database."""
    from ui.server import start_console

    running = start_console(tmp_path_factory.mktemp("console") / "console.db")
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _pause_leftover_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, pause the runs it left going: the next test then shares the machine with
    nothing but its own run (on a loaded machine, a leftover run made the next test's clicks miss)."""
    yield
    if "console" in request.fixturenames:
        from console_helpers import store_of

        from sessions.runner import queue_command

        store = store_of(request.getfixturevalue("console"))
        for info in store.sessions():
            if info.status in ("running", "awaiting_approval"):
                queue_command(store, info.id, {"kind": "pause"})
