"""The real console in headless Chromium, driven as an operator would (pytest-playwright).

The console runs as its own `streamlit run app.py` process with the bundled shop and the offline
model; the test reads the session store directly to check what the clicks did. The screenshots in
docs/screenshots/ come from these runs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from demo.tasks import check_answer, load_tasks
from planner.state import RunStatus, SessionState
from planner.tree import Origin, Status
from sessions.runner import load_state
from sessions.sql import open_store
from sessions.store import EventStore
from ui.server import ConsoleProcess, start_console

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
TASKS = {task.id: task for task in load_tasks()}


_STORES: dict[Path, EventStore] = {}


def store_of(console: ConsoleProcess) -> EventStore:
    """One store per console database, reused by every poll of the test."""
    if console.db not in _STORES:
        _STORES[console.db] = open_store(console.db)
    return _STORES[console.db]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    running = start_console(tmp_path_factory.mktemp("console") / "console.db")
    yield running
    running.stop()


def wait_until(check: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def newest(store: EventStore) -> tuple[str, SessionState]:
    info = store.sessions()[0]
    return info.id, load_state(store, info.id)


def open_console(page: Page, console: ConsoleProcess) -> None:
    page.set_viewport_size({"width": 1500, "height": 1150})
    page.goto(console.url)
    expect(page.get_by_text("New session")).to_be_visible(timeout=30_000)


def start_demo(page: Page, console: ConsoleProcess, task_id: str, *, paused: bool = False) -> str:
    """Start a demo task from the sidebar form, the way an operator does; returns the session id."""
    task = TASKS[task_id]
    before = {info.id for info in store_of(console).sessions()}
    sidebar = page.locator('[data-testid="stSidebar"]')
    choice = f"{task.title} ({task.kind.value})"
    sidebar.locator(".st-key-new_task_choice input").fill(task.title)
    page.get_by_role("option", name=choice).click()
    expect(sidebar.locator(".st-key-new_task_choice input")).to_have_value(choice)
    if paused:
        sidebar.get_by_text("Start paused").click()
    sidebar.locator(".st-key-start_session button").click()
    wait_until(lambda: {i.id for i in store_of(console).sessions()} - before != set(), 30, "the new session")
    session_id = newest(store_of(console))[0]
    expect(sidebar.locator(".st-key-session_id input")).to_have_value(re.compile(rf"{session_id}$"), timeout=30_000)
    expect(page.get_by_role("heading", name=task.task)).to_be_visible(timeout=30_000)
    return session_id


def state_of(console: ConsoleProcess, session_id: str) -> SessionState:
    return load_state(store_of(console), session_id)


def control(page: Page, verb: str) -> None:
    page.locator(f".st-key-ctl_{verb} button").click()


def step_once(page: Page, console: ConsoleProcess, session_id: str) -> None:
    """Press Step on a paused session and wait until the step is done and the console says so."""
    before = state_of(console, session_id).steps
    control(page, "step")
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
    picked = page.locator(".st-key-selected input")
    for _ in range(4):
        expect(labels.filter(has_text=re.compile(rf"\b{re.escape(node_id)}\b")).first).to_be_visible(timeout=20_000)
        box, previous = None, {}
        for _ in range(20):
            index = next(i for i, text in enumerate(labels.all_text_contents()) if pattern.match(text.strip()))
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


def shot(page: Page, name: str) -> None:
    """A README screenshot: the top of the page, once the tree is drawn."""
    expect(page.locator("svg text").first).to_be_visible(timeout=20_000)
    page.evaluate("() => document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })")
    time.sleep(1.2)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=False)


def test_pause_select_inject_resume(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "wireless-photo-printers")
    wait_until(lambda: state_of(console, session_id).metrics.actions >= 6, what="a few browser actions")
    shot(page, "console-live.png")
    control(page, "pause")
    wait_until(lambda: state_of(console, session_id).status is RunStatus.PAUSED, what="the pause")
    expect(page.get_by_text("paused by operator").first).to_be_visible(timeout=30_000)
    click_node(page, "0")
    page.locator(".st-key-inject_goals textarea").fill('note "checked by the operator"')
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    state = state_of(console, session_id)
    injected = [n for n in state.tree.walk() if n.origin is Origin.OPERATOR]
    assert [n.parent for n in injected] == ["0"] and injected[0].status is Status.UNVISITED
    control(page, "resume")
    wait_until(lambda: state_of(console, session_id).finished, 90, "the run to finish")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED
    assert state.tree[injected[0].id].status is Status.SUCCESS
    assert "checked by the operator" in state.notes


def test_prune_a_pending_step_and_it_is_skipped(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "cheapest-espresso", paused=True)
    step_once(page, console, session_id)  # the task's constraints
    step_once(page, console, session_id)  # the root's expansion
    click_node(page, "0.2")
    page.locator(".st-key-prune_reason input").fill("sorting is not needed")
    page.locator(".st-key-prune_submit button").click()
    expect(page.get_by_text("prune applied")).to_be_visible(timeout=15_000)
    control(page, "resume")
    wait_until(lambda: state_of(console, session_id).finished, 60, "the run to finish")
    tree = state_of(console, session_id).tree
    assert tree["0.2"].status is Status.PRUNED and tree["0.2"].reason == "operator: sorting is not needed"
    assert tree["0.2"].type.value == "UNKNOWN", "a pruned step must never run"
    assert tree["0.3"].status is Status.SUCCESS and tree["0.4"].status is Status.SUCCESS


def test_reject_a_guarded_action(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "add-backpack-to-cart")
    wait_until(lambda: state_of(console, session_id).status is RunStatus.AWAITING_APPROVAL, 60, "the approval request")
    expect(page.get_by_text("Approval required")).to_be_visible(timeout=15_000)
    shot(page, "console-approval.png")
    page.locator(".st-key-approval_reason input").fill("no purchases in a demo")
    page.locator(".st-key-reject_submit button").click()
    wait_until(lambda: state_of(console, session_id).finished, 60, "the run to finish")
    state = state_of(console, session_id)
    assert state.status is RunStatus.FAILED
    assert state.tree["0.3"].reason == "rejected by operator: no purchases in a demo"
    assert state.metrics.actions == 2, "the add-to-cart click never ran"


def test_reload_mid_run_finds_the_run_still_going(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "wireless-photo-printers")
    wait_until(lambda: state_of(console, session_id).metrics.actions >= 3, what="the run to start")
    page.reload()
    before = state_of(console, session_id).steps
    expect(page.get_by_role("heading", name=TASKS["wireless-photo-printers"].task)).to_be_visible(timeout=30_000)
    wait_until(lambda: state_of(console, session_id).steps > before + 3, 30, "steps after the reload")
    second = page.context.new_page()
    open_console(second, console)
    expect(second.get_by_role("heading", name=TASKS["wireless-photo-printers"].task)).to_be_visible(timeout=30_000)
    wait_until(lambda: state_of(console, session_id).finished, 90, "the run to finish")
    expect(second.get_by_text(re.compile(r"succeeded — done in \d+ steps")).first).to_be_visible(timeout=15_000)
    second.close()


def test_figure_13_fixed_from_the_console(page: Page, console: ConsoleProcess) -> None:
    task = TASKS["keyboard-brand-backpack"]
    correction = task.correction
    assert correction is not None
    open_console(page, console)
    session_id = start_demo(page, console, task.id, paused=True)
    step_once(page, console, session_id)
    step_once(page, console, session_id)
    assert len(state_of(console, session_id).tree) == 4, "the naive plan"
    click_node(page, "0")
    page.locator(".st-key-inject_goals textarea").fill("\n".join(correction.goals))
    page.locator(".st-key-inject_position input").fill("before 0.1")
    page.get_by_role("option", name=re.compile(r"^before 0\.1 ")).click()
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    time.sleep(1.5)
    shot(page, "console-figure13-injected.png")
    control(page, "resume")
    wait_until(lambda: state_of(console, session_id).finished, 90, "the run to finish")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED
    assert check_answer(task, state.final_answer or "").passed, state.final_answer
    assert [state.tree[c].origin for c in state.tree["0"].children][:3] == [Origin.OPERATOR] * 3
    page.get_by_role("tab", name="Task & answer").click()
    expect(page.get_by_text("Northwind Metro 18L: $54.99", exact=True)).to_be_visible(timeout=15_000)
    shot(page, "console-figure13-done.png")


def test_stopping_the_console_leaves_runs_paused_and_resumable(page: Page, tmp_path: Path) -> None:
    own = start_console(tmp_path / "console.db")
    try:
        open_console(page, own)
        session_id = start_demo(page, own, "wireless-photo-printers")
        wait_until(lambda: state_of(own, session_id).metrics.actions >= 2, what="the run to start")
    finally:
        own.stop()
    state = state_of(own, session_id)
    assert state.status is RunStatus.PAUSED and state.reason == "runner stopped; resume to continue"
