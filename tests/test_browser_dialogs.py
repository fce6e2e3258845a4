"""A page's own dialogs (alert, confirm, prompt): answered, reported, and a risky confirm held for an operator.

Playwright dismisses every dialog nobody handles, so a `confirm` used to answer "cancel" unseen. The
policy (`planner.browser.dialogs`) is pure and shared by the real and the dry environment; the engine
turns a dismissed risky confirm into an approval request, and the approved action runs again with the
dialog accepted. `gallery_dialogs.html` names its buttons harmlessly ("Reset"): only the dialog says
"Delete your account?", so only the dialog can tell the guard.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import new_state

from bench.browser import find, hits
from planner.browser.chromium import find_chromium
from planner.browser.dialogs import answer_dialog
from planner.browser.dry import DryEnvironment
from planner.browser.environment import BrowserEnvironment
from planner.commands import Approve, apply_command
from planner.engine import Engine
from planner.events import Kind
from planner.guard import GuardRules, make_guard
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ActionResult
from planner.state import RunStatus, SessionState

TASK = "Reset the account"
HELD = (
    "the page asked to confirm 'Delete your account? This cannot be undone.'; dismissed, since accepting it "
    "needs an operator's approval"
)
RESET_RULE = "the page asked to confirm 'Delete your account? This cannot be undone.', which matches 'delete'"
LATE = {
    "Clear history": ("Delete the order history? This cannot be undone.", "history"),
    "Sync drafts": ("Delete the 3 drafts the server no longer has?", "drafts"),
}
"""The buttons whose confirm comes late (a 400 ms timer; a fetch the server answers after a second):
the question, and the word the page's status line uses for what it deletes."""
_needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed")


# -- the policy (pure) ---------------------------------------------------------------------------


def test_alerts_and_harmless_questions_are_accepted_and_reported() -> None:
    rules = GuardRules()
    alert = answer_dialog("alert", "Saved.", "", rules, approved=False)
    assert (alert.accept, alert.report, alert.held) == (True, "the page showed an alert: 'Saved.'; accepted", None)
    confirm = answer_dialog("confirm", "Throw away\nthe changes?", "", rules, approved=False)
    assert confirm.accept and confirm.report == "the page asked to confirm 'Throw away the changes?'; accepted"
    prompt = answer_dialog("prompt", "New name?", "Summer", rules, approved=False)
    assert (prompt.accept, prompt.text) == (True, "Summer")
    assert prompt.report == "the page asked for an answer to 'New name?'; answered 'Summer'"
    leaving = answer_dialog("beforeunload", "", "", rules, approved=False)
    assert leaving.accept and leaving.report == "the page asked to confirm leaving it; accepted"


def test_a_question_with_a_risky_term_is_dismissed_unless_approved_by_the_guards_one_rule() -> None:
    rules = GuardRules()
    for message in (
        "Delete your account?",
        "DELETE\u200b your account?",
        "Really pay $40?",
        "Type PlaceOrder to go on",
    ):
        answer = answer_dialog("confirm", message, "", rules, approved=False)
        assert not answer.accept and answer.held is not None, message
        assert answer.report.endswith("; dismissed, since accepting it needs an operator's approval")
    held = answer_dialog("prompt", "Type DELETE to delete the project", "", rules, approved=False)
    assert held.held == "the page asked for an answer to 'Type DELETE to delete the project', which matches 'delete'"
    approved = answer_dialog("confirm", "Delete your account?", "", rules, approved=True)
    assert approved.accept and approved.report.endswith("; accepted, as an operator approved the action")
    assert answer_dialog("confirm", "Wipe it?", "", GuardRules(risky_names=["wipe"]), approved=False).held
    assert answer_dialog("confirm", "Display the payment methods?", "", rules, approved=False).accept


# -- the engine: held, asked, approved, run again ------------------------------------------------


def _held_then_approved(
    env: DryEnvironment | BrowserEnvironment, action: str, start: str, rule: str = RESET_RULE
) -> SessionState:
    """Run a one-action session up to its approval request, check that it asks `rule`, approve it and run it out."""
    state, _ = new_state(TASK)
    script = Script.model_validate({"nodes": {TASK: {"type": "ACTION", "action": action}}})
    engine = Engine(state, ScriptedModel(script), env, guard=make_guard(GuardRules(), start))
    for _ in range(10):
        if not engine.step() or state.status is RunStatus.AWAITING_APPROVAL:
            break
    assert state.status is RunStatus.AWAITING_APPROVAL, state.reason
    assert state.approval is not None
    assert state.approval.rule == rule
    assert state.metrics.actions == 0, "the dismissed attempt is not recorded as the action run"
    apply_command(state, Approve())
    for _ in range(20):
        if not engine.step():
            break
    return state


def test_a_held_confirm_becomes_an_approval_request_and_the_approved_action_accepts_it_dry() -> None:
    env = DryEnvironment(confirms={"click [7]": "Delete your account? This cannot be undone."})
    state = _held_then_approved(env, "click [7]", "dry://start")
    assert env.executed == ["click [7]", "click [7]"]
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert state.page_text.startswith("(the page asked to confirm 'Delete your account? This cannot be undone.'; ")
    assert "accepted, as an operator approved the action)" in state.page_text


def test_with_the_guard_off_a_held_confirm_is_a_plain_failure() -> None:
    state, _ = new_state(TASK)
    script = Script.model_validate({"nodes": {TASK: {"type": "ACTION", "action": "click [7]"}}})
    env = DryEnvironment(confirms={"click [7]": "Delete your account? This cannot be undone."})
    engine = Engine(state, ScriptedModel(script), env, guard=None)
    log = [event for _ in range(20) for event in engine.step()]
    assert state.approval is None and env.executed == ["click [7]"]
    failures = [e.payload.error for e in log if e.kind is Kind.ACTION_EXECUTED]
    assert failures == [HELD]


# -- real Chromium --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(gallery_site: str) -> Iterator[BrowserEnvironment]:
    with BrowserEnvironment(f"{gallery_site}/gallery_dialogs.html") as environment:
        environment.start()
        yield environment


def _click(env: BrowserEnvironment, gallery_site: str, name: str, *, approved: bool = False) -> ActionResult:
    page = env.goto(f"{gallery_site}/gallery_dialogs.html").page
    assert page is not None
    shown = find(page.text, name)
    assert shown is not None, page.text
    hits(env)
    result = env.execute(f"click [{shown.id}]", approved=approved)
    assert hits(env) == [name]
    return result


@pytest.mark.browser
@_needs_chromium
def test_alert_confirm_and_prompt_are_answered_and_reported(env: BrowserEnvironment, gallery_site: str) -> None:
    saved = _click(env, gallery_site, "Save")
    assert saved.ok and saved.reports == ("the page showed an alert: 'Saved. Your changes are live.'; accepted",)
    assert saved.page is not None and "(the page showed an alert: 'Saved. Your changes are live.'; accepted)" in (
        saved.page.text
    )
    discarded = _click(env, gallery_site, "Discard changes")
    assert discarded.ok and discarded.page is not None
    assert "status: changes discarded" in discarded.page.text, "the confirm was answered OK, not cancel"
    renamed = _click(env, gallery_site, "Rename")
    assert renamed.ok and renamed.page is not None
    assert "Draft: Summer newsletter." in renamed.page.text, "the prompt was answered with its default"
    assert renamed.reports == (
        "the page asked for an answer to 'New name for the draft?'; answered 'Summer newsletter'",
    )
    assert env.observe().text.splitlines()[1] == "# Account settings", "a report is told once"


@pytest.mark.browser
@_needs_chromium
def test_a_risky_confirm_is_dismissed_and_the_action_fails_unless_approved(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    held = _click(env, gallery_site, "Reset")
    assert not held.ok and held.error == HELD
    assert held.held_dialog == RESET_RULE
    assert held.page is not None and "status: account kept" in held.page.text and f"({HELD})" in held.page.text
    approved = _click(env, gallery_site, "Reset", approved=True)
    assert approved.ok and approved.held_dialog is None, approved.error
    assert approved.page is not None and "status: account deleted" in approved.page.text


@pytest.mark.browser
@_needs_chromium
@pytest.mark.parametrize("name", list(LATE))
def test_a_risky_confirm_the_page_opens_late_is_held_and_reported_with_the_action_that_caused_it(
    env: BrowserEnvironment, gallery_site: str, name: str
) -> None:
    question, what = LATE[name]
    held = _click(env, gallery_site, name)
    dismissed = f"the page asked to confirm '{question}'; dismissed, since accepting it needs an operator's approval"
    assert not held.ok and held.held_dialog == f"the page asked to confirm '{question}', which matches 'delete'", (
        held.error
    )
    assert held.error == dismissed and held.reports == (dismissed,)
    assert held.page is not None and f"status: {what} kept" in held.page.text, "the page is read after its answer"
    approved = _click(env, gallery_site, name, approved=True)
    assert approved.ok and approved.held_dialog is None, approved.error
    assert approved.reports == (
        f"the page asked to confirm '{question}'; accepted, as an operator approved the action",
    ), "the approval still held when the late question came"
    assert approved.page is not None and f"status: {what} deleted" in approved.page.text
    assert env.observe().text.splitlines()[1] == "# Account settings", "nothing was left for later"


@pytest.mark.browser
@_needs_chromium
@pytest.mark.parametrize(
    ("name", "rule", "done"),
    [
        ("Reset", RESET_RULE, ("#account", "deleted")),
        (
            "Clear history",
            f"the page asked to confirm '{LATE['Clear history'][0]}', which matches 'delete'",
            ("#history", "none"),
        ),
    ],
)
def test_the_engine_asks_an_operator_with_the_dialogs_text_and_the_approved_run_accepts_it(
    gallery_site: str, name: str, rule: str, done: tuple[str, str]
) -> None:
    start = f"{gallery_site}/gallery_dialogs.html"
    with BrowserEnvironment(start) as env:
        page = env.observe()
        button = find(page.text, name)
        assert button is not None
        state = _held_then_approved(env, f"click [{button.id}]", start, rule)
        assert state.status is RunStatus.SUCCEEDED, state.reason
        selector, text = done
        assert env._require_page().inner_text(selector) == text  # no public API reads the DOM; the test must
