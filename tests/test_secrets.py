"""Secrets: declared ones typed only by the browser, found ones (a password typed into a password field)
masked for every reader, and neither ever shown to a person, a file or (declared) a model."""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from conftest import MECHANICS

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import Approve, EditAction, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind, SecretFound, SessionCreated
from planner.guard import GuardRules, make_guard
from planner.inputs import InputError
from planner.models.prompts import render_user
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ElementInfo
from planner.questions import Question, Reply, View
from planner.secrets import MASK, Secrets, placeholders, secrets_in
from planner.state import Recorder, RunStatus, SessionState, replay

PASSWORD = "demo-pass-123"
FOUND = "hunter2-found"


# -- the pure rules --------------------------------------------------------------------------------


def test_fill_puts_declared_values_in_and_leaves_unknown_placeholders_as_written() -> None:
    secrets = Secrets({"PASSWORD": PASSWORD, "_pin2": "4711-x"})
    assert secrets.fill("type [3] {{PASSWORD}}") == f"type [3] {PASSWORD}"
    assert secrets.fill("{{_pin2}}{{PASSWORD}} {{OTHER}} {PASSWORD}") == f"4711-x{PASSWORD} {{{{OTHER}}}} {{PASSWORD}}"
    assert placeholders("{{A}} {{b_1}} {{A}} {{1x}} {{ A }}") == ["A", "b_1"]


def test_hide_names_declared_values_and_masks_found_ones_in_every_form() -> None:
    secrets = Secrets({"PASSWORD": "p@ss word&<1>"}, [FOUND])
    page = f"value=p@ss word&<1> url=?pw={quote_plus('p@ss word&<1>')} html={html.escape('p@ss word&<1>')} {FOUND}"
    assert secrets.hide(page) == f"value={{{{PASSWORD}}}} url=?pw={{{{PASSWORD}}}} html={{{{PASSWORD}}}} {MASK}"


def test_mask_replaces_every_value_in_every_form_longest_first() -> None:
    value = 'a"b c/d&é'
    secrets = Secrets({"LONG": value + "-and-more", "SHORT": value}, [FOUND])
    forms = [
        value,
        quote(value),
        quote(value, safe=""),
        quote_plus(value),
        html.escape(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        FOUND,
    ]
    text = " | ".join(forms) + f" | {value}-and-more"
    masked = secrets.mask(text)
    assert masked == " | ".join([MASK] * len(forms)) + f" | {MASK}", masked


def test_short_declared_values_and_bad_names_are_refused_in_one_sentence() -> None:
    with pytest.raises(InputError) as short:
        Secrets({"PIN": "123"})
    assert str(short.value) == (
        "the secret PIN is shorter than 4 characters; masking it would hide ordinary text wherever it appears"
    )
    with pytest.raises(InputError, match="is not a secret's name"):
        Secrets({"1PIN": "12345"})


def test_secrets_never_show_a_value_in_their_repr_and_are_values() -> None:
    secrets = Secrets({"PASSWORD": PASSWORD}, [FOUND])
    assert PASSWORD not in repr(secrets) and FOUND not in repr(secrets)
    assert secrets == Secrets({"PASSWORD": PASSWORD}).with_found(FOUND) and hash(secrets) == hash(
        Secrets({"PASSWORD": PASSWORD}, [FOUND])
    )
    with pytest.raises(AttributeError):
        secrets.found = frozenset()  # type: ignore[misc]
    assert not Secrets() and Secrets().mask("x") == "x"


def test_what_typing_reveals() -> None:
    secrets = Secrets({"PASSWORD": PASSWORD}, [FOUND])
    assert secrets.revealed_by("") is None
    assert secrets.revealed_by(FOUND) is None
    assert secrets.revealed_by(PASSWORD) is None
    assert secrets.revealed_by("{{PASSWORD}}") is None
    assert secrets.revealed_by("x{{PASSWORD}}") == f"x{PASSWORD}"
    assert secrets.revealed_by("{{NOT_DECLARED}}") == "{{NOT_DECLARED}}"
    assert secrets.revealed_by("new-one") == "new-one"


# -- events, the fold and masked events ------------------------------------------------------------


def _log(secrets: dict[str, str] | None = None) -> tuple[SessionState, list[Event]]:
    state = SessionState()
    rec = Recorder(state)
    rec.record(
        Kind.SESSION_CREATED,
        task=f"sign in with {PASSWORD} or {{{{PASSWORD}}}}",
        start_url=DRY_START,
        model="script",
        secrets=secrets or {},
        model_data={"playbook": {f"task {PASSWORD}": [PASSWORD]}},
    )
    rec.record(Kind.NODE_EXPANDED, "0", type="ACTION", action=f"type [3] {PASSWORD}")
    rec.record(Kind.SECRET_FOUND, "0", value=PASSWORD)
    rec.record(Kind.APPROVAL_REQUESTED, "0", action=f"type [3] {PASSWORD}", rule="password field")
    return state, rec.take()


def test_the_fold_keeps_the_declared_and_found_secrets() -> None:
    state, log = _log({"OTHER": "other-value"})
    assert state.secrets == Secrets({"OTHER": "other-value"}, [PASSWORD])
    assert secrets_in(log) == state.secrets
    created = log[0].payload
    assert isinstance(created, SessionCreated) and isinstance(log[2].payload, SecretFound)


def test_a_masked_event_holds_no_value_and_keeps_its_kind_fields_and_enums() -> None:
    state, log = _log()
    masked = [state.secrets.mask_event(e) for e in log]
    for event in masked:
        assert PASSWORD not in event.payload.model_dump_json(), event.kind
    assert [e.kind for e in masked] == [e.kind for e in log] and masked[0].version == log[0].version
    folded = replay(masked)
    assert folded.task == f"sign in with {MASK} or {{{{PASSWORD}}}}"
    assert folded.approval is not None and folded.approval.action == f"type [3] {MASK}"
    assert folded.status is RunStatus.AWAITING_APPROVAL
    playbook = folded.model_data["playbook"]
    assert playbook == {f"task {MASK}": [MASK]}, "a mapping's keys are masked too"


def test_a_secret_equal_to_an_enum_value_a_setting_or_a_field_name_leaves_them_alone() -> None:
    state = SessionState()
    rec = Recorder(state)
    rec.record(Kind.SESSION_CREATED, task="task", model="script", secrets={"S": "running", "R": "root"})
    rec.record(Kind.CONFIG_CHANGED, changes={"completion_check": "root"})
    rec.record(Kind.NOTE_ADDED, text="still running at the root; action")
    secrets = Secrets({"S": "running", "R": "root", "A": "action"})
    events = rec.take()
    masked = [secrets.mask_event(e) for e in events]
    created, changed, note = masked
    assert changed is events[1], "a setting is no text"
    assert created.payload.status is RunStatus.RUNNING  # type: ignore[attr-defined]
    assert created.payload.config.completion_check == "root"  # type: ignore[attr-defined]
    assert note.payload.text == f"still {MASK} at the {MASK}; {MASK}"  # type: ignore[attr-defined]
    assert replay(masked).config.completion_check == "root"


def test_no_secrets_costs_nothing_the_same_event_comes_back() -> None:
    _, log = _log()
    assert all(Secrets().mask_event(e) is e for e in log)
    unrelated = Secrets({"X": "nowhere-in-it"})
    assert all(unrelated.mask_event(e) is e for e in log)


# -- the engine --------------------------------------------------------------------------------------

TASK = "Sign in with the password {{PASSWORD}} and tell me the greeting"
SCRIPT = Script.model_validate(
    {
        "nodes": {
            TASK: {"type": "AND", "children": ["type the password", "read the greeting"]},
            "type the password": {"type": "ACTION", "action": "type [3] [{{PASSWORD}}] [1]"},
            "read the greeting": {"type": "ACTION", "action": "note [Hello Jane]"},
        },
        "final_answer": "Hello Jane",
    }
)


class _Fields(DryEnvironment):
    """The dry environment whose element 3 is a password field and element 4 a text field."""

    def target(self, action: str) -> ElementInfo | None:
        if "[3]" in action:
            return ElementInfo(role="textbox", name="Password", input_type="password")
        if "[4]" in action:
            return ElementInfo(role="textbox", name="Name", input_type="text")
        return None


class _Listening:
    """The scripted model, keeping every prompt it would be sent (the task and the question's prompt)."""

    name = "script"

    def __init__(self, script: Script) -> None:
        self._inner = ScriptedModel(script)
        self.prompts: list[str] = []

    def __getattr__(self, question: str) -> Any:
        answer = getattr(self._inner, question)
        ops = {
            "extract_constraints": Question.CONSTRAINTS,
            "expand": Question.EXPAND,
            "repair": Question.REPAIR,
            "check_completion": Question.COMPLETE,
            "observe": Question.OBSERVE,
            "final_answer": Question.FINAL_ANSWER,
        }

        def asked(view: View, *rest: Any) -> Reply[Any]:
            detail = str(rest[0]) if rest else ""
            self.prompts.append(f"{view.task}\n{render_user(ops[question], view, detail=detail)}")
            return answer(view, *rest)

        return asked


def _session(task: str, secrets: dict[str, str], config: EngineConfig = MECHANICS) -> tuple[SessionState, Recorder]:
    state = SessionState()
    rec = Recorder(state)
    rec.record(
        Kind.SESSION_CREATED,
        task=task,
        model="script",
        start_url=DRY_START,
        config=config.model_dump(mode="json"),
        secrets=secrets,
    )
    return state, rec


def _run(engine: Engine, log: list[Event]) -> None:
    for _ in range(100):
        events = engine.step()
        log += events
        state = engine.state
        if state.status is RunStatus.AWAITING_APPROVAL:
            log += apply_command(state, Approve(node=state.approval.node_id if state.approval else None))
        elif not events:
            return


def test_a_declared_secret_is_typed_by_the_environment_and_never_reaches_a_prompt() -> None:
    state, rec = _session(TASK, {"PASSWORD": PASSWORD}, EngineConfig())
    log = rec.take()
    model = _Listening(SCRIPT)
    env = _Fields(secrets={"PASSWORD": PASSWORD})
    _run(Engine(state, model, env, guard=make_guard(GuardRules(), DRY_START)), log)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert f"type [3] [{PASSWORD}] [1]" in env.executed, "the environment typed the value"
    assert model.prompts and all(PASSWORD not in prompt for prompt in model.prompts)
    assert any("{{PASSWORD}}" in prompt for prompt in model.prompts)
    assert not any(e.kind is Kind.SECRET_FOUND for e in log), "a declared secret is no new secret"
    assert all(PASSWORD not in e.payload.model_dump_json() for e in log[1:]), "only session_created holds it"


def test_a_password_typed_as_is_is_recorded_found_before_the_approval_is_asked() -> None:
    task = f"Sign in with the password {PASSWORD} and tell me the greeting"
    nodes = SCRIPT.model_dump()["nodes"]
    nodes[task] = nodes.pop(TASK)
    nodes["type the password"]["action"] = f"type [3] [{PASSWORD}] [1]"
    script = Script.model_validate({**SCRIPT.model_dump(), "nodes": nodes})
    state, rec = _session(task, {})
    log = rec.take()
    _run(Engine(state, ScriptedModel(script), _Fields(), guard=make_guard(GuardRules(), DRY_START)), log)
    kinds = [e.kind for e in log]
    found = kinds.index(Kind.SECRET_FOUND)
    assert kinds.index(Kind.APPROVAL_REQUESTED) == found + 1
    assert kinds.count(Kind.SECRET_FOUND) == 1
    masked = [state.secrets.mask_event(e) for e in log]
    assert all(PASSWORD not in e.payload.model_dump_json() for e in masked)
    shown = replay(masked[: found + 2])
    assert shown.approval is not None and shown.approval.action == f"type [3] [{MASK}] [1]"


def test_a_password_field_is_noticed_with_the_guard_off_too() -> None:
    state, rec = _session("t", {}, MECHANICS.model_copy(update={"guard": False}))
    rec.record(Kind.NODE_EXPANDED, "0", type="ACTION", action=f"type [3] [{FOUND}]")
    events = Engine(state, ScriptedModel(Script()), _Fields()).step()
    assert [(e.kind, e.payload) for e in events if e.kind is Kind.SECRET_FOUND] == [
        (Kind.SECRET_FOUND, SecretFound(value=FOUND))
    ]


def test_a_text_field_is_no_secret() -> None:
    state, rec = _session("t", {}, MECHANICS.model_copy(update={"guard": False}))
    rec.record(Kind.NODE_EXPANDED, "0", type="ACTION", action=f"type [4] [{FOUND}]")
    events = Engine(state, ScriptedModel(Script()), _Fields()).step()
    assert Kind.SECRET_FOUND not in [e.kind for e in events]


def test_an_edited_action_holding_the_mask_is_refused_in_one_sentence() -> None:
    state, _ = _log()
    rejected = apply_command(state, EditAction(action=f"type [3] {MASK}"))
    assert [e.kind for e in rejected] == [Kind.COMMAND_REJECTED]
    assert rejected[0].payload.reason == (  # type: ignore[attr-defined]
        "the action holds a masked secret (••••), which would be typed as those dots; write the secret as "
        "{{NAME}} or approve the action as shown"
    )
    assert state.status is RunStatus.AWAITING_APPROVAL
    edited = apply_command(state, EditAction(action="type [3] {{PASSWORD}}"))
    assert Kind.APPROVAL_GRANTED in [e.kind for e in edited]


def test_secrets_copy_and_pickle_as_values() -> None:
    import copy
    import pickle

    secrets = Secrets({"PASSWORD": PASSWORD}, [FOUND])
    assert copy.deepcopy(secrets) == secrets == pickle.loads(pickle.dumps(secrets))
    assert copy.deepcopy(secrets).mask(PASSWORD) == MASK
