"""A form's fields are emptied once its command is applied, and only then: a command the runner
refuses after the press has returned ("queued") leaves what the operator typed."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

import ui.forms
from ui.commands import Outcome

QUEUED = Outcome("queued", "inject queued; it applies at the next step boundary", "s1", "c1", 0, "inject")


def _form() -> None:
    import streamlit as st

    from ui.forms import scope, show_result, submit

    where = scope("s1", "0")
    st.text_area("Sub-goals", key=where.key("goals"))
    st.button(
        "Inject",
        key="go",
        on_click=submit,
        args=(None, where, "inject", lambda: {"kind": "inject", "goals": ["x"]}, ("goals",)),
    )
    show_result(where, "inject")


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Outcome]]:
    """What the runner answers: `send` returns the first answer, each redraw's `settle` the next one."""
    answers: list[Outcome] = []
    monkeypatch.setattr(ui.forms, "send", lambda ctx, session_id, payload: answers.pop(0))
    monkeypatch.setattr(ui.forms, "settle", lambda store, outcome: answers.pop(0) if answers else outcome)
    monkeypatch.setattr(ui.forms, "console", lambda: SimpleNamespace(store=None))
    yield answers


def _press(answers: list[Outcome], *later: Outcome) -> AppTest:
    at = AppTest.from_function(_form)
    at.run()
    at.text_area[0].input("Check the reviews")
    at.button(key="go").click()
    answers.extend(later)
    at.run()
    return at


def test_an_inject_applied_within_the_press_empties_its_field(answers: list[Outcome]) -> None:
    at = _press(answers, Outcome("applied", "inject applied", "s1", "c1", 0, "inject"))
    assert at.text_area[0].value == "", "the applied inject's goals are gone from the form"
    assert [s.value for s in at.success] == ["inject applied"]


def test_a_plain_applied_answer_goes_after_a_while_a_refusal_stays(
    answers: list[Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12, defect 2: "inject applied" stayed under its form for the life of the tab."""
    import ui.commands

    at = _press(answers, Outcome("applied", "inject applied", "s1", "c1", 0, "inject"))
    assert [s.value for s in at.success] == ["inject applied"]
    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at.run()
    assert not at.success, "the applied answer has gone"
    at = _press(answers, QUEUED, Outcome("rejected", "0 is pruned; reopen it first", "s1", "c1", 0, "inject"))
    at.run()
    at.run()
    assert [e.value for e in at.error] == ["0 is pruned; reopen it first"], "a refusal stays"


def test_an_applied_answer_shows_at_its_first_draw_however_slow_the_draw(
    answers: list[Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fade's clock starts at the first draw, not at the answer: a redraw slower than APPLIED_SECONDS
    must not take the answer away unseen (here every draw is "slower" than a zero-second fade)."""
    import ui.commands

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at = _press(answers, Outcome("applied", "inject applied", "s1", "c1", 0, "inject"))
    assert [s.value for s in at.success] == ["inject applied"], "the answer is drawn once at least"
    at.run()
    assert not at.success, "and goes at the next redraw"


def test_a_queued_inject_empties_its_field_only_once_applied(answers: list[Outcome]) -> None:
    at = _press(answers, QUEUED, QUEUED)
    assert at.text_area[0].value == "Check the reviews", "still queued: the goals stay"
    answers.append(Outcome("applied", "inject applied", "s1", "c1", 0, "inject"))
    at.run()
    at.run()
    assert at.text_area[0].value == "", "applied at a later redraw: the field is new and empty"


def test_a_queued_inject_the_runner_refuses_keeps_its_field(answers: list[Outcome]) -> None:
    at = _press(answers, QUEUED, Outcome("rejected", "0 is pruned; reopen it first", "s1", "c1", 0, "inject"))
    at.run()
    assert [e.value for e in at.error] == ["0 is pruned; reopen it first"]
    assert at.text_area[0].value == "Check the reviews", "a refused inject keeps what the operator typed"


def test_an_applied_command_with_a_warning_shows_both_under_its_form(answers: list[Outcome]) -> None:
    warned = Outcome(
        "applied",
        "prune applied",
        "s1",
        "c1",
        0,
        "prune",
        warning="already ran in the browser: 0.1 (click [3]); pruning takes it out of the plan but does not undo it",
    )
    at = _press(answers, warned)
    assert not at.success, "an answer with a warning is no plain success"
    shown = "prune applied — already ran in the browser: 0.1 (click \\[3\\]); pruning takes it out of the plan"
    assert [w.value for w in at.warning] == [f"{shown} but does not undo it"]


def _controls_flash() -> None:
    from types import SimpleNamespace

    import streamlit as st

    from ui.views.header import FLASH, _flash

    st.session_state.setdefault(FLASH, ("s1", st.session_state["_answer"], None))
    _flash(SimpleNamespace(store=None), "s1")  # type: ignore[arg-type]


def test_the_controls_flash_shows_a_plain_answer_once_however_slow_the_draw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ui.commands
    import ui.views.header

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    monkeypatch.setattr(ui.views.header, "settle", lambda store, outcome: outcome)
    at = AppTest.from_function(_controls_flash)
    at.session_state["_answer"] = Outcome("applied", "resume applied", "s1", "c1", 0, "resume")
    at.run()
    assert [s.value for s in at.success] == ["resume applied"], "the answer is drawn once at least"
    at.run()
    assert not at.success, "and goes at the next redraw"


def test_the_controls_flash_shows_the_engines_warning_and_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import ui.commands
    import ui.views.header

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    monkeypatch.setattr(ui.views.header, "settle", lambda store, outcome: outcome)
    at = AppTest.from_function(_controls_flash)
    at.session_state["_answer"] = Outcome("applied", "resume applied", "s1", "c1", 0, "resume", warning="mind it")
    at.run()
    at.run()  # past APPLIED_SECONDS: a plain "applied" would be gone by now
    assert [w.value for w in at.warning] == ["resume applied — mind it"]
    assert not at.success
