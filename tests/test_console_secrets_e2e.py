"""A password never shows on the console's page, in real Chromium: the bundled checkout task declares
the shop's password as a secret, the operator approves every guarded step from the page, and at each
approval and on every tab after the run, neither the page's text nor any field's value holds it (that it
never reaches what the page is drawn from is checked headless, in tests/test_console_secrets.py)."""

from __future__ import annotations

import re

import pytest
from console_helpers import open_console, open_tab, start_demo, state_of
from playwright.sync_api import Page, expect
from waiting import wait_until

from planner.state import RunStatus
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "demo-pass-123"
_SHOWN_JS = """() => [document.body.innerText,
  ...Array.from(document.querySelectorAll('input, textarea'), e => e.value),
  ...Array.from(document.querySelectorAll('[title], [aria-label]'), e => e.title + ' ' + e.getAttribute('aria-label'))]
  .join('\\n')"""
"""What a person can read on the page: its text, every field's value, every tooltip and label."""


def _shown(page: Page) -> str:
    return str(page.evaluate(_SHOWN_JS))


def test_the_password_of_a_checkout_never_shows_on_the_page(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "checkout-french-press")
    # Nothing to check before the first guarded step (a live page costs the browser most of a core): the
    # page is opened again at the first request and lives on through every later one to the end.
    session_url = page.url
    page.goto("about:blank")
    wait_until(
        lambda: (s := state_of(console, session_id)).status is RunStatus.AWAITING_APPROVAL or s.finished,
        "the first approval",
        timeout=180,
    )
    page.goto(session_url)
    rules: list[str] = []
    while True:
        wait_until(
            lambda: (s := state_of(console, session_id)).status is RunStatus.AWAITING_APPROVAL or s.finished,
            "the next approval or the end of the run",
            timeout=180,
        )
        state = state_of(console, session_id)
        if state.finished:
            break
        assert state.approval is not None
        rules.append(state.approval.rule)
        approve = page.locator(".st-key-approve_submit button")
        expect(approve, f"the approval box for {state.approval.rule}").to_be_visible(timeout=30_000)
        assert PASSWORD not in _shown(page), f"the password shows beside the approval of {state.approval.rule!r}"
        # Pressed between two runs of the page (see `console_helpers.step_once`).
        expect(page.locator('[data-testid="stApp"]'), "the page between two runs").to_have_attribute(
            "data-test-script-state", "notRunning", timeout=30_000
        )
        approve.click()
        wait_until(
            lambda seq=state.seq: state_of(console, session_id).seq > seq, "the approval to be applied", timeout=60
        )
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert "password field" in rules, f"typing the password was approved from the page: {rules}"
    typed = next(n for n in state.tree.nodes.values() if n.action and "{{ACCOUNT_PASSWORD}}" in n.action)
    page.goto(f"{console.url}/?session={session_id}&node={typed.id}")  # a finished branch is folded in the tree
    expect(
        page.get_by_text("{{ACCOUNT_PASSWORD}}").filter(visible=True).first, "the action as the model wrote it"
    ).to_be_visible(timeout=30_000)
    drawn = {
        "Timeline": page.get_by_text("Fork from event", exact=False),
        "All sessions": page.locator('[data-testid="stDataFrame"]'),  # a canvas: its text is checked headless
        "Plan changes": page.get_by_text(re.compile(r"changes to the plan, oldest first|No change to the plan yet")),
        "Task & answer": page.get_by_text("Request rules", exact=False),
    }
    for tab, mark in drawn.items():
        open_tab(page, tab)
        expect(mark.first, f"the {tab} tab drawn").to_be_visible(timeout=30_000)
        assert PASSWORD not in _shown(page), f"the password shows on the {tab} tab"
