"""Events: the only record of what happened, and the only input to state.

Every change the engine, an operator command or the runner makes is one of these. An event has a
kind, a per-kind schema version and a typed payload: one frozen model per kind below, so each kind's
fields are declared in exactly one place and validated when the event is recorded or read from a
store. Older stored payloads are upgraded on load by the small functions in `_UPGRADES`, so stored
sessions stay readable as payloads evolve.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from planner.config import EngineConfig
from planner.effects import SentRequest
from planner.inputs import InputError, shown
from planner.questions import Diagnosis, Question, StepWork
from planner.tree import NodeType, Origin, Status, TemplateRef

__all__ = [
    "PAYLOADS",
    "SCHEMA_VERSIONS",
    "ActionEdited",
    "ActionExecuted",
    "AlternativeForced",
    "AnswerJudged",
    "ApprovalGranted",
    "ApprovalRequested",
    "Box",
    "CandidateReport",
    "Cause",
    "ChildrenReordered",
    "CommandApplied",
    "CommandRejected",
    "ConfigChanged",
    "ConstraintsSet",
    "Diagnosed",
    "Event",
    "Kind",
    "ModelCalled",
    "NodeChange",
    "NodeExpanded",
    "NodeFace",
    "NodeReset",
    "NodeRestored",
    "NodeRewritten",
    "NodeSpec",
    "NodesAdded",
    "NoteAdded",
    "Observed",
    "PageObserved",
    "Payload",
    "PlannedAction",
    "RevisionUsed",
    "RolledBack",
    "RunStatus",
    "SecretFound",
    "SessionCreated",
    "SessionFinished",
    "SessionForked",
    "SessionStatus",
    "StatusChanged",
    "StepTaken",
    "UpdateRefused",
    "upgrade",
]


class Kind(StrEnum):
    SESSION_CREATED = "session_created"
    SESSION_FORKED = "session_forked"
    SESSION_STATUS = "session_status"
    SESSION_FINISHED = "session_finished"
    CONFIG_CHANGED = "config_changed"
    CONSTRAINTS_SET = "constraints_set"
    STEP = "step"
    NODE_EXPANDED = "node_expanded"
    NODES_ADDED = "nodes_added"
    STATUS_CHANGED = "status_changed"
    NODE_REWRITTEN = "node_rewritten"
    NODE_RESET = "node_reset"
    NODE_RESTORED = "node_restored"
    CHILDREN_REORDERED = "children_reordered"
    REVISION_USED = "revision_used"
    ALTERNATIVE_FORCED = "alternative_forced"
    ACTION_EXECUTED = "action_executed"
    ACTION_EDITED = "action_edited"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_GRANTED = "approval_granted"
    OBSERVED = "observed"
    PAGE_OBSERVED = "page_observed"
    NOTE_ADDED = "note_added"
    MODEL_CALL = "model_call"
    UPDATE_REFUSED = "update_refused"
    ROLLBACK = "rollback"
    COMMAND_APPLIED = "command_applied"
    COMMAND_REJECTED = "command_rejected"
    DIAGNOSED = "diagnosed"
    SECRET_FOUND = "secret_found"
    ANSWER_JUDGED = "answer_judged"


class RunStatus(StrEnum):
    RUNNING = "running"
    PAUSED = "paused"
    AWAITING_APPROVAL = "awaiting_approval"
    STOPPED = "stopped"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Cause(StrEnum):
    """Why a session has the status it has: what tells the kinds of pause apart (the attention inbox
    sorts sessions by it), where the reason recorded beside it says the same in words for people."""

    OPERATOR = "operator"
    """The operator's doing: a command (pause, resume, one step, stop, a rejection, an approval), a
    session started paused, a fork."""
    STEP = "step"
    """Paused after the one step the operator asked for."""
    BREAKPOINT = "breakpoint"
    """Stopped at a breakpoint: before an action, on a failure, after a repair."""
    PLAN_REVIEW = "plan_review"
    """Stopped after an expansion for the operator to review the plan (the after-expansion breakpoint)."""
    APPROVAL = "approval"
    """An action waits for the operator's approval."""
    BUDGET = "budget"
    """The cost cap is reached."""
    ERROR = "error"
    """A problem: the model was unavailable, the runner failed, no runner could be built."""
    INTERRUPTED = "interrupted"
    """The runner was stopped (shut down) before the run ended; resuming continues it."""
    FINISHED = "finished"
    """The run ended, succeeded or failed."""
    ANSWER_MISSED = "answer_missed"
    """The run ended as succeeded, but its answer lacks what the task's answer must say (`planner.answers`)."""
    ANSWER_ACCEPTED = "answer_accepted"
    """An operator accepted the finished run's answer as right (`AnswerJudged`)."""
    ANSWER_REJECTED = "answer_rejected"
    """An operator rejected the finished run's answer as wrong (`AnswerJudged`)."""
    ANSWER_CHECKED = "answer_checked"
    """The run ended as succeeded and its answer says what the task's answer must say: the one success
    known to be right without a person's word (any other is only answered: `sessions.client.verdict`)."""
    NO_ALTERNATIVE = "no_alternative"
    """The operator rejected an action and the plan had nothing left to try: rather than end the run as
    failed, it waits for a changed plan (or a resume, which lets the planner try once more or fail)."""


class Payload(BaseModel):
    """What one kind of event says. Frozen: an event never changes once recorded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    KIND: ClassVar[Kind]
    VERSION: ClassVar[int] = 1


_PART = ConfigDict(extra="forbid")


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class NodeSpec:
    """A node an event creates; `action` is one planned ahead for it, if any.

    The parts of a payload are slotted dataclasses, not models: a log holds tens of thousands of
    them, and one object each instead of three makes events cheaper to record and to load
    (bench.engine). They are validated, frozen and serialised with their payload all the same.
    """

    id: str
    description: str
    score: float | None = None
    action: str | None = None


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class NodeFace:
    """What a plan edit can change about one node, at one moment: the edit's diff shows it, an undo restores it.

    `order` is the node's children in order, kept only by an edit that reordered them (an operator's
    plan review) and None otherwise: every other edit leaves the order alone, and an added child
    lengthens it, which is no change an undo should take back (ids are numbered on from its length).
    A face written before `order` existed reads as None, so no upgrade is needed; likewise one written
    before `earlier_actions` reads as none, which is what a node had then.
    """

    status: Status
    type: NodeType
    description: str
    action: str | None = None
    reason: str | None = None
    forced: str | None = None
    protected: bool = False
    earlier: tuple[str, ...] = ()
    earlier_actions: tuple[str, ...] = ()
    order: tuple[str, ...] | None = None


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class NodeChange:
    """One node a plan edit added (`before` None) or changed, as it was before and after the edit."""

    id: str
    after: NodeFace
    before: NodeFace | None = None


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class PlannedAction:
    """An action a model planned ahead for an unexpanded node."""

    node: str
    action: str


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class Box:
    """A rectangle in a screenshot, in its pixels from the top left corner: where an element was drawn."""

    x: float
    y: float
    width: float
    height: float


@pydantic_dataclass(frozen=True, slots=True, config=_PART)
class CandidateReport:
    """An item an observation reported. The model's answer was bounded when it was checked
    (`planner.questions.Candidate`); the log keeps it as it was, whatever it says."""

    name: str
    verdict: str = "uncertain"
    fields: dict[str, str] = Field(default_factory=dict)
    unmet: list[str] = Field(default_factory=list)


class SessionCreated(Payload):
    KIND = Kind.SESSION_CREATED
    task: str
    start_url: str | None = None
    model: str = ""
    model_data: dict[str, Any] = Field(default_factory=dict)
    config: EngineConfig = EngineConfig()
    status: RunStatus = RunStatus.RUNNING
    expect: list[str] = Field(default_factory=list)
    """Strings a correct final answer contains (a bundled task's criteria; `planner.answers`)."""
    by: str | None = None
    """The operator who started it (None: not known; a session recorded before this field says none)."""
    secrets: dict[str, str] = Field(default_factory=dict)
    """Secrets the task writes as `{{NAME}}`, name -> value (`planner.secrets`): only the browser types a
    value; every reader of the log sees it masked. A session recorded before this field declares none,
    so it needs no upgrade; a fork inherits its parent's with its events."""


class SessionForked(Payload):
    KIND = Kind.SESSION_FORKED
    from_session: str
    at_seq: int
    by: str | None = None
    """The operator who forked it (None: not known)."""


class SessionStatus(Payload):
    """`cause` says why the session has `status`, for code to act on; `reason` says it to people, and
    no code reads its wording. None: the writer did not say (the inbox treats such a pause as a
    problem). Version 2 added `cause`: an older event's is derived once from its reason, on load
    (`_session_status_cause`)."""

    KIND = Kind.SESSION_STATUS
    VERSION = 2
    status: RunStatus
    cause: Cause | None = None
    reason: str | None = None
    single_step: bool = False
    single_steps: int = Field(default=0, ge=0)
    """How many single steps the run takes before it pauses (a Step pressed while one runs adds one);
    0 with `single_step` (an older event) means one."""
    breakpoint_node: str | None = None


class SessionFinished(Payload):
    KIND = Kind.SESSION_FINISHED
    status: RunStatus
    final_answer: str | None = None
    reason: str | None = None


class ConfigChanged(Payload):
    """Only the settings that changed, by `EngineConfig` field name."""

    KIND = Kind.CONFIG_CHANGED
    changes: dict[str, Any]


class ConstraintsSet(Payload):
    KIND = Kind.CONSTRAINTS_SET
    constraints: list[str]
    by: Origin = Origin.PLANNER
    error: str | None = None


class StepTaken(Payload):
    """The engine began one unit of work; `frame` is None for session-level work (constraints, finish)."""

    KIND = Kind.STEP
    frame: str | None = None
    work: StepWork


class NodeExpanded(Payload):
    """The node's type and its new children. A node an operator gave steps before it was expanded
    keeps them (`planner.status.given_steps`): the first `lead` new children go before them, the
    rest after, so the planner plans around the operator's steps without reordering them."""

    KIND = Kind.NODE_EXPANDED
    type: NodeType
    action: str | None = None
    children: list[NodeSpec] = Field(default_factory=list)
    origin: Origin = Origin.PLANNER
    note: str | None = None
    lead: int = Field(default=0, ge=0)


class NodesAdded(Payload):
    """New children of the event's node at `position` (None: at the end); `parent_type` types an unexpanded parent.

    A template brings whole subtrees in one event, so that its edit (and its undo) adds and removes
    them at once: `nodes` lists every new node, a parent before its children, and a node whose id
    extends another new node's id (`0.3.1` under `0.3`) is that node's child, appended in order;
    `types` gives the type of each new node that comes with its children. `template` is the
    template they came from. Version 2 added `types` and `template` (a version 1 event has neither).
    """

    KIND = Kind.NODES_ADDED
    VERSION = 2
    nodes: list[NodeSpec]
    origin: Origin
    position: int | None = None
    parent_type: NodeType | None = None
    types: dict[str, NodeType] = Field(default_factory=dict)
    template: TemplateRef | None = None


class StatusChanged(Payload):
    KIND = Kind.STATUS_CHANGED
    status: Status
    reason: str | None = None
    subtree: bool = False
    answer: str | None = None


class NodeRewritten(Payload):
    KIND = Kind.NODE_REWRITTEN
    description: str
    by: Origin


class NodeReset(Payload):
    KIND = Kind.NODE_RESET
    reason: str | None = None
    reexpand: bool = False
    by: Origin | None = None


class NodeRestored(Payload):
    """An operator's undo put the node back as `to` says (a node the undone edit added: out of the plan, DELETED)."""

    KIND = Kind.NODE_RESTORED
    to: NodeFace


class ChildrenReordered(Payload):
    """The node's children in a new order: the same ids, each once (nothing is ever dropped from the list)."""

    KIND = Kind.CHILDREN_REORDERED
    order: list[str]


class RevisionUsed(Payload):
    KIND = Kind.REVISION_USED
    ok: bool
    reason: str | None = None


class AlternativeForced(Payload):
    KIND = Kind.ALTERNATIVE_FORCED
    child: str


class _PageSeen(Payload):
    """The page after something happened; every field is None (or 0) when no page could be read."""

    url: str | None = None
    title: str | None = None
    observation: str | None = None
    obs_chars: int = 0
    html_chars: int = 0


class ActionExecuted(_PageSeen):
    KIND = Kind.ACTION_EXECUTED
    action: str
    ok: bool
    error: str | None = None
    screenshot: str | None = None
    duration_ms: float = 0.0


class PageObserved(_PageSeen):
    KIND = Kind.PAGE_OBSERVED


class RolledBack(_PageSeen):
    """An OR node went back to `target` (a URL) before trying its alternative `to`."""

    KIND = Kind.ROLLBACK
    ok: bool
    error: str | None = None
    to: str | None = None
    target: str | None = None


class ActionEdited(Payload):
    KIND = Kind.ACTION_EDITED
    action: str


class SecretFound(Payload):
    """The agent is about to type `value` into a password field (`planner.secrets`): from here on every
    reader of the log sees it masked, in every event, earlier ones included. Recorded before the action
    is held for approval, so the approval box already shows it masked."""

    KIND = Kind.SECRET_FOUND
    value: str


class ApprovalRequested(Payload):
    """A guarded action held for an operator, with what they need to judge it: the `rule` it matched,
    the element it would touch (`role`, `name`: page text, empty when the action touches none or it is
    unknown), and a `screenshot` of the page with that element in view, `box` being where the element
    is in it (None: no element, or none drawn on screen). `screenshot` is None where no picture could
    be taken (a dry run, a browser without a screenshot folder). Version 2 added all four; a version 1
    request has none of them. `requests`: what the effect fence held when the action ran (the requests
    its page sent that could change state on a server), when that is why it waits; empty when its name,
    where it leads or a question its page asked is why."""

    KIND = Kind.APPROVAL_REQUESTED
    VERSION = 2
    action: str
    rule: str
    role: str = ""
    name: str = ""
    screenshot: str | None = None
    box: Box | None = None
    requests: tuple[SentRequest, ...] = ()


class ApprovalGranted(Payload):
    """`requests`: the held requests the operator let through, by `SentRequest.key`, each once when the
    action runs again; None when they approved the action itself, which may then do what it does."""

    KIND = Kind.APPROVAL_GRANTED
    action: str | None = None
    requests: tuple[str, ...] | None = None


class Observed(Payload):
    """An observation's summary; `proposals` are actions planned ahead for unexpanded nodes.

    Version 2 renamed `ahead` (which said when, not what) to `proposals`, the name the state uses.
    """

    KIND = Kind.OBSERVED
    VERSION = 2
    summary: str = ""
    progress: str = ""
    feedback: str = ""
    notes: list[str] = Field(default_factory=list)
    proposals: list[PlannedAction] = Field(default_factory=list)
    candidates: list[CandidateReport] = Field(default_factory=list)


class NoteAdded(Payload):
    KIND = Kind.NOTE_ADDED
    text: str


class ModelCalled(Payload):
    """One model call, accepted (`ok`) or not; `usage` is as the adapter reported it, read defensively.

    Version 2 renamed `operator` to `question`: the operator is the person supervising the run.
    """

    KIND = Kind.MODEL_CALL
    VERSION = 2
    question: Question
    attempt: int = 1
    ok: bool = True
    error: str | None = None
    output: dict[str, Any] | None = None
    latency_ms: float = 0.0
    prompt: str | None = None
    raw: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    effort: str | None = None
    thinking: list[str] = Field(default_factory=list)


class UpdateRefused(Payload):
    KIND = Kind.UPDATE_REFUSED
    reason: str


class CommandApplied(Payload):
    """`warning`: what the operator should know that the command could not change (e.g. a pruned
    action already ran in the browser).

    `changes`: the nodes a plan edit (or an undo) added or changed, before and after, so the log says
    what each edit did without a replay and an undo knows what to restore; `undoes`: the command id
    of the edit an undo took back. Version 2 added both (a version 1 edit recorded no changes, so it
    cannot be undone).

    `by`: the operator who sent the command (`planner.commands`), None when not known; the nodes in
    `changes` are theirs (`SessionState.made_by`, `edited_by`). Version 3 added it: an older command's
    sender is not known. It comes right after the id so a one-line summary of the event shows it.
    """

    KIND = Kind.COMMAND_APPLIED
    VERSION = 3
    command_id: str
    by: str | None = None
    command: dict[str, Any] = Field(default_factory=dict)
    warning: str | None = None
    changes: list[NodeChange] = Field(default_factory=list)
    undoes: str | None = None


class CommandRejected(Payload):
    """`by`: the operator who sent the command, None when not known. Version 2 added it (an older
    rejection's sender is not known)."""

    KIND = Kind.COMMAND_REJECTED
    VERSION = 2
    command_id: str
    by: str | None = None
    command: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""


class Diagnosed(Payload):
    """A diagnosis of the run, appended after it finished: the accepted one, or `error` saying why none was.

    `model` is the spec that diagnosed it (`demo`: the offline rules); `usage` holds each attempt's
    token counts and cost as the model reported them.
    """

    KIND = Kind.DIAGNOSED
    model: str
    diagnosis: Diagnosis | None = None
    error: str | None = None
    attempts: int = 1
    usage: list[dict[str, Any]] = Field(default_factory=list)


class AnswerJudged(Payload):
    """An operator's word on a finished run's answer, appended after it finished: `accepted` it as right
    or not, with their `reason`; `by` names them (None: not known). The latest word stands, and it is
    what makes an unchecked answer more than the planner's belief (`Cause.ANSWER_ACCEPTED`)."""

    KIND = Kind.ANSWER_JUDGED
    accepted: bool
    reason: str | None = None
    by: str | None = None


PAYLOADS: dict[Kind, type[Payload]] = {
    model.KIND: model
    for model in (
        SessionCreated,
        SessionForked,
        SessionStatus,
        SessionFinished,
        ConfigChanged,
        ConstraintsSet,
        StepTaken,
        NodeExpanded,
        NodesAdded,
        StatusChanged,
        NodeRewritten,
        NodeReset,
        NodeRestored,
        ChildrenReordered,
        RevisionUsed,
        AlternativeForced,
        ActionExecuted,
        ActionEdited,
        ApprovalRequested,
        ApprovalGranted,
        Observed,
        PageObserved,
        NoteAdded,
        ModelCalled,
        UpdateRefused,
        RolledBack,
        CommandApplied,
        CommandRejected,
        Diagnosed,
        SecretFound,
        AnswerJudged,
    )
}
"""The payload model of every kind."""

SCHEMA_VERSIONS: dict[str, int] = {kind.value: model.VERSION for kind, model in PAYLOADS.items()}


@dataclass(frozen=True, slots=True)
class Event:
    """A sequenced, immutable event of one session; `payload` is the kind's model."""

    seq: int
    kind: Kind
    node_id: str | None
    payload: Payload
    version: int = 1
    at: float = 0.0

    @classmethod
    def from_data(
        cls, seq: int, kind: str, node_id: str | None, data: Any, version: int | None = None, at: float = 0.0
    ) -> Event:
        """An event from its JSON form (a trace, an older stored row): upgraded to the current version, then validated.

        `version` None means current. Raises `InputError`, one sentence naming the event and its first
        problem, for an unknown kind or a payload that does not fit its kind.
        """
        typed = _kind(seq, kind)
        current = SCHEMA_VERSIONS[typed]
        if version is not None and version < current:
            if not isinstance(data, dict):
                raise InputError(f"event {seq} ({typed.value}) has a payload that is not an object")
            try:
                data = upgrade(typed, version, data)
            except KeyError:
                raise InputError(
                    f"event {seq} ({typed.value}) has schema version {version}, which no upgrade reads"
                ) from None
        try:
            payload = PAYLOADS[typed].model_validate(data)
        except ValidationError as error:
            raise _unfit(seq, typed, error) from None
        return cls(seq, typed, node_id, payload, current, at)

    @classmethod
    def from_json(cls, seq: int, kind: str, node_id: str | None, text: str, version: int, at: float = 0.0) -> Event:
        """A stored row as an event: a current payload is parsed and validated in one pass (pydantic's
        JSON parser, called directly), an older one is upgraded first. Raises `InputError` as `from_data` does."""
        typed = _kind(seq, kind)
        if version < SCHEMA_VERSIONS[typed]:
            try:
                data = json.loads(text)
            except ValueError:
                raise InputError(f"event {seq} ({typed.value}) is not JSON") from None
            return cls.from_data(seq, typed, node_id, data, version, at)
        try:
            payload = _FROM_JSON[typed](text)
        except ValidationError as error:
            raise _unfit(seq, typed, error) from None
        return cls(seq, typed, node_id, payload, version, at)

    @property
    def data(self) -> dict[str, Any]:
        """The payload as JSON-ready data: what the store and traces keep."""
        return self.payload.model_dump(mode="json")

    def to_row(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "kind": self.kind.value,
            "version": self.version,
            "node_id": self.node_id,
            "detail": self.data,
        }


_KINDS: dict[str, Kind] = {kind.value: kind for kind in Kind}
_FROM_JSON: dict[Kind, Callable[[str], Payload]] = {
    kind: model.__pydantic_validator__.validate_json for kind, model in PAYLOADS.items()
}
"""Each kind's JSON validator, called directly: `model_validate_json` adds a Python call per row of a rebuild."""


def _kind(seq: int, kind: str) -> Kind:
    """The kind a stored or traced event names, or `InputError` for one this build does not know."""
    try:
        return _KINDS[kind]
    except (KeyError, TypeError):
        raise InputError(f"event {seq} has an unknown kind, {shown(kind)}") from None


def _unfit(seq: int, kind: Kind, error: ValidationError) -> InputError:
    """A payload that does not fit its kind, in one sentence: its first problem, and how many more there are."""
    first = error.errors(include_url=False, include_context=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    problem = f"{shown(where, 60)}: {first['msg']}" if where else first["msg"]
    more = error.error_count() - 1
    also = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return InputError(f"event {seq} ({kind.value}) does not fit its schema: {shown(problem, 160)}{also}")


def _observed_ahead_to_proposals(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data["proposals"] = data.pop("ahead", [])
    return data


def _command_applied_without_changes(data: dict[str, Any]) -> dict[str, Any]:
    """Before version 2 no command recorded the nodes it changed: an empty list says so (and such an edit
    cannot be undone)."""
    return {**data, "changes": [], "undoes": None}


def _command_without_operator(data: dict[str, Any]) -> dict[str, Any]:
    """Before `by` was recorded (command_applied version 3, command_rejected version 2) no command said
    who sent it: its sender is not known."""
    return {**data, "by": None}


def _model_call_operator_to_question(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data["question"] = data.pop("operator", None)
    return data


def _nodes_added_without_template(data: dict[str, Any]) -> dict[str, Any]:
    """Before version 2 nodes were added one level at a time and never from a template."""
    return {**data, "types": {}, "template": None}


_V1_CAUSES: tuple[tuple[str, Cause], ...] = (
    ("breakpoint: ", Cause.BREAKPOINT),  # Engine._held_before and _pause_after
    ("plan review: ", Cause.PLAN_REVIEW),  # Engine._pause_after, the after-expansion breakpoint
    ("paused after one step", Cause.STEP),  # Engine._pause_after
    ("cost budget spent", Cause.BUDGET),  # SessionState.over_budget, as Engine.step records it
    ("runner stopped; resume to continue", Cause.INTERRUPTED),  # sessions.worker.runner, a clean stop
    ("paused by operator", Cause.OPERATOR),  # the commands: Pause,
    ("rejected by operator", Cause.OPERATOR),  # Reject,
    ("resumed by operator", Cause.OPERATOR),  # Resume,
    ("one step", Cause.OPERATOR),  # Step,
    ("stopped by operator", Cause.OPERATOR),  # Stop
)
"""How version 1 reasons began, by cause, as the code of that version wrote them."""


def _approval_requested_without_preview(data: dict[str, Any]) -> dict[str, Any]:
    """Before version 2 a request kept only its action and rule: no element, no screenshot."""
    return {**data, "role": "", "name": "", "screenshot": None, "box": None}


def _session_status_cause(data: dict[str, Any]) -> dict[str, Any]:
    """Before version 2 a status change said why only in its reason: the one place its wording is
    read. Any other pause was a problem (a model unavailable, a runner's exception); any other
    change, the operator's."""
    reason = data.get("reason")
    reason = reason if isinstance(reason, str) else ""  # anything else fails validation next, with its own message
    cause = next((cause for opening, cause in _V1_CAUSES if reason.startswith(opening)), None)
    if cause is None:
        cause = Cause.ERROR if data.get("status") == RunStatus.PAUSED.value and reason else Cause.OPERATOR
    return {**data, "cause": cause.value}


_UPGRADES: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {
    (Kind.OBSERVED.value, 1): _observed_ahead_to_proposals,
    (Kind.COMMAND_APPLIED.value, 1): _command_applied_without_changes,
    (Kind.COMMAND_APPLIED.value, 2): _command_without_operator,
    (Kind.COMMAND_REJECTED.value, 1): _command_without_operator,
    (Kind.SESSION_STATUS.value, 1): _session_status_cause,
    (Kind.NODES_ADDED.value, 1): _nodes_added_without_template,
    (Kind.APPROVAL_REQUESTED.value, 1): _approval_requested_without_preview,
    (Kind.MODEL_CALL.value, 1): _model_call_operator_to_question,
}
"""(kind, from_version) -> function returning the payload at from_version + 1."""


def upgrade(kind: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored payload up to the current schema version of its kind."""
    current = SCHEMA_VERSIONS[kind]
    while version < current:
        data = _UPGRADES[(kind, version)](data)
        version += 1
    return data
