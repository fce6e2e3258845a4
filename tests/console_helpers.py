"""What the console's end-to-end test files share: reading the console's store, waiting, and driving
the page the way an operator does (start a demo task, step, pick a node, open a tab, fill a form).

The fixtures they share (`console`, and pausing the runs a test leaves) are in `conftest.py`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlparse

from conftest import BROWNIE_TASK, SCRIPTS
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import FloatRect, Locator, Page, expect
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Selectbox
from waiting import wait_until

from demo.tasks import load_tasks
from planner.config import EngineConfig
from planner.state import RunStatus, SessionState
from sessions.client.creation import create_session
from sessions.client.markdown import short
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from ui.app import HEADING_CHARS
from ui.layout import RULES_PROBE
from ui.server import ConsoleProcess
from ui.views.sidebar import START_OPTIONS

TASKS = {task.id: task for task in load_tasks()}
BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"
"""The brownie task's scripted model, for dry sessions."""
SESSION_PICKER = '.st-key-session [data-stale="false"] input'
"""The sidebar's session picker. It is keyed by the session it shows (`ui.url.picker_key`), and
Streamlit keeps the picker it replaces on the page, marked stale, until the run that replaced it ends."""
NODE_PICKER = '.st-key-node [data-stale="false"] input'
"""The node selector, keyed by the node it shows (see `SESSION_PICKER`)."""


SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
"""Where the screenshots of README.md and docs/console.md come from: the end-to-end tests take them on live runs."""
RETAKE = os.environ.get("ANDOR_SHOTS") == "1"
"""Only `ANDOR_SHOTS=1 make test` retakes them: an ordinary test run leaves the checkout as it was."""


def readme_shot(page: Page, name: str) -> None:
    """A screenshot for the docs: the top of the page, once the tree (if any) has settled."""
    if not RETAKE:
        return
    page.evaluate("() => document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })")
    time.sleep(1.2)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=False)


APP = str(Path(__file__).resolve().parent.parent / "app.py")
"""The console's entry point, for AppTest."""


def console_app(session_id: str | None = None, *, timeout: float = 30) -> AppTest:
    """The console headless (AppTest, in this process), not yet run, on `session_id` when given. There is
    no browser, so this stands in for the tab's report that the page rules are in force (`ui.layout`)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if session_id is not None:
        at.query_params["session"] = session_id
    at.session_state[RULES_PROBE] = {"in_force": True}
    return at


def app() -> AppTest:
    """The console run once headless, failing on any exception it drew."""
    at = console_app()
    at.run()
    assert not at.exception, at.exception
    return at


def approval_box(session_id: str) -> AppTest:
    """The console headless on `session_id`, once its approval box is drawn (the stored session waits for one)."""
    at = console_app(session_id)
    at.run()
    deadline = time.monotonic() + 30
    while not any("Approval required" in m.value for m in at.markdown):
        assert time.monotonic() < deadline, "the approval box never showed"
        time.sleep(0.1)
        at.run()
    assert not at.exception, at.exception
    return at


def redraw_until(at: AppTest, check: Callable[[AppTest], bool], what: str, timeout: float = 30.0) -> None:
    """Draw the page again until `check` holds for it: a press only queues its command, and each redraw
    shows what the console's runner has made of it so far (`Outcome.settled` against the redraw's view)."""
    at.run()
    wait_until(lambda: check(at), f"the page to show {what}", timeout=timeout, pump=lambda: _redraw(at))
    assert not at.exception, at.exception


def _redraw(at: AppTest) -> None:
    time.sleep(0.05)
    at.run()


def settled(at: AppTest, check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait until the store says `check` (the runner applies a command at its own pace), then draw the
    page once more, so it shows at least that moment."""
    wait_until(check, what, timeout=timeout)
    at.run()
    assert not at.exception, at.exception


def answered(at: AppTest, answer: str, timeout: float = 30.0) -> None:
    """Redraw until a form shows the runner's answer `answer`."""
    redraw_until(at, lambda at: any(answer in s.value for s in at.success), f"the answer {answer!r}", timeout)


def keyed(widgets: Any, name: str) -> Any:
    """The one widget of a form whose key is `name` in the scope on screen (`ui.forms.Scope.key`)."""
    [widget] = [w for w in widgets if (w.key or "").startswith(f"{name}-")]
    return widget


def show_tab(at: AppTest, name: str) -> None:
    """Open a tab: of the lower set (only the open one of Timeline and All sessions is drawn) or, for
    Task & answer, of the set beside the tree (drawn only while open)."""
    from ui.views.node_actions import PANEL_KEY

    key = PANEL_KEY if name == "Task & answer" else "tab"
    at.session_state[key] = name
    at.query_params[key] = name  # the tabs are bound to the URL, which a run reads them from
    at.run()
    assert not at.exception, at.exception


def markdown_text(at: AppTest) -> str:
    """Every Markdown string the page drew, one per line."""
    return "\n".join(m.value for m in at.markdown)


def expanded(
    store: EventStore, task: str = BROWNIE_TASK, model: str = BROWNIE, config: EngineConfig | None = None
) -> tuple[str, AppTest]:
    """A paused dry session whose root has its sub-goals, on screen with the root selected."""
    session_id = create_session(store, task, model, start_url="dry://start", paused=True, config=config)
    at = console_app()
    at.run()
    for steps in (1, 2):  # the constraints, then the root's expansion
        step(at, store, session_id, steps)
    return session_id, at


def step(at: AppTest, store: EventStore, session_id: str, steps: int) -> None:
    """Press Step and wait until the run has taken its `steps`-th step and paused again, and the page shows it."""
    at.button(key="ctl_step").click().run()
    settled(
        at,
        lambda: (state := load_state(store, session_id)).steps == steps and state.status is RunStatus.PAUSED,
        f"step {steps}",
    )
    caught_up(at, store, session_id)


def caught_up(at: AppTest, store: EventStore, session_id: str) -> None:
    """Redraw until the page shows the session as the store has it now (the status line's event number): a
    redraw that began before the runner's last write shows the step before."""
    seq = load_state(store, session_id).seq
    shown = re.compile(rf" · event {seq}\b")
    redraw_until(at, lambda _: any(shown.search(m.value) for m in at.markdown), f"the page to show event {seq}")


def node_picker(at: AppTest) -> Selectbox[str]:
    """The node selector of an AppTest run: keyed by the node it shows (`ui.url.picker_key`)."""
    [picker] = [box for box in at.selectbox if (box.key or "").startswith("node_pick_")]
    return picker


_STORES: dict[object, EventStore] = {}


def store_of(console: ConsoleProcess) -> EventStore:
    """One store per console database, reused by every poll of the test."""
    if console.db not in _STORES:
        _STORES[console.db] = open_store(console.db)
    return _STORES[console.db]


def state_of(console: ConsoleProcess, session_id: str) -> SessionState:
    return load_state(store_of(console), session_id)


def wait_for_the_end(
    page: Page, console: ConsoleProcess, session_id: str, timeout: float, what: str, *, back: bool = False
) -> None:
    """Wait for the run to end with the page away from the console, and open the session's page again
    afterwards if `back`. A live session's page redraws every 0.75 s, which costs the browser most of
    a core for the whole wait; a test that has done what it came to do has nothing to watch there."""
    url = page.url
    page.goto("about:blank")
    wait_until(lambda: state_of(console, session_id).finished, what, timeout=timeout)
    if back:
        page.goto(url)
        expect(page.locator("svg text").first, "the session's tree, drawn again").to_be_visible(timeout=30_000)


_RUNS = """() => {
  if (window.__runs === undefined) {
    window.__runs = 0;
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver(() => { if (app.getAttribute('data-test-script-state') === 'running') window.__runs += 1; })
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  return window.__runs;
}"""


def page_runs(page: Page) -> int:
    """How many times the page has run (a whole run or a fragment's) since this was first asked."""
    return cast(int, page.evaluate(_RUNS))


def wait_for_runs(page: Page, runs: int, what: str, timeout: float = 60.0) -> None:
    """Let the page run `runs` more times: a window measured in the page's own redraws, not in seconds."""
    start = page_runs(page)
    wait_until(lambda: page_runs(page) >= start + runs, f"{runs} more runs of the page ({what})", timeout=timeout)


def count_dom_changes(page: Page, seconds: float) -> int:
    """How many DOM changes a page that should stand still makes in `seconds`, after a moment for the
    last redraw to settle. A still page has no run to count, so this window is one of time: it observes,
    it never waits for something to happen."""
    time.sleep(2)
    page.evaluate(
        """() => { window.__changes = 0; new MutationObserver(m => { window.__changes += m.length; })
        .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true}); }"""
    )
    time.sleep(seconds)
    return cast(int, page.evaluate("() => window.__changes"))


def open_console(page: Page, console: ConsoleProcess) -> None:
    page.set_viewport_size({"width": 1500, "height": 1150})
    page.goto(console.url)
    expect(page.get_by_text("New session")).to_be_visible(timeout=30_000)


def start_demo(page: Page, console: ConsoleProcess, task_id: str, *, paused: bool = False) -> str:
    """Start a demo task from the sidebar form, the way an operator does; returns the session id.
    `paused`: started paused, it returns once the run stops for the review of its first plan (the
    task's constraints extracted and the root expanded; Chromium starts first)."""
    task = TASKS[task_id]
    sidebar = page.locator('[data-testid="stSidebar"]')
    choose(page, sidebar.locator(".st-key-new_task_choice input"), task.title, f"{task.title} ({task.kind.value})")
    return _press_start(page, console, task.task, paused=paused, review_timeout=120 if paused else None)


def start_own(page: Page, console: ConsoleProcess, task: str, model: str, *, paused: bool) -> str:
    """Start one's own task as a dry run (no start URL: no browser) with `model`, from the sidebar form;
    returns the session id once the page shows it. `paused`: a `BROWNIE` run started paused returns
    once it stops for the review of its first plan (the root expanded)."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    choose(page, sidebar.locator(".st-key-new_task_choice input"), "Your own", "Your own task…")
    sidebar.locator(".st-key-new_task_text textarea").fill(task)
    unfold_start_options(sidebar)
    sidebar.locator(".st-key-new_start_url input").fill("")
    sidebar.locator(".st-key-new_model input").fill(model)
    return _press_start(page, console, task, paused=paused, review_timeout=30 if paused and model == BROWNIE else None)


def unfold_start_options(sidebar: Locator) -> None:
    """Unfold the new-session form's start URL, model and secrets (a click on an unfolded one folds it)."""
    fold = sidebar.locator("details").filter(has_text=START_OPTIONS)
    if fold.get_attribute("open") is None:
        fold.locator("summary").click()
    expect(sidebar.locator(".st-key-new_start_url input"), "the start URL field, unfolded").to_be_visible()


def _press_start(page: Page, console: ConsoleProcess, task: str, *, paused: bool, review_timeout: float | None) -> str:
    """Set Start paused, press Start once, and return the one session it made once the page shows it;
    with `review_timeout`, once the run has stopped for the review of its first plan."""
    before = {info.id for info in store_of(console).sessions()}
    sidebar = page.locator('[data-testid="stSidebar"]')
    toggle = sidebar.locator(".st-key-new_paused input")
    if toggle.is_checked() != paused:  # the form keeps the toggle as the last start left it
        sidebar.get_by_text("Start paused").click()
    expect(toggle).to_be_checked(checked=paused)
    sidebar.locator(".st-key-start_session button").click()
    wait_until(lambda: {i.id for i in store_of(console).sessions()} - before != set(), "the new session", timeout=30)
    session_id = store_of(console).sessions()[0].id
    expect(sidebar.locator(SESSION_PICKER)).to_have_value(re.compile(rf"{session_id}$"), timeout=30_000)
    expect(page.get_by_role("heading", name=short(task, HEADING_CHARS))).to_be_visible(timeout=30_000)
    started = {info.id for info in store_of(console).sessions()} - before
    assert started == {session_id}, f"one press of Start, one session: {started}"
    if review_timeout is not None:
        wait_until(
            lambda: (
                (state := state_of(console, session_id)).status is RunStatus.PAUSED
                and (state.reason or "").startswith("plan review: 0 ")
            ),
            "the pause for the review of the first plan",
            timeout=review_timeout,
        )
    return session_id


def choose(page: Page, box: Locator, typed: str, option: str | re.Pattern[str]) -> None:
    """Pick `option` in a searchable select box by typing `typed` (which leaves only that option) and
    pressing Enter, as an operator does with the keyboard.

    A whole-page redraw (the inbox changing, say) closes an open list and forgets which option had
    the focus, so Enter then picks nothing, and typing the same text again does not reopen the list:
    each try empties the box first. A redraw that closed the list is over in a moment, so the first
    tries are short and only the later ones wait long (a loaded machine draws slowly).

    `option` must not match `typed` alone: the box shows the typed text until a pick replaces it, so
    such a check passed with nothing picked when Enter came while a redraw had closed the list."""
    matches_typed = option.search(typed) if isinstance(option, re.Pattern) else option == typed
    assert not matches_typed, f"{option!r} matches the typed {typed!r}: it cannot tell a pick from typing"
    for patience in (2_000, 3_000, 5_000, 10_000, 10_000, 10_000):
        box.fill("")
        box.fill(typed)
        try:
            expect(page.get_by_role("option", name=option)).to_be_visible(timeout=patience)
            box.press("Enter")
            expect(box).to_have_value(option, timeout=patience)
            return
        except AssertionError:
            continue
    expect(box, f"the option {option!r} picked").to_have_value(option)


def step_once(page: Page, console: ConsoleProcess, session_id: str) -> None:
    """Press Step on a paused session and wait until the step is done and the console says so."""
    before = state_of(console, session_id).steps
    # Press between two runs of the page: under stress-ng a Step pressed while the page was being
    # drawn again was once never queued in 30 s (the cause is not known yet).
    expect(page.locator('[data-testid="stApp"]'), "the page between two runs").to_have_attribute(
        "data-test-script-state", "notRunning", timeout=30_000
    )
    control(page, console, "step")
    wait_until(
        lambda: (state := state_of(console, session_id)).steps > before and state.status is RunStatus.PAUSED,
        f"step {before + 1}",
        timeout=60,
    )
    expect(page.get_by_text("paused after one step").first).to_be_visible(timeout=30_000)


def click_node(page: Page, node_id: str) -> None:
    """Click a node's symbol in the tree (its label sits just below it) until the inspector shows it.

    The chart animates when the plan changes, so wait for the label to stand still, and click again
    if a redraw swallowed the click.
    """
    # The id starts the label's first line, after its marks and type, or, when ECharts has wrapped that
    # line (its bold font measured roughly on a slow page), a line of its own.
    pattern = re.compile(rf"^(?:(?:\S+ )*(?:AND|OR|ACT|\?) )?{re.escape(node_id)}(?: ·.*)?$")
    labels = page.locator("svg text").filter(visible=True)
    picked = page.locator(NODE_PICKER)
    for _ in range(4):
        # A node under the pointer is drawn again on ECharts' hover layer, after every other label, and its
        # own label is hidden: the pointer leaves the chart, and only a label on screen counts.
        page.mouse.move(0, 0)
        expect(labels.filter(has_text=pattern).first, f"the label of {node_id} in the tree").to_be_visible(
            timeout=20_000
        )
        box, previous = None, {}
        for _ in range(20):
            index = next((i for i, text in enumerate(labels.all_text_contents()) if pattern.match(text.strip())), None)
            if index is None:  # the chart is being drawn again: its labels come back in a moment
                box, previous = None, {}
                time.sleep(0.3)
                continue
            try:
                labels.nth(index).scroll_into_view_if_needed()  # filling a form below may have scrolled it away
                box = labels.nth(index).bounding_box()
            except PlaywrightError:  # the chart was redrawn between finding the label and measuring it
                box = None
            if box is not None and box == previous:
                break
            previous = box
            time.sleep(0.3)
        if box is None:
            continue
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] - 7)
        try:
            expect(picked).to_have_value(re.compile(rf"^{re.escape(node_id)} · "), timeout=5_000)
            return
        except AssertionError:
            continue
    raise AssertionError(f"could not select node {node_id} by clicking the tree")


def edit_node(page: Page, node_id: str) -> None:
    """Select a node in the tree and open its actions, beside the tree; return once they are drawn
    for that node (a form of the node selected before may linger for a redraw)."""
    click_node(page, node_id)
    open_tab(page, "Edit plan")
    expect(page.get_by_text(f"Edit the plan at {node_id} (", exact=False).first).to_be_visible(timeout=30_000)


def open_tab(page: Page, name: str) -> None:
    """Open the tab `name`: a redraw can leave the old set of tabs for a moment, so wait for one."""
    tab = page.get_by_role("tab", name=name)
    expect(tab, f"one {name!r} tab").to_have_count(1, timeout=30_000)
    tab.click()


def box_of(locator: Locator, what: str) -> FloatRect:
    """Where `locator` is drawn, once it is: a redraw right after a start can hide it for a moment."""
    boxes: list[FloatRect] = []
    wait_until(
        lambda: boxes.append(locator.bounding_box()) or boxes[-1] is not None, f"{what} to be laid out", timeout=30
    )
    return cast(FloatRect, boxes[-1])


def only(page: Page, selector: str) -> Locator:
    """The selected node's own form field: the form of the node selected before may linger for a
    redraw, so wait until this one is the only match."""
    field = page.locator(selector)
    expect(field, f"one {selector}, the selected node's").to_have_count(1, timeout=30_000)
    return field


def queued(page: Page, console: ConsoleProcess, press: Callable[[], object], what: str) -> None:
    """Press (click a button, type a shortcut) and return once the command it sends is queued: a test
    that leaves the page right after (`wait_for_the_end`) could otherwise close the page before the
    press reached the console, and on a loaded machine the command was never sent."""
    session_id = parse_qs(urlparse(page.url).query)["session"][0]
    before = store_of(console).session(session_id).last_order
    press()
    wait_until(
        lambda: store_of(console).session(session_id).last_order > before, f"the {what} to be queued", timeout=30
    )


def control(page: Page, console: ConsoleProcess, verb: str) -> None:
    """Press a run control, once its command is queued (see `queued`). Until a run ends, Streamlit keeps
    the control it replaces on the page, marked stale (see `SESSION_PICKER`): the press goes to the new one."""
    button = page.locator(f'.st-key-ctl_{verb}[data-stale="false"] button')
    queued(page, console, button.click, f"{verb} press")
