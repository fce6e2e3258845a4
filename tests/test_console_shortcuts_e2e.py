"""Keyboard shortcuts (issue 12, "make supervising fast"): the keys of `ui.shortcuts` drive the run,
the approval box and the node selection, are listed in the help popover, and never fire while the
operator types in a field.

The AppTest checks come first (headless, seconds); then the real console in headless Chromium, with the
helpers of tests/test_console_e2e.py: each key is pressed as an operator does, and the session store
says what it did.
"""

from __future__ import annotations

import re

import pytest
from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import (
    NODE_PICKER,
    TASKS,
    console_app,
    node_picker,
    open_console,
    queued,
    start_demo,
    state_of,
    store_of,
    wait_for_the_end,
)
from playwright.sync_api import Locator, Page, expect
from streamlit.elements.lib.shortcut_utils import normalize_shortcut
from waiting import wait_until

from demo.tasks import check_answer
from planner.events import Cause, CommandApplied, CommandRejected
from planner.state import RunStatus
from sessions.client.creation import create_session
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from ui.server import ConsoleProcess
from ui.shortcuts import SHORTCUTS, ShortcutName


def key_of(name: ShortcutName) -> str:
    """The key as a button's proto and Playwright's keyboard spell it."""
    return normalize_shortcut(SHORTCUTS[name].key)


# -- the map and the buttons, headless ---------------------------------------------------------------


def test_every_key_is_one_streamlit_binds_and_no_two_share_one() -> None:
    keys = [normalize_shortcut(shortcut.key) for shortcut in SHORTCUTS.values()]  # raises on R, C, "."
    assert len(set(keys)) == len(keys), keys
    assert all(re.fullmatch(r"[a-z0-9]", key) for key in keys), "single keys: typing in a field never fires them"


@pytest.fixture
def db(app_db: str) -> str:
    return app_db


def test_the_buttons_carry_the_maps_keys_and_the_node_buttons_walk_the_tree(db: str) -> None:
    store = open_store(db)
    session_id = create_session(
        store, BROWNIE_TASK, f"script:{SCRIPTS / 'brownie.json'}", start_url="dry://start", paused=True
    )
    at = console_app()
    at.run()
    for steps in (1, 2):  # the constraints, then the root's expansion
        at.button(key="ctl_step").click().run()
        wait_until(lambda steps=steps: load_state(store, session_id).steps == steps, f"step {steps}", timeout=60)
    at.run()
    assert not at.exception, at.exception
    keys = {button.key: button.proto.shortcut for button in at.button}
    assert keys["ctl_resume"] == key_of("resume") and keys["ctl_pause"] == key_of("pause")
    assert keys["ctl_step"] == key_of("step") and keys["ctl_stop"] == "", "Stop has no key"
    assert keys["previous_node"] == key_of("previous_node") and keys["next_node"] == key_of("next_node")
    assert keys["breakpoint_btn"] == key_of("breakpoint"), "Break here, in the selected node's action bar"
    order = [node.id for node in load_state(store, session_id).tree.walk()]
    assert node_picker(at).value == order[0]
    at.button(key="previous_node").click().run()
    assert node_picker(at).value == order[0], "the first node stays put"
    for node_id in order[1:]:
        at.button(key="next_node").click().run()
        assert node_picker(at).value == node_id
    at.button(key="next_node").click().run()
    assert node_picker(at).value == order[-1], "the last node stays put"
    at.button(key="previous_node").click().run()
    assert node_picker(at).value == order[-2]
    [help_table] = [m.value for m in at.markdown if m.value.startswith("| Key | Does |")]
    for shortcut in SHORTCUTS.values():
        assert f"| `{shortcut.key}` | {shortcut.does} |" in help_table


# -- the real console in Chromium --------------------------------------------------------------------


def commands(console: ConsoleProcess, session_id: str, kind: str) -> int:
    """How many `kind` commands the session has received: handled (in the log) or still queued, by id,
    so a command handled between the two reads is counted once."""
    store = store_of(console)
    queued = {command.command_id for command in store.pending(session_id) if command.payload.get("kind") == kind}
    handled = {
        event.payload.command_id
        for event in store.load(session_id)
        if isinstance(event.payload, CommandApplied | CommandRejected) and event.payload.command.get("kind") == kind
    }
    return len(queued | handled)


_WATCH = """() => {
    document.activeElement?.blur();
    window.__took = null;
    window.addEventListener("keydown", event => { window.__took = event.defaultPrevented; }, {once: true});
}"""
"""Blur the focus and note whether a shortcut takes the next key: the window's listener is the last to
see it, after Streamlit's on the document, which prevents the default of each key it takes."""


def press(page: Page, name: ShortcutName, button: Locator) -> None:
    """Press a shortcut with the focus on no field, once `button` (the one it triggers) can take it.

    A key does nothing while its button is disabled, and the page may not show the new state yet; a
    redraw may also remount the button the moment the key goes down. So the key is pressed again until
    a shortcut takes it (never once one did: that would send the command twice)."""
    key = key_of(name)
    for _ in range(5):
        expect(button, f"the button of {name!r} enabled").to_be_enabled(timeout=30_000)
        page.evaluate(_WATCH)
        page.keyboard.press(key)
        took = page.evaluate("() => window.__took")
        assert took is not None, f"the key {key!r} never reached the page"
        if took:
            return
    raise AssertionError(f"no shortcut took the key {key!r} ({name}) in five presses")


def button(page: Page, key: str) -> Locator:
    """The button of widget `key` as the last redraw drew it (a redraw marks the copy it replaces stale);
    the first: a button with a tooltip keeps a hidden copy beside it, to measure its label."""
    return page.locator(f'.st-key-{key}:not([data-stale="true"]) button').first


def control(page: Page, verb: str) -> Locator:
    return button(page, f"ctl_{verb}")


def url_node(page: Page) -> str | None:
    """The URL's ?node= as the browser shows it now (asked of the page: `page.url` lags)."""
    return page.evaluate("() => new URLSearchParams(location.search).get('node')")


def selected(page: Page) -> Locator:
    return page.locator(NODE_PICKER)


def steady(field: Locator, what: str) -> None:
    """Wait until the browser has stopped rebuilding `field` (the same element over six polls, about 1.5 s): a redraw
    still under way after a selection can replace an input while keys are typed into it, and the
    keys then land on the page."""
    seen: list[str | None] = []

    def same_for_a_while() -> bool:
        seen.append(field.get_attribute("id"))
        return len(seen) >= 6 and len(set(seen[-6:])) == 1

    wait_until(same_for_a_while, f"{what} to stand still", timeout=60)


def select_by_key(page: Page, name: ShortcutName, node_id: str) -> None:
    """Move the selection by key and wait until the selector and the URL show `node_id`.

    A redraw racing the move can put the old selection back (as it can swallow a click on the tree,
    see `click_node` in test_console_e2e.py): the key is pressed again only while the selection has
    not moved at all."""
    before = selected(page).input_value()
    for _ in range(3):
        press(page, name, button(page, name))
        try:
            expect(selected(page)).to_have_value(re.compile(rf"^{re.escape(node_id)} · "), timeout=15_000)
            break
        except AssertionError:
            assert selected(page).input_value() == before, f"{name} moved the selection elsewhere than {node_id}"
    expect(selected(page), f"node {node_id} selected by {name}").to_have_value(
        re.compile(rf"^{re.escape(node_id)} · "), timeout=30_000
    )
    wait_until(lambda: url_node(page) == node_id, f"the URL to hold ?node={node_id}", timeout=60)


def step_by_key(page: Page, console: ConsoleProcess, session_id: str) -> None:
    """S on a paused session: one step runs, then the session pauses again, and the page says so."""
    before = state_of(console, session_id).steps
    press(page, "step", control(page, "step"))
    wait_until(
        lambda: (state := state_of(console, session_id)).steps > before and state.status is RunStatus.PAUSED,
        f"step {before + 1} by key",
        timeout=60,
    )
    assert state_of(console, session_id).reason == "paused after one step"
    expect(page.get_by_text("paused after one step").first).to_be_visible(timeout=30_000)


@pytest.mark.browser
@pytest.mark.slow
def test_the_keys_are_listed_and_step_resume_pause_and_move_between_nodes(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "waterproof-backpacks-rgb-keyboards", paused=True)
    page.get_by_role("button", name=re.compile("Keys")).click()
    rows = page.locator('[data-testid="stPopoverBody"] tbody tr')
    expect(rows, "the help popover: one row per key").to_have_text(
        [re.compile(rf"^\s*{re.escape(s.key)}\s*{re.escape(s.does)}\s*$") for s in SHORTCUTS.values()],
        timeout=30_000,
    )
    page.keyboard.press("Escape")
    expect(rows, "the help popover closed").to_have_count(0, timeout=30_000)
    step_by_key(page, console, session_id)  # 0.1's expansion, after the review of the first plan
    order = [node.id for node in state_of(console, session_id).tree.walk()]
    assert order[:2] == ["0", "0.1"], order
    select_by_key(page, "next_node", "0.1")
    select_by_key(page, "next_node", order[2])
    select_by_key(page, "previous_node", "0.1")
    inspector = page.get_by_text(re.compile(r"^0\.1 · \w+ · \w+ · made by planner")).first
    expect(inspector, "the inspector's heading of 0.1").to_be_visible(timeout=30_000)

    # Typed into a form's field, G and S (both enabled now) send nothing. The key pressed next, outside
    # the field, is handled after them: once its move shows, any command they sent would be recorded.
    steps = commands(console, session_id, "step")
    page.get_by_role("tab", name="Edit plan").click()
    field = page.locator('[class*="st-key-prune_reason-"] input')
    expect(field, "the prune form of 0.1 alone").to_have_count(1, timeout=30_000)
    steady(field, "the prune field of 0.1")
    field.press_sequentially("gs sg")
    expect(field).to_have_value("gs sg")
    select_by_key(page, "previous_node", "0")
    assert commands(console, session_id, "resume") == 0, "G typed into a field resumed the run"
    assert commands(console, session_id, "step") == steps, "S typed into a field stepped the run"
    assert state_of(console, session_id).status is RunStatus.PAUSED

    press(page, "resume", control(page, "resume"))
    wait_until(lambda: state_of(console, session_id).steps > 2, "the run to go on after G", timeout=60)
    # Typed into a field while the run goes on (P enabled), P does not pause it; outside a field it does.
    # The task is a long one (about 100 steps): the run must still be going when P is pressed.
    expect(control(page, "pause"), "P enabled: the run goes on").to_be_enabled(timeout=30_000)
    task_text = page.locator('[data-testid="stSidebar"] .st-key-new_task_text textarea')
    task_text.press_sequentially("p")
    expect(task_text).to_have_value("p")
    select_by_key(page, "next_node", "0.1")
    assert commands(console, session_id, "pause") == 0, "P typed into a field paused the run"
    assert state_of(console, session_id).status is RunStatus.RUNNING, "the run was still going (P enabled)"
    press(page, "pause", control(page, "pause"))
    wait_until(lambda: state_of(console, session_id).status is RunStatus.PAUSED, "the pause by key", timeout=60)
    assert state_of(console, session_id).reason == "paused by operator"


@pytest.mark.browser
@pytest.mark.slow
def test_approve_by_key(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "add-backpack-to-cart")
    wait_until(
        lambda: state_of(console, session_id).status is RunStatus.AWAITING_APPROVAL, "the approval request", timeout=60
    )
    queued(page, console, lambda: press(page, "approve", button(page, "approve_submit")), "approve key")
    wait_for_the_end(page, console, session_id, 90, "the run to finish after A")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert commands(console, session_id, "approve") == 1
    assert check_answer(TASKS["add-backpack-to-cart"], state.final_answer or "").passed, state.final_answer


@pytest.mark.browser
@pytest.mark.slow
def test_reject_by_key_after_typing_the_reason(page: Page, console: ConsoleProcess) -> None:
    """The reason holds A and X (approve, reject) and S: typed into the field, none of them fires."""
    open_console(page, console)
    session_id = start_demo(page, console, "add-backpack-to-cart")
    wait_until(
        lambda: state_of(console, session_id).status is RunStatus.AWAITING_APPROVAL, "the approval request", timeout=60
    )
    reason = page.locator('[class*="st-key-approval_reason-"] input')
    # The box is hidden until it is whole (`ui.layout`): keys sent to a hidden field reach the page
    # and its shortcuts (the reason holds A and X), so the field must be on screen and focused first.
    expect(reason, "the approval box's reason field, on screen").to_be_visible(timeout=30_000)
    reason.click()
    expect(reason, "the reason field has the keyboard").to_be_focused()
    reason.press_sequentially("no extra purchases")
    expect(reason).to_have_value("no extra purchases")
    queued(page, console, lambda: press(page, "reject", button(page, "reject_submit")), "reject key")
    wait_until(
        lambda: state_of(console, session_id).cause is Cause.NO_ALTERNATIVE,
        "the run to pause with nothing left to try after X",
        timeout=60,
    )
    state = state_of(console, session_id)
    assert state.status is RunStatus.PAUSED
    assert state.tree["0.3"].reason == "rejected by operator: no extra purchases"
    assert state.metrics.actions == 2, "the add-to-cart click never ran"
    assert commands(console, session_id, "approve") == 0 and commands(console, session_id, "reject") == 1


@pytest.mark.browser
@pytest.mark.slow
def test_ten_rapid_step_presses_run_exactly_ten_steps(page: Page, console: ConsoleProcess) -> None:
    """Each press is one command, however fast they come: Step is pressed again as soon as the last press
    reached the console, while the page may still be drawing (a replayed press is one command, and
    Steps that reach one step boundary add up). Counted at the console's store."""
    open_console(page, console)
    session_id = start_demo(page, console, "wireless-photo-printers", paused=True)
    before = state_of(console, session_id).steps
    step = control(page, "step")
    for pressed in range(1, 11):
        expect(step, f"Step enabled for press {pressed}").to_be_enabled(timeout=30_000)
        step.click()
        wait_until(
            lambda n=pressed: commands(console, session_id, "step") >= n, f"press {pressed} to arrive", timeout=30
        )
    wait_until(
        lambda: (
            not store_of(console).pending(session_id)
            and (state := state_of(console, session_id)).status is RunStatus.PAUSED
            and state.single_steps == 0
        ),
        "every press handled, its steps run and the session paused",
        timeout=120,
    )
    state = state_of(console, session_id)
    assert commands(console, session_id, "step") == 10, "ten presses, ten commands: none lost, none replayed"
    assert state.steps - before == 10, f"ten presses ran {state.steps - before} steps"
    assert state.reason == "paused after one step"
