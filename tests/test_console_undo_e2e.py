"""Undo from the real console in headless Chromium: an injected sub-goal shows as the edit's diff
under the forms, and "Undo last edit" takes it out of the plan again."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from demo.tasks import load_tasks
from planner.state import RunStatus, SessionState
from planner.tree import Origin, Status
from sessions.reading import load_state
from sessions.runner import queue_command
from sessions.sql import open_store
from sessions.store import EventStore
from ui.server import ConsoleProcess, start_console

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASKS = {task.id: task for task in load_tasks()}
_STORES: dict[str, EventStore] = {}


def store_of(console: ConsoleProcess) -> EventStore:
    """One store per console database, reused by every poll of the test."""
    key = str(console.db)
    if key not in _STORES:
        _STORES[key] = open_store(console.db)
    return _STORES[key]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    running = start_console(tmp_path_factory.mktemp("console") / "console.db")
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _pause_leftover_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, pause the runs it left going, so they do not load the machine for the next."""
    yield
    if "console" in request.fixturenames:
        store = store_of(request.getfixturevalue("console"))
        for info in store.sessions():
            if info.status in ("running", "awaiting_approval"):
                queue_command(store, info.id, {"kind": "pause"})


def wait_until(check: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def state_of(console: ConsoleProcess, session_id: str) -> SessionState:
    return load_state(store_of(console), session_id)


def start_demo_paused(page: Page, console: ConsoleProcess, task_id: str) -> str:
    """Start a demo task paused from the sidebar form, as an operator does; returns the session id."""
    task = TASKS[task_id]
    store = store_of(console)
    before = {info.id for info in store.sessions()}
    sidebar = page.locator('[data-testid="stSidebar"]')
    choice = f"{task.title} ({task.kind.value})"
    sidebar.locator(".st-key-new_task_choice input").fill(task.title)
    page.get_by_role("option", name=choice).click()
    expect(sidebar.locator(".st-key-new_task_choice input")).to_have_value(choice)
    sidebar.get_by_text("Start paused").click()
    sidebar.locator(".st-key-start_session button").click()
    wait_until(lambda: {i.id for i in store.sessions()} - before != set(), 30, "the new session")
    session_id = store.sessions()[0].id
    expect(sidebar.locator(".st-key-session input")).to_have_value(re.compile(rf"{session_id}$"), timeout=30_000)
    expect(page.get_by_role("heading", name=task.task)).to_be_visible(timeout=30_000)
    return session_id


def step_once(page: Page, console: ConsoleProcess, session_id: str) -> None:
    """Press Step on a paused session and wait until the step is done and the console says so."""
    before = state_of(console, session_id).steps
    page.locator(".st-key-ctl_step button").click()
    wait_until(
        lambda: (state := state_of(console, session_id)).steps > before and state.status is RunStatus.PAUSED,
        what=f"step {before + 1}",
    )
    expect(page.get_by_text("paused after one step").first).to_be_visible(timeout=30_000)


def click_node(page: Page, node_id: str) -> None:
    """Click a node's symbol in the tree (its label sits just below it) until the inspector shows it.

    The chart animates when the plan changes, so wait for the label to stand still, and click again
    if a redraw swallowed the click.
    """
    pattern = re.compile(rf"^(?:\S+ )*(?:AND|OR|ACT|\?) {re.escape(node_id)}(?: ·.*)?$")
    labels = page.locator("svg text")
    picked = page.locator(".st-key-node input")
    for _ in range(4):
        expect(labels.filter(has_text=re.compile(rf"\b{re.escape(node_id)}\b")).first).to_be_visible(timeout=20_000)
        box, previous = None, {}
        for _ in range(20):
            index = next(i for i, text in enumerate(labels.all_text_contents()) if pattern.match(text.strip()))
            labels.nth(index).scroll_into_view_if_needed()
            box = labels.nth(index).bounding_box()
            if box == previous:
                break
            previous = box
            time.sleep(0.3)
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] - 7)
        try:
            expect(picked).to_have_value(re.compile(rf"^{re.escape(node_id)} · "), timeout=5_000)
            return
        except AssertionError:
            continue
    raise AssertionError(f"could not select node {node_id} by clicking the tree")


def edit_node(page: Page, node_id: str) -> None:
    """Select a node in the tree and open its Edit plan tab; return once the tab is drawn for that node."""
    click_node(page, node_id)
    page.get_by_role("tab", name="Edit plan").click()
    expect(page.get_by_text(f"Edit the plan at {node_id} (", exact=False).first).to_be_visible(timeout=30_000)


def test_inject_shows_its_diff_and_undo_takes_it_back(page: Page, console: ConsoleProcess) -> None:
    page.set_viewport_size({"width": 1500, "height": 1150})
    page.goto(console.url)
    expect(page.get_by_text("New session")).to_be_visible(timeout=30_000)
    session_id = start_demo_paused(page, console, "keyboard-brand-backpack")
    step_once(page, console, session_id)  # the task's constraints
    step_once(page, console, session_id)  # the root's expansion
    edit_node(page, "0")
    goals = page.locator('[class*="st-key-inject_goals-"] textarea')
    expect(goals, "the root's own inject field").to_have_count(1, timeout=30_000)
    goals.fill("check the <b>brand</b> first")
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    injected = [n for n in state_of(console, session_id).tree.walk() if n.origin is Origin.OPERATOR]
    assert [n.parent for n in injected] == ["0"], "one sub-goal injected under the root"
    node_id = injected[0].id
    last_edit = page.locator(".st-key-last_edit")
    expect(last_edit.get_by_text(f"added {node_id} · check the <b>brand</b> first")).to_be_visible(timeout=30_000)
    undo = page.locator(".st-key-undo_btn").get_by_role("button", name="Undo last edit")  # not the hidden copy
    expect(undo, "one Undo button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    expect(undo, "Undo enabled while the injected node has not run").to_be_enabled(timeout=30_000)
    undo.click()
    expect(page.get_by_text("undo applied")).to_be_visible(timeout=15_000)
    wait_until(
        lambda: state_of(console, session_id).tree[node_id].status is Status.DELETED,
        what=f"{node_id} taken out of the plan",
    )
    expect(last_edit.get_by_text(f"added {node_id}")).to_have_count(0, timeout=30_000)
    expect(last_edit.get_by_text("No plan edit to undo.")).to_be_visible(timeout=30_000)
    expect(undo, "one Undo button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    expect(undo, "nothing left to undo").to_be_disabled(timeout=30_000)
    state = state_of(console, session_id)
    assert state.tree[node_id].reason == "undone by operator" and state.edits == []
