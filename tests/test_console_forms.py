"""A form's answer comes from the redraw's snapshot: "queued" at the press, then applied or refused as
soon as a redraw's view finds the command handled; its fields are emptied once it is applied, and
only then: a command the runner refuses leaves what the operator typed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

import ui.forms
from sessions.client import Outcome, OutcomeKind
from sessions.client.outcomes import CommandOutcome

QUEUED = Outcome(OutcomeKind.QUEUED, "inject queued; it applies at the next step boundary", "s1", "c1", "inject")


def _form() -> None:
    from types import SimpleNamespace

    import streamlit as st

    from planner.commands import Inject
    from ui.forms import scope, sending, show_result, submit

    where = scope("s1", "0")
    st.text_area("Sub-goals", key=where.key("goals"))
    st.button(
        "Inject",
        key="go",
        on_click=submit,
        args=sending(None, where, "inject", lambda: Inject(parent="0", goals=["x"]), ("goals",)),  # type: ignore[arg-type]
    )
    show_result(SimpleNamespace(handled=st.session_state["_handled"]), where, "inject")  # type: ignore[arg-type]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """What the forms sent: (command kind, command id); each press answers "queued" as command c1."""
    sent: list[tuple[str, str]] = []

    def send(ctx: object, session_id: str, command: object, command_id: str) -> Outcome:
        sent.append((getattr(command, "kind", ""), command_id))
        return QUEUED

    monkeypatch.setattr(ui.forms, "send", send)
    yield sent


def _press() -> AppTest:
    at = AppTest.from_function(_form)
    at.session_state["_handled"] = {}
    at.run()
    at.text_area[0].input("Check the reviews")
    at.button(key="go").click()
    at.run()
    return at


def _handled(at: AppTest, outcome: CommandOutcome) -> None:
    """The runner handles c1: the next redraw's view has its answer."""
    at.session_state["_handled"] = {"c1": outcome}


def test_a_press_answers_queued_at_once_and_applied_at_the_redraw_that_finds_it(sent: list[tuple[str, str]]) -> None:
    at = _press()
    assert [i.value for i in at.info] == ["inject queued; it applies at the next step boundary"]
    assert at.text_area[0].value == "Check the reviews", "still queued: the goals stay"
    _handled(at, CommandOutcome(True, None, 9))
    at.run()
    assert [s.value for s in at.success] == ["inject applied"]
    at.run()
    assert at.text_area[0].value == "", "applied: at the next redraw the field is new and empty"
    assert [kind for kind, _ in sent] == ["inject"]


def test_each_drawing_of_a_control_sends_its_own_command_id(sent: list[tuple[str, str]]) -> None:
    """A replayed press reuses the id drawn with the control; a press on a later drawing has a new one."""
    at = _press()
    at.button(key="go").click()
    at.run()
    ids = [command_id for _, command_id in sent]
    assert len(ids) == 2 and len(set(ids)) == 2, f"two presses on two drawings sent {ids}"


def test_a_plain_applied_answer_goes_after_a_while_a_refusal_stays(
    sent: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.commands

    at = _press()
    _handled(at, CommandOutcome(True, None, 9))
    at.run()
    assert [s.value for s in at.success] == ["inject applied"]
    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at.run()
    assert not at.success, "the applied answer has gone"
    at = _press()
    _handled(at, CommandOutcome(False, "0 is pruned; reopen it first", 9))
    at.run()
    at.run()
    assert [e.value for e in at.error] == ["0 is pruned; reopen it first"], "a refusal stays"


def test_an_applied_answer_shows_at_its_first_draw_however_slow_the_draw(
    sent: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fade's clock starts at the first draw, not at the answer: a redraw slower than APPLIED_SECONDS
    must not take the answer away unseen (here every draw is "slower" than a zero-second fade)."""
    import ui.commands

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at = _press()
    _handled(at, CommandOutcome(True, None, 9))
    at.run()
    assert [s.value for s in at.success] == ["inject applied"], "the answer is drawn once at least"
    at.run()
    assert not at.success, "and goes at the next redraw"


def test_a_queued_inject_the_runner_refuses_keeps_its_field(sent: list[tuple[str, str]]) -> None:
    at = _press()
    _handled(at, CommandOutcome(False, "0 is pruned; reopen it first", 9))
    at.run()
    assert [e.value for e in at.error] == ["0 is pruned; reopen it first"]
    at.run()
    assert at.text_area[0].value == "Check the reviews", "a refused inject keeps what the operator typed"


def test_an_applied_command_with_a_warning_shows_both_under_its_form(sent: list[tuple[str, str]]) -> None:
    warning = "already ran in the browser: 0.1 (click [3]); pruning takes it out of the plan but does not undo it"
    at = _press()
    _handled(at, CommandOutcome(True, None, 9, warning))
    at.run()
    assert not at.success, "an answer with a warning is no plain success"
    shown = "inject applied — already ran in the browser: 0.1 (click \\[3\\]); pruning takes it out of the plan"
    assert [w.value for w in at.warning] == [f"{shown} but does not undo it"]


def test_input_a_form_cannot_make_a_command_of_is_one_sentence_and_sends_nothing(sent: list[tuple[str, str]]) -> None:
    def form() -> None:
        from types import SimpleNamespace

        import streamlit as st

        from planner.commands import Prune
        from ui.forms import scope, sending, show_result, submit

        where = scope("s1", "0.1")
        st.button(
            "Prune",
            key="go",
            on_click=submit,
            args=sending(None, where, "prune", lambda: Prune(node="0.1", reason=" ")),
        )  # type: ignore[arg-type]
        show_result(SimpleNamespace(handled={}), where, "prune")  # type: ignore[arg-type]

    at = AppTest.from_function(form)
    at.run()
    at.button(key="go").click()
    at.run()
    assert [e.value for e in at.error] == ["Reason: cannot be blank; write some text"], (
        "the model's own rule, in the form's words"
    )
    assert sent == [], "nothing was sent"


def _controls_flash() -> None:
    from types import SimpleNamespace

    import streamlit as st

    from ui.views.header import FLASH, _flash

    st.session_state.setdefault(FLASH, ("s1", st.session_state["_answer"], None))
    _flash(SimpleNamespace(session_id="s1", handled={}))  # type: ignore[arg-type]


def test_the_controls_flash_shows_a_plain_answer_once_however_slow_the_draw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ui.commands

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at = AppTest.from_function(_controls_flash)
    at.session_state["_answer"] = Outcome(OutcomeKind.APPLIED, "resume applied", "s1", "c1", "resume")
    at.run()
    assert [s.value for s in at.success] == ["resume applied"], "the answer is drawn once at least"
    at.run()
    assert not at.success, "and goes at the next redraw"


def test_the_controls_flash_shows_the_engines_warning_and_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import ui.commands

    monkeypatch.setattr(ui.commands, "APPLIED_SECONDS", 0.0)
    at = AppTest.from_function(_controls_flash)
    at.session_state["_answer"] = Outcome(
        OutcomeKind.APPLIED, "resume applied", "s1", "c1", "resume", warning="mind it"
    )
    at.run()
    at.run()  # past APPLIED_SECONDS: a plain "applied" would be gone by now
    assert [w.value for w in at.warning] == ["resume applied — mind it"]
    assert not at.success
