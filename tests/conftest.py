"""Shared test helpers: run a scripted session in memory, and snapshot state for comparison."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from planner.questions import CallRecord, Reply
from planner.state import Recorder, SessionState

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserType, Playwright

    from sessions.store import EventStore
    from sessions.store.sql import SqlStore
    from ui.server import ConsoleProcess

SCRIPTS = Path(__file__).parent / "scripts"
os.environ.setdefault("DEMO_SHOP_SLOW_SECONDS", "0.3")
"""The demo shop's slow pages wait 2 s for a person; in the tests a short delay still tells them apart
(tests/test_demo_shop.py checks the delay itself), and the suite runs them many times."""


def trials(full: int, quick: int) -> int:
    """How many trials a reliability probe runs: `quick` in the suite, `full` (docs/reliability.md's figures)
    with ANDOR_TRIALS=full. A race the probes were written against showed in 14 of 50 trials before
    its fix, so the quick count still finds such a race with a probability above 99.9 %."""
    return full if os.environ.get("ANDOR_TRIALS") == "full" else quick


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

    def __getattr__(self, question: str) -> Any:
        answer = getattr(self._inner, question)

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


def answered(store: EventStore, answer: str) -> tuple[str, str]:
    """A run of the bundled keyboard-brand-backpack task (which has an answer check) that ends with
    `answer`, in `store` through its runner: (the session id, the task)."""
    from demo.tasks import load_tasks
    from sessions.backends import Backend
    from sessions.client.creation import create_session
    from sessions.worker.runner import Runner

    task = next(t for t in load_tasks() if t.id == "keyboard-brand-backpack")
    script = Script.model_validate(
        {
            "nodes": {task.task: {"type": "AND", "children": ["a"]}, "a": {"type": "ACTION", "action": "click [1]"}},
            "final_answer": answer,
        }
    )
    session_id = create_session(store, task.task, "demo", config=EngineConfig(constraints=False))
    Runner(store, session_id, backend=Backend(ScriptedModel(script), DryEnvironment())).run()
    return session_id, task.task


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
    from sessions.store.pgserver import MissingPostgres, PostgresServer

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


BACKENDS = ("memory", "disk", "postgres")
"""The store's backends: SQLite in memory, SQLite on disk, and PostgreSQL on the run's throwaway server."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes `store` runs on every backend, or on those its `backends` mark names."""
    if "store" in metafunc.fixturenames:
        marked = metafunc.definition.get_closest_marker("backends")
        metafunc.parametrize("store", marked.args if marked else BACKENDS, indirect=True)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlStore]:
    """A fresh, empty store of one backend (see `pytest_generate_tests`)."""
    from postgres import database_for

    from sessions.store.sql import SqlStore

    backend = SqlStore(database_for(request.param, request, tmp_path))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def gallery_site() -> Iterator[str]:
    """The browser gallery's pages (tests/pages/gallery_*.html) served for a test file, as `bench.browser`
    serves them: the base URL."""
    from bench.browser import serve_gallery

    with serve_gallery() as url:
        yield url


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """pytest-playwright's `page` fixtures, with one Playwright per test file instead of one for the
    whole session. Playwright's sync API allows one driver per thread, and the session-wide one kept
    its asyncio loop on the main thread from the first `page` test on: every later `BrowserEnvironment`
    started on the main thread (the browser tests, the demo runs) on that worker was refused, which
    `make test`'s workers (pytest-xdist, `--dist loadfile`) made depend on the order they took the
    files in. Ended with its file, the driver leaves the thread as it found it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser_type(playwright: Playwright, browser_name: str) -> BrowserType:
    return getattr(playwright, browser_name)


@pytest.fixture(scope="module")
def launch_browser(browser_type_launch_args: dict[str, Any], browser_type: BrowserType) -> Callable[..., Browser]:
    return lambda **options: browser_type.launch(**{**browser_type_launch_args, **options})


@pytest.fixture(scope="module")
def browser_context_args() -> dict[str, Any]:
    """Plain contexts (pytest-playwright's asks its session-wide driver for device presets, which
    these tests never use): each test opens full URLs itself."""
    return {}


@pytest.fixture(scope="module")
def browser(launch_browser: Callable[..., Browser]) -> Iterator[Browser]:
    launched = launch_browser()
    yield launched
    launched.close()


# -- the console: headless (AppTest) and end-to-end -----------------------------------------------------


@pytest.fixture
def on_loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A console run headless in this process as `make run` serves it: on loopback, for the machine's
    operator with every role (it refuses any other address without a sign-in)."""
    from streamlit import config

    for name in ("ANDOR_AUTH_HEADER", "ANDOR_ROLES"):
        monkeypatch.delenv(name, raising=False)
    address = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    yield
    config.set_option("server.address", address)


@pytest.fixture
def app_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_loopback: None) -> Iterator[str]:
    """The database of a console run headless (streamlit.testing AppTest) in this process, with no demo
    shop: the console's process-wide resources are made anew for it and shut down after."""
    import streamlit as st

    path = str(tmp_path / "console.db")
    monkeypatch.setenv("ANDOR_DB", path)
    monkeypatch.setenv("ANDOR_SHOP", "0")
    st.cache_resource.clear()
    yield path
    st.cache_resource.clear()  # the console's client closes on release (`ui.context`)


@pytest.fixture
def app_store(app_db: str) -> Iterator[SqlStore]:
    """The store of the console run headless on `app_db`."""
    from sessions.store.sql import open_store

    store = open_store(app_db)
    yield store
    store.close()


@pytest.fixture(scope="module")
def console(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    """A `streamlit run app.py` console of the module's own, on free ports with its own database; a
    module's `console_env` mark adds to its environment (`ANDOR_SHOP="0"`: no demo shop)."""
    from ui.server import start_console

    marked = request.node.get_closest_marker("console_env")
    env = marked.kwargs if marked else None
    running = start_console(tmp_path_factory.mktemp("console") / "console.db", env=env)
    yield running
    running.stop()


@pytest.fixture
def console_store(console: ConsoleProcess) -> EventStore:
    """The store of the module's console (`console_helpers.store_of`: one per console, reused)."""
    from console_helpers import store_of

    return store_of(console)


@pytest.fixture(autouse=True)
def _no_page_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every browser test fails when a page it drove threw a script error: an error in Streamlit's
    frontend (a delta it cannot place) blanks the console for good, and a test that only waits for
    an element would report that as a timeout somewhere else."""
    if "page" not in request.fixturenames:
        yield
        return
    errors: list[str] = []
    request.getfixturevalue("page").on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    yield
    assert not errors, f"the page threw: {errors}"


@pytest.fixture(autouse=True)
def _pause_leftover_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, pause the runs it left going: the next test then shares the machine with
    nothing but its own run (on a loaded machine, a leftover run made the next test's clicks miss)."""
    yield
    if "console" in request.fixturenames:
        from console_helpers import store_of

        from sessions.client.commands import queue_command
        from sessions.store import SessionFinished

        store = store_of(request.getfixturevalue("console"))
        for info in store.sessions():
            if info.status in ("running", "awaiting_approval"):
                with contextlib.suppress(SessionFinished):  # it ended since the listing: nothing to pause
                    queue_command(store, info.id, {"kind": "pause"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most slow tests first, each file's tests in their own order. `make test`'s
    two workers take whole files in this order (`--dist loadfile --no-loadscope-reorder`: by default
    xdist orders files by their number of tests, which put the files of one long browser test last), so
    a long file taken last no longer leaves one worker running it alone while the other has nothing
    left (the longest-first rule)."""
    slow: dict[Path, int] = {}
    for item in items:
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
    first_seen = {path: index for index, path in enumerate(dict.fromkeys(item.path for item in items))}
    items.sort(key=lambda item: (-slow[item.path], first_seen[item.path]))
