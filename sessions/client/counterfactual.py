"""Counterfactual re-ask: ask a recorded expansion, repair or observation call again, with an
operator's instruction, another model or other settings, compare the new answer with the recorded
one, and adopt it as an ordinary operator edit.

What the call saw is rebuilt from the log: the state folded up to the event before the call is the
state the engine built the call's view from, so the new call sees the same task, tree, notes, page
and constraints. The new call is made here, outside the engine, and is checked as the engine checks
an answer against the tree (within the session's retry budget), but not against the live page: no
browser is opened. The answers are compared as plans (the node's children, each marked added,
removed, changed or the same) and field by field.

Nothing is stored while the operator compares. The log is the record of what the run did, and the
session's state is its fold: a re-ask the run never acted on, recorded as a `model_call`, would add
its tokens to the session's cost (and to its cost cap), and a replay of the session
(`--model replay:ID`) would take it for an answer the node got. A re-ask of a finished session would
also have to write to a closed log. So a counterfactual lives in memory (the console keeps it in the
tab's state) until it is adopted; adopting queues ordinary operator commands (a `plan`, an `inject`
for an unexpanded node, an `edit_action`, or for an observation its prunes and rewrites) whose
`provenance` says "counterfactual of call #N", and their `command_applied` events keep it, so the
log says where each adopted edit came from, and Undo takes it back like any other edit. A re-ask's
cost is not counted against the session's cap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from planner.commands import OPERATOR_SCORE, Command, Edit, EditAction, Inject, Prune, SetPlan
from planner.config import EngineConfig
from planner.engine import view_of
from planner.errors import ModelOutputError, ModelUnavailable
from planner.events import Event, Kind, ModelCalled
from planner.inputs import describe_validation_error, shown
from planner.models.offline import Playbook
from planner.protocols import Model
from planner.questions import ChildSpec, Expansion, Observation, Question, Repair, Reply
from planner.state import RunStatus, SessionState, replay
from planner.status import CLOSED, REMOVED
from planner.tree import Node, NodeType, Status
from sessions.backends import build_backend, prepare_model
from sessions.client.commands import queue_command
from sessions.errors import SessionsError
from sessions.store import EventStore
from sessions.store.reading import load_events, load_state

__all__ = [
    "REASKABLE",
    "Child",
    "Counterfactual",
    "FieldChange",
    "Mark",
    "Plan",
    "ReaskError",
    "adopt",
    "adoption",
    "diff_children",
    "reask",
]

REASKABLE = (Question.EXPAND, Question.REPAIR, Question.OBSERVE)
"""The calls whose answer changes the plan, and so can be adopted as an operator's edit."""

_QUESTION_NAMES = {Question.EXPAND: "expansion", Question.REPAIR: "repair", Question.OBSERVE: "observation"}
_PLAN_FIELDS = frozenset({"children", "add", "prune"})
"""Fields of an expansion or repair that the plan diff shows; the field diff shows the rest."""
_REWORDING = 0.5
"""How much of its words (difflib's ratio) a description in the place of another must share, above, to reword it."""
_LISTED_CALLS = 8
"""How many re-askable calls a refusal names."""


class ReaskError(SessionsError):
    """A call that cannot be re-asked, a new answer that cannot be had, or one that cannot be adopted; one sentence."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Child(_Frozen):
    """A child an answer gives the node; `id` is the node it already is (a repair keeps children), None for a new one."""

    description: str
    id: str | None = None
    score: float | None = None
    action: str | None = None


class Plan(_Frozen):
    """What an expansion or repair leaves its node with: a type, and its action or its children in order."""

    node: str
    description: str
    type: str
    action: str | None = None
    children: list[Child] = []


class Mark(_Frozen):
    """One child of the two plans: in both and `same`, in both but `changed` (reworded, rescored or another
    action), only in the new one (`added`) or only in the original (`removed`)."""

    mark: Literal["same", "changed", "added", "removed"]
    before: Child | None = None
    after: Child | None = None


class FieldChange(_Frozen):
    """A field of the answer that differs: its value in the original and in the new answer."""

    field: str
    before: Any = None
    after: Any = None


class Counterfactual(_Frozen):
    """A recorded call (`call`, its event number) asked again, and the two answers compared.

    `original` is the answer as recorded (None when the call failed without one), `new` the new answer;
    for an expansion or repair, `before` and `after` are the plans they leave the node with and
    `children` marks each child; `fields` lists the other fields that differ (all of an observation's).
    """

    session_id: str
    call: int
    question: Question
    node: str
    model: str
    instruction: str | None = None
    settings: dict[str, Any] = {}
    original: dict[str, Any] | None = None
    new: dict[str, Any]
    before: Plan | None = None
    after: Plan | None = None
    children: list[Mark] = []
    fields: list[FieldChange] = []
    attempts: int = 1
    usage: dict[str, Any] = {}
    prompt: str | None = None

    @property
    def provenance(self) -> str:
        """What an adopted edit's command says about where it came from."""
        return f"counterfactual of call #{self.call}"


# -- re-asking -------------------------------------------------------------------------------------


def reask(
    store: EventStore,
    session_id: str,
    call_seq: int,
    *,
    instruction: str | None = None,
    model: str | None = None,
    settings: dict[str, Any] | None = None,
) -> Counterfactual:
    """Ask call `call_seq` of the session again and compare the answers; the session's log is only read.

    `instruction` is added to the call's prompt (`Model.instructed`); `model` is a model spec as
    `--model` takes it (default: the session's own model, with what it recorded); `settings` are
    `EngineConfig` fields that shape one call (`or_alternatives`, `lookahead`, `max_children`,
    `expansion_retries`, and for a repair `repair` and `max_revisions`, the revision budget), plus
    `effort` for a Claude model. Raises `ReaskError` (or the model factory's `UnknownModel`, or the
    script's `ScriptError`) with one sentence.
    """
    events = load_events(store, session_id)  # what the call saw, as people may see it: secrets masked
    event = _call_event(session_id, events, call_seq)
    recorded = cast(ModelCalled, event.payload)
    state = replay(e for e in events if e.seq < call_seq)
    node = state.tree.get(event.node_id or "")
    if node is None:
        raise ReaskError(f"call #{call_seq} names no node of the plan it was made for, so it cannot be asked again")
    chosen = dict(settings or {})
    effort = chosen.pop("effort", None)
    config = _config(state, chosen)
    if recorded.question is Question.REPAIR and (not config.repair or node.revisions >= config.max_revisions):
        raise ReaskError(
            f"with repair {'off' if not config.repair else f'limited to {config.max_revisions} revisions'}, "
            f"{node.id} (repaired {node.revisions} times) would not be repaired at all: the engine would prune it"
        )
    spec = model or state.model
    asked = _model(store, state, spec, effort, instruction)
    reply, attempts = _ask(recorded.question, asked, state, node, config)
    original = _validated(recorded.question, recorded.output)
    before = _plan(recorded.question, original, state, node, made=recorded.ok)
    after = _plan(recorded.question, reply.output, state, node)
    return Counterfactual(
        session_id=session_id,
        call=call_seq,
        question=recorded.question,
        node=node.id,
        model=spec,
        instruction=instruction,
        settings=settings or {},
        original=recorded.output,
        new=reply.output.model_dump(mode="json"),
        before=before,
        after=after,
        children=diff_children(before.children if before else [], after.children if after else []),
        fields=_fields(recorded.question, recorded.output or {}, reply.output.model_dump(mode="json")),
        attempts=attempts,
        usage=reply.call.usage,
        prompt=reply.call.prompt,
    )


def _call_event(session_id: str, events: list[Event], call_seq: int) -> Event:
    """The recorded call numbered `call_seq`, or one sentence naming the calls there are."""
    calls = [
        e.seq
        for e in events
        if e.kind is Kind.MODEL_CALL and cast(ModelCalled, e.payload).question in REASKABLE and e.node_id
    ]
    listed = ", ".join(f"#{seq}" for seq in calls[:_LISTED_CALLS]) + (
        f" and {len(calls) - _LISTED_CALLS} more" if len(calls) > _LISTED_CALLS else ""
    )
    hint = f"its expansion, repair and observation calls are {listed}" if calls else "it has no call to re-ask yet"
    event = next((e for e in events if e.seq == call_seq), None)
    if event is None:
        raise ReaskError(f"session {session_id} has no event {call_seq} (it has {len(events)}); {hint}")
    if event.kind is not Kind.MODEL_CALL:
        raise ReaskError(f"event {call_seq} of session {session_id} is a {event.kind.value}, not a model call; {hint}")
    question = cast(ModelCalled, event.payload).question
    if question not in REASKABLE:
        raise ReaskError(
            f"call #{call_seq} asked for {question.value.replace('_', ' ')}, which changes no plan; "
            f"only expansion, repair and observation calls can be re-asked ({hint})"
        )
    return event


def _config(state: SessionState, settings: dict[str, Any]) -> EngineConfig:
    """The session's settings as of the call, with the operator's changes, validated as the engine's own."""
    try:
        return EngineConfig.model_validate({**state.config.model_dump(), **settings})
    except ValidationError as error:
        raise ReaskError(f"those settings cannot be used: {describe_validation_error(error)}") from None


def _model(store: EventStore, state: SessionState, spec: str, effort: object, instruction: str | None) -> Model:
    """The model to ask: built by the sessions' model factory, as a session with that spec would be, and
    given the operator's instruction. The session's own spec keeps what the session recorded (its
    script, its playbook), so the only difference from the original call is the one the operator made."""
    if spec == state.model and effort is None:
        data = state.model_data
    else:
        data = prepare_model(spec, store, playbook=_playbook(state), effort=cast(str | None, effort))
    backend = build_backend(replace(state, model=spec, model_data=data, start_url=None))  # dry: no browser opens
    backend.close()
    model = backend.model
    if instruction is None or not instruction.strip():
        return model
    instructed = getattr(model, "instructed", None)
    if instructed is None:
        raise ReaskError(
            f"the model {shown(spec, 60)} takes no instruction (a replay answers only what it recorded); "
            "re-ask with another model"
        )
    return cast(Model, instructed(instruction.strip()))


def _ask(
    question: Question, model: Model, state: SessionState, node: Node, config: EngineConfig
) -> tuple[Reply[Any], int]:
    """Ask until the answer fits the tree or the session's retry budget is spent (as the engine does)."""
    view = view_of(state, node, config)
    calls: dict[Question, Callable[[], Reply[Any]]] = {
        Question.EXPAND: lambda: model.expand(view),
        Question.REPAIR: lambda: model.repair(view, node.reason or ""),
        Question.OBSERVE: lambda: model.observe(view, node.action or ""),
    }
    attempts = config.expansion_retries + 1
    reason = ""
    for attempt in range(1, attempts + 1):
        try:
            reply = calls[question]()
        except ModelUnavailable as error:
            raise ReaskError(f"the model could not be asked: {error}") from None
        except ModelOutputError as error:
            reason = error.reason
            continue
        reason = _misfit(question, reply.output, state, node, config) or ""
        if not reason:
            return reply, attempt
    raise ReaskError(f"the new {_QUESTION_NAMES[question]} was unusable after {attempts} attempts: {reason}")


def _misfit(question: Question, output: BaseModel, state: SessionState, node: Node, config: EngineConfig) -> str | None:
    """Why an answer does not fit the tree, by the engine's rules for that question; None when it fits."""
    tree = state.tree
    if isinstance(output, Expansion | Repair):
        children = output.children if isinstance(output, Expansion) else output.add
        if len(children) > config.max_children:
            return f"it proposed {len(children)} sub-goals; at most {config.max_children} are allowed"
    if isinstance(output, Repair):
        strangers = [i for i in output.prune if tree.get(i) is None or tree[i].parent != node.id]
        if strangers:
            return f"repair may only prune children of {node.id}; {strangers[0]} is not one"
        if node.type is NodeType.OR and any(child.score is None for child in output.add):
            return "new OR alternatives need scores"
    if isinstance(output, Observation):
        unknown = [i for i in (*output.prune, *output.rewrite) if i not in tree]
        if unknown:
            return f"unknown node ids in tree update: {', '.join(unknown)}"
    return None


def _validated(question: Question, output: dict[str, Any] | None) -> BaseModel | None:
    """The recorded answer as its model again; None when the call recorded none (or none that still reads)."""
    if output is None:
        return None
    models: dict[Question, type[BaseModel]] = {
        Question.EXPAND: Expansion,
        Question.REPAIR: Repair,
        Question.OBSERVE: Observation,
    }
    kind = models[question]
    try:
        return kind.model_validate(output)
    except ValidationError:
        return None


# -- comparing ---------------------------------------------------------------------------------------


def _child(spec: ChildSpec, node_id: str | None = None) -> Child:
    return Child(description=spec.description, id=node_id, score=spec.score, action=spec.action)


def _plan(
    question: Question, output: BaseModel | None, state: SessionState, node: Node, *, made: bool = False
) -> Plan | None:
    """The plan an answer leaves the node with: an expansion's own; for a repair, the node's children at
    the call without those it prunes (open ones only, as the engine does), then the ones it adds.
    `made`: the answer was accepted, so its new children are nodes, numbered as the engine numbered them."""
    if isinstance(output, Expansion):
        ids = state.tree.new_child_ids(node, len(output.children)) if made else [None] * len(output.children)
        children = [_child(child, node_id) for child, node_id in zip(output.children, ids, strict=True)]
        return Plan(
            node=node.id, description=node.description, type=output.type, action=output.action, children=children
        )
    if isinstance(output, Repair):
        kept = [
            Child(description=c.description, id=c.id, score=c.score, action=c.action)
            for c in state.tree.children(node)
            if c.status not in REMOVED and not (c.id in output.prune and c.status not in CLOSED)
        ]
        fresh = state.tree.new_child_ids(node, len(output.add)) if made else [None] * len(output.add)
        added = [_child(child, node_id) for child, node_id in zip(output.add, fresh, strict=True)]
        return Plan(node=node.id, description=node.description, type=node.type.value, children=kept + added)
    return None


def diff_children(before: list[Child], after: list[Child]) -> list[Mark]:
    """Each child of two plans, in order, marked: aligned by description (`difflib`), a child in both
    is the same or changed (another score or action), a description in the place of a similar one is a
    change (a rewording), and the rest were added or removed."""
    marks: list[Mark] = []
    matcher = SequenceMatcher(a=[c.description for c in before], b=[c.description for c in after], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        olds, news = before[i1:i2], after[j1:j2]
        if tag == "equal":
            for old, new in zip(olds, news, strict=True):
                same = (old.score, old.action) == (new.score, new.action)
                marks.append(Mark(mark="same" if same else "changed", before=old, after=new))
            continue
        added: list[Mark] = []
        for old, new in zip_longest(olds, news):
            if old is not None and new is not None and _rewording(old.description, new.description):
                marks.append(Mark(mark="changed", before=old, after=new))
                continue
            if old is not None:
                marks.append(Mark(mark="removed", before=old))
            if new is not None:
                added.append(Mark(mark="added", after=new))
        marks += added
    return marks


def _rewording(before: str, after: str) -> bool:
    """Whether a description in the place of another rewords it (keeps most of its words, in order)
    rather than replacing it; words, not characters, so that "sort by price" and "sort by rating" differ."""
    words = SequenceMatcher(a=before.lower().split(), b=after.lower().split(), autojunk=False)
    return words.ratio() > _REWORDING


def _fields(question: Question, original: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    """The answer's fields that differ (for an expansion or repair, besides the children the plan diff shows)."""
    skipped = _PLAN_FIELDS if question in (Question.EXPAND, Question.REPAIR) else frozenset()
    names = [name for name in new if name not in skipped] + [n for n in original if n not in new and n not in skipped]
    return [
        FieldChange(field=name, before=original.get(name), after=new.get(name))
        for name in names
        if original.get(name) != new.get(name)
    ]


# -- adopting ----------------------------------------------------------------------------------------


def adopt(store: EventStore, counterfactual: Counterfactual, *, by: str | None = None) -> list[str]:
    """Queue the operator commands that adopt the new answer in the session as it is now; their ids.

    `by` signs them with the operator who adopts (None: not known), as every other command of theirs
    is signed, so the nodes they make say who made them. The runner applies them at the next step
    boundary like any operator edit (and may refuse one with its reason, e.g. a child that started
    meanwhile)."""
    state = load_state(store, counterfactual.session_id)
    return [
        queue_command(store, counterfactual.session_id, {**command.model_dump(mode="json"), "by": by})
        for command in adoption(state, counterfactual)
    ]


def adoption(state: SessionState, counterfactual: Counterfactual) -> list[Command]:
    """The commands that make the new answer the plan of `state`, each with the counterfactual's provenance.

    An expansion or repair becomes a `plan` of the node's children (children that already started
    stay, as history must; open ones are kept, reworded or left out as the new answer says), or an
    `inject` when the node waits to be expanded, or an `edit_action` when the answer is one action for
    an action node that has not run. An observation becomes its prunes and rewrites that the original
    answer did not make. `ReaskError` says why an answer cannot be adopted here.
    """
    cf = counterfactual
    if state.finished:
        raise ReaskError(
            f"session {cf.session_id} has ended ({state.status.value}); fork it from before the edit and "
            f"re-ask call #{cf.call} in the fork to adopt it there"
        )
    node = state.tree.get(cf.node)
    if node is None:
        raise ReaskError(f"there is no node {cf.node} in session {cf.session_id}")
    if cf.question is Question.OBSERVE:
        return _observation_edits(state, cf)
    plan = cf.after
    assert plan is not None, "an expansion or repair always has a plan"
    if plan.type == "ACTION":
        return [_action_edit(state, node, plan.action or "", cf.provenance)]
    goals = [child.description for child in plan.children]
    if node.type is NodeType.UNKNOWN:
        scores = [child.score or OPERATOR_SCORE for child in plan.children] if plan.type == "OR" else None
        kind = cast(Literal["AND", "OR"], plan.type)
        return [Inject(parent=node.id, goals=goals, node_type=kind, scores=scores, provenance=cf.provenance)]
    if node.type.value != plan.type:
        raise ReaskError(
            f"the new answer makes {node.id} an {plan.type} node, but it is an {node.type.value} node now; "
            f"edit {node.id} with re-expand first (it then waits to be expanded), then adopt"
        )
    lines = _plan_lines(state, node, plan.children)
    if lines == [{"id": child.id} for child in state.tree.children(node) if child.status not in REMOVED]:
        raise ReaskError(f"the new answer is the plan {node.id} has already; there is nothing to adopt")
    return [SetPlan(node=node.id, children=lines, provenance=cf.provenance)]  # type: ignore[arg-type]  # dict lines are read by the plan's validator


def _action_edit(state: SessionState, node: Node, action: str, provenance: str) -> Command:
    """An answer that is one action replaces the action of an action node that has not run (never approving one)."""
    waiting = state.status is RunStatus.AWAITING_APPROVAL
    if node.type is not NodeType.ACTION or node.status is not Status.UNVISITED or waiting:
        now = "waiting for approval" if waiting else f"an {node.type.value} node, {node.status.value}"
        raise ReaskError(
            f"the new answer makes {node.id} one action ({shown(action, 60)}), but {node.id} is {now}; "
            "only an action that has not run can take it"
        )
    return EditAction(node=node.id, action=action, provenance=provenance)


def _plan_lines(state: SessionState, node: Node, proposed: list[Child]) -> list[dict[str, str]]:
    """The node's children as a `plan` command lists them: those that started, in place (a plan cannot
    change them), then the open ones aligned with the new answer's (kept, reworded, left out) and the new ones."""
    live = [child for child in state.tree.children(node) if child.status not in REMOVED]
    started = [child for child in live if child.status is not Status.UNVISITED]
    done = {child.id for child in started} | {child.description for child in started}
    wanted = [child for child in proposed if child.id not in done and child.description not in done]
    waiting = [Child(description=c.description, id=c.id, score=c.score) for c in live if c.status is Status.UNVISITED]
    lines = [{"id": child.id} for child in started]
    for mark in diff_children(waiting, wanted):
        if mark.after is None:
            continue  # left out: the plan prunes it
        if mark.before is None:
            lines.append({"description": mark.after.description})
        elif mark.before.description == mark.after.description:
            lines.append({"id": cast(str, mark.before.id)})
        else:
            lines.append({"id": cast(str, mark.before.id), "description": mark.after.description})
    return lines


def _observation_edits(state: SessionState, cf: Counterfactual) -> list[Command]:
    """The new observation's prunes and rewrites of open nodes that the original did not make."""
    new = Observation.model_validate(cf.new)
    old = _validated(Question.OBSERVE, cf.original)
    old = old if isinstance(old, Observation) else Observation()
    commands: list[Command] = []
    for node_id in new.prune:
        node = state.tree.get(node_id)
        if node_id not in old.prune and node is not None and node.status not in CLOSED:
            commands.append(Prune(node=node_id, reason=f"pruned by the {cf.provenance}", provenance=cf.provenance))
    for node_id, text in new.rewrite.items():
        node = state.tree.get(node_id)
        fresh = text.strip() and old.rewrite.get(node_id) != text
        if fresh and node is not None and node.status not in CLOSED and text != node.description:
            commands.append(Edit(node=node_id, description=text, provenance=cf.provenance))
    if not commands:
        raise ReaskError(
            "the new observation prunes or rewrites no open node the original did not; what differs "
            "(summary, notes, candidates, actions planned ahead) is not a plan edit, so there is nothing to adopt"
        )
    return commands


def _playbook(state: SessionState) -> Playbook | None:
    """The demo playbook the session recorded, for a re-ask by the demo model."""
    recorded = state.model_data.get("playbook")
    return Playbook.model_validate(recorded) if recorded is not None else None
