"""Session state as a fold over events.

`apply(state, event)` is the only way state changes, live or on rebuild: the engine and the operator
commands produce drafts, `Recorder.record` sequences and applies them. Rebuilding a session is
`replay(events)` over the stored log, the same code path as running it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from planner.actions import is_note
from planner.answers import AnswerCheck, check_answer
from planner.config import EngineConfig
from planner.effects import SentRequest
from planner.errors import EventOrderError, InvalidTransition
from planner.events import (
    PAYLOADS,
    ActionEdited,
    ActionExecuted,
    AlternativeForced,
    AnswerJudged,
    ApprovalGranted,
    ApprovalRequested,
    Box,
    Cause,
    ChildrenReordered,
    CommandApplied,
    CommandRejected,
    ConfigChanged,
    ConstraintsSet,
    Diagnosed,
    Event,
    Kind,
    ModelCalled,
    NodeExpanded,
    NodeReset,
    NodeRestored,
    NodeRewritten,
    NodesAdded,
    NodeSpec,
    NoteAdded,
    Observed,
    PageObserved,
    Payload,
    RevisionUsed,
    RolledBack,
    RunStatus,
    SecretFound,
    SessionCreated,
    SessionFinished,
    SessionForked,
    SessionStatus,
    StatusChanged,
)
from planner.questions import Candidate
from planner.secrets import Secrets
from planner.status import CLOSED, REMOVED, given_steps, move
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status, TemplateRef, Tree

__all__ = [
    "TERMINAL",
    "Approval",
    "Metrics",
    "Recorder",
    "RunStatus",
    "SeenCandidate",
    "SessionState",
    "apply",
    "replay",
]


TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED})


class SeenCandidate(Candidate):
    """A candidate as the session knows it: its fields merged over every report, and the node that last saw it."""

    seen_at: str | None = None


@dataclass(slots=True)
class Approval:
    """A guarded action waiting for an operator's decision, with the element it would touch and the
    screenshot that shows it (`ApprovalRequested`), so the console draws the box from the state alone."""

    node_id: str
    action: str
    rule: str
    role: str = ""
    name: str = ""
    screenshot: str | None = None
    box: Box | None = None
    requests: tuple[SentRequest, ...] = ()
    """What the effect fence held (empty: the action is held by its name, target or a dialog)."""


@dataclass(slots=True)
class Metrics:
    model_calls: int = 0
    model_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    actions: int = 0
    failed_actions: int = 0
    repairs: int = 0
    repair_attempts: int = 0
    rollbacks: int = 0
    commands_applied: int = 0
    commands_rejected: int = 0


@dataclass(slots=True)
class SessionState:
    """Everything known about one session after some prefix of its events.

    Fields that need a word say it below, where they are declared.
    """

    task: str = ""
    start_url: str | None = None
    model: str = ""
    model_data: dict[str, Any] = field(default_factory=dict)
    config: EngineConfig = field(default_factory=EngineConfig)
    tree: Tree = field(default_factory=Tree)
    status: RunStatus = RunStatus.RUNNING
    cause: Cause | None = None
    """Why the session has its `status` (None: a status change whose writer did not say)."""
    reason: str | None = None
    """Why the session has its `status`, said to people."""
    seq: int = 0
    steps: int = 0
    url: str | None = None
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    progress: str = ""
    feedback: str = ""
    summary: str = ""
    page_text: str = ""
    constraints: list[str] | None = None
    """None until extracted (or set by an operator)."""
    candidates: dict[str, SeenCandidate] = field(default_factory=dict)
    """The items the task may be answered with, by name, as the observations reported them."""
    proposals: dict[str, str] = field(default_factory=dict)
    """Unexpanded node id -> the action a model planned ahead on the current page; any page change clears them."""
    final_answer: str | None = None
    expect: list[str] = field(default_factory=list)
    """The strings a correct answer contains, when the task came with them (`answer_check`)."""
    single_steps: int = 0
    """Single steps still to take before the run pauses (0: it runs on)."""
    approval: Approval | None = None
    rejection_open: bool = False
    """An operator rejected an action, and since then the run has neither run an action nor paused for
    having nothing left to try (`Cause.NO_ALTERNATIVE`): the engine pauses once for a rejection rather
    than let it end the run."""
    approved_node: str | None = None
    approved_requests: tuple[str, ...] | None = None
    """With `approved_node`: the held requests the operator let through (None: the action itself)."""
    breakpoint_passed: str | None = None
    """The node a breakpoint last held, so the resumed run goes past it once; resetting that node forgets it."""
    current: str | None = None
    last_screenshot: str | None = None
    handled_commands: set[str] = field(default_factory=set)
    edits: list[Event] = field(default_factory=list)
    """The operator's undo stack: the `command_applied` events of the plan edits an undo may still take
    back, oldest first (each carries the nodes it changed)."""
    made_by: dict[str, str] = field(default_factory=dict)
    """Node id -> the operator whose command made the node (`CommandApplied.by`); a node whose operator
    is not known is not in it."""
    edited_by: dict[str, str] = field(default_factory=dict)
    """Node id -> the operator whose command last changed the node; a node whose operator is not known
    is not in it."""
    failed: set[str] = field(default_factory=set)
    """The nodes whose last outcome was a failure, those the engine then pruned included (a failed action
    ends PRUNED), so every view tells a failure from a prune; a node tried again (reopened, repaired)
    leaves it."""
    started_by: str | None = None
    """The operator who started the session, or forked it from another (None: not known)."""
    forked_from: tuple[str, int] | None = None
    metrics: Metrics = field(default_factory=Metrics)
    diagnosis: Diagnosed | None = None
    """The latest diagnosis appended to the finished run, if any."""
    answer_verdict: AnswerJudged | None = None
    """An operator's latest word on the finished run's answer, if any (`sessions.client.verdict`)."""
    secrets: Secrets = field(default_factory=Secrets)
    """The secrets the session declared and those found typed into password fields so far
    (`planner.secrets`; in a state folded from a masked log, their values are masked too)."""

    @property
    def answer_check(self) -> AnswerCheck | None:
        """The final answer checked against `expect`, once the run has finished; None without `expect`."""
        if not self.expect or not self.finished:
            return None
        return check_answer(self.expect, self.final_answer)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL

    @property
    def over_budget(self) -> str | None:
        """Why the run may not call the model again (its cost cap is spent), or None."""
        cap = self.config.max_cost_usd
        if cap is None or self.metrics.cost_usd < cap:
            return None
        return f"cost cap reached: ${self.metrics.cost_usd:.4f} spent of ${cap:g}; raise the cap to go on"

    @property
    def awaits_constraints(self) -> bool:
        """Constraint extraction has yet to run: it is the first thing a session does, unless switched off."""
        return self.constraints is None and self.config.constraints


def _session_created(state: SessionState, event: Event) -> None:
    p = cast(SessionCreated, event.payload)
    state.task = p.task
    state.start_url = p.start_url
    state.url = p.start_url
    state.model = p.model
    state.model_data = p.model_data
    state.config = p.config
    state.status = p.status
    state.cause = Cause.OPERATOR  # started, running or paused, as the operator asked
    state.expect = list(p.expect)
    state.started_by = p.by
    state.secrets = Secrets(p.secrets)
    state.tree.nodes[ROOT_ID] = Node(id=ROOT_ID, description=p.task, url=state.url)


def _session_forked(state: SessionState, event: Event) -> None:
    p = cast(SessionForked, event.payload)
    state.forked_from = (p.from_session, p.at_seq)
    state.status = RunStatus.PAUSED
    state.cause = Cause.OPERATOR
    state.reason = f"forked from {p.from_session} at event {p.at_seq}"
    state.started_by = p.by
    state.handled_commands.clear()
    state.single_steps = 0


def _session_status(state: SessionState, event: Event) -> None:
    p = cast(SessionStatus, event.payload)
    state.status = p.status
    state.cause = p.cause
    state.reason = p.reason
    state.single_steps = p.single_steps or (1 if p.single_step else 0)
    if p.cause is Cause.NO_ALTERNATIVE:
        state.rejection_open = False
    if p.breakpoint_node:
        state.breakpoint_passed = p.breakpoint_node
    if state.status is not RunStatus.AWAITING_APPROVAL:
        state.approval = None


def _session_finished(state: SessionState, event: Event) -> None:
    p = cast(SessionFinished, event.payload)
    state.status = p.status
    state.reason = p.reason
    state.final_answer = p.final_answer
    state.current = None
    check = state.answer_check
    state.cause = Cause.FINISHED
    if check is not None and p.status is RunStatus.SUCCEEDED:
        state.cause = Cause.ANSWER_CHECKED if check.passed else Cause.ANSWER_MISSED


def _config_changed(state: SessionState, event: Event) -> None:
    """Validated against the whole config, so a change that breaks it fails here, once, not in every reader."""
    changes = cast(ConfigChanged, event.payload).changes
    state.config = EngineConfig.model_validate({**state.config.model_dump(), **changes})


def _constraints_set(state: SessionState, event: Event) -> None:
    state.constraints = list(cast(ConstraintsSet, event.payload).constraints)


def _node_id(event: Event) -> str:
    """The node an event of a node's kind is filed under; one naming none fails as one naming an unknown
    node does."""
    if event.node_id is None:
        raise KeyError(f"event {event.seq} ({event.kind.value}) names no node")
    return event.node_id


def _node(state: SessionState, event: Event) -> Node:
    return state.tree[_node_id(event)]


def _step(state: SessionState, event: Event) -> None:
    state.steps += 1
    state.current = event.node_id


_validate_node = Node.__pydantic_validator__.validate_python
"""Validating a node is faster than `Node.model_construct`, whose field loop runs in Python (bench.engine)."""


def _new_node(
    state: SessionState, parent: Node, spec: NodeSpec, origin: Origin, template: TemplateRef | None = None
) -> Node:
    fields: dict[str, object] = {
        "id": spec.id,
        "parent": parent.id,
        "description": spec.description,
        "score": spec.score,
        "origin": origin,
        "protected": origin is Origin.OPERATOR,
        "url": state.url,
        "step_created": state.steps,
    }
    if template is not None:
        fields["template"] = template
    node: Node = _validate_node(fields)
    state.tree.nodes[node.id] = node
    if spec.action:
        state.proposals[node.id] = spec.action
    return node


def _node_expanded(state: SessionState, event: Event) -> None:
    p = cast(NodeExpanded, event.payload)
    node = _node(state, event)
    given = given_steps(state.tree, node) if p.lead else []
    move(node, Status.VISITED)
    node.type = p.type
    node.reason = None
    state.proposals.pop(node.id, None)
    if node.type is NodeType.ACTION:
        node.action = p.action
    ids = [_new_node(state, node, spec, p.origin).id for spec in p.children]
    at = node.children.index(given[0].id) if given else len(node.children)
    node.children[at:at] = ids[: p.lead]
    node.children.extend(ids[p.lead :])


def _nodes_added(state: SessionState, event: Event) -> None:
    p = cast(NodesAdded, event.payload)
    parent = _node(state, event)
    if p.parent_type:
        parent.type = p.parent_type
        state.proposals.pop(parent.id, None)
        if parent.status is Status.FAIL:
            move(parent, Status.VISITED)
    if p.types or p.template is not None:
        ids = _subtrees_added(state, parent, p)
    else:
        ids = [_new_node(state, parent, spec, p.origin).id for spec in p.nodes]
    if p.position is None:
        parent.children.extend(ids)
    else:
        parent.children[p.position : p.position] = ids


def _subtrees_added(state: SessionState, parent: Node, p: NodesAdded) -> list[str]:
    """Add nested new nodes (a template's) under their parents; returns the ids of the top ones,
    the parent's new children. A node's parent is the node its id extends (`NodesAdded`)."""
    top: list[str] = []
    nodes = state.tree.nodes
    for spec in p.nodes:
        owner_id = spec.id.rpartition(".")[0]
        owner = parent if owner_id == parent.id else nodes[owner_id]
        node = _new_node(state, owner, spec, p.origin, p.template)
        node.type = p.types.get(node.id, node.type)
        if owner is parent:
            top.append(node.id)
        else:
            owner.children.append(node.id)
    return top


_TRIED_AGAIN = frozenset({Status.UNVISITED, Status.VISITED, Status.SUCCESS})
"""A node moved to one of these after failing is being tried again (reopened, repaired): no longer a failure."""


def _status_changed(state: SessionState, event: Event) -> None:
    p = cast(StatusChanged, event.payload)
    node = _node(state, event)
    new = p.status
    move(node, new)
    node.reason = p.reason
    if new is Status.FAIL:
        state.failed.add(node.id)
    elif new in _TRIED_AGAIN:
        state.failed.discard(node.id)
    if node.id == ROOT_ID:
        state.final_answer = p.answer
    if new in CLOSED:
        state.proposals.pop(node.id, None)
    if p.subtree:
        for child in state.tree.descendants(node):
            if child.status not in CLOSED:
                move(child, new)
                child.reason = p.reason
                state.proposals.pop(child.id, None)


def _node_rewritten(state: SessionState, event: Event) -> None:
    p = cast(NodeRewritten, event.payload)
    node = _node(state, event)
    if p.description != node.description:
        node.earlier = (*node.earlier, node.description)
    node.description = p.description
    state.proposals.pop(node.id, None)
    if p.by is Origin.OPERATOR:
        node.protected = True


def _node_reset(state: SessionState, event: Event) -> None:
    """Back to UNVISITED: unexpanded again unless it is an action that should simply run again."""
    p = cast(NodeReset, event.payload)
    node = _node(state, event)
    move(node, Status.UNVISITED)
    node.reason = p.reason
    node.forced = None
    state.proposals.pop(node.id, None)
    if state.breakpoint_passed == node.id:
        state.breakpoint_passed = None  # it will be entered afresh, and a breakpoint on it holds it again
    if node.id == ROOT_ID:
        state.final_answer = None
    if node.type is not NodeType.ACTION or p.reexpand:
        node.type = NodeType.UNKNOWN
        node.action = None
    if p.by is Origin.OPERATOR:
        node.protected = True


def _node_restored(state: SessionState, event: Event) -> None:
    """An undo puts a node back as its edit found it. A PRUNED or DELETED node leaves only through
    UNVISITED, as a reopen does, so each step of the way is one `move` checks."""
    face = cast(NodeRestored, event.payload).to
    node = _node(state, event)
    if node.status in REMOVED and face.status is not node.status:
        move(node, Status.UNVISITED)
    move(node, face.status)
    node.type = face.type
    node.description = face.description
    node.action = face.action
    node.reason = face.reason
    node.forced = face.forced
    node.protected = face.protected
    node.earlier = face.earlier
    node.earlier_actions = face.earlier_actions
    state.proposals.pop(node.id, None)


def _children_reordered(state: SessionState, event: Event) -> None:
    """Only a permutation of the children is taken: a child dropped from the list would free its id for
    reuse (`Tree.new_child_ids` numbers on from the list's length), and the traversal and the chart
    would lose a node the log still names."""
    node = _node(state, event)
    order = cast(ChildrenReordered, event.payload).order
    if sorted(order) != sorted(node.children):
        raise InvalidTransition(f"node {node.id}: {', '.join(order)} is not an order of its children")
    node.children = list(order)


def _revision_used(state: SessionState, event: Event) -> None:
    _node(state, event).revisions += 1
    state.metrics.repair_attempts += 1
    if cast(RevisionUsed, event.payload).ok:
        state.metrics.repairs += 1


def _alternative_forced(state: SessionState, event: Event) -> None:
    _node(state, event).forced = cast(AlternativeForced, event.payload).child


def _action_executed(state: SessionState, event: Event) -> None:
    p = cast(ActionExecuted, event.payload)
    node = _node(state, event)
    new = Status.SUCCESS if p.ok else Status.FAIL
    move(node, new)
    node.reason = p.error
    state.metrics.actions += 1
    state.rejection_open = False  # the plan found a way on: a later failure is not the rejection's
    if not p.ok:
        state.metrics.failed_actions += 1
        state.failed.add(node.id)
    if not is_note(p.action):
        state.proposals.clear()
    _see_page(state, p)
    if p.screenshot:
        state.last_screenshot = p.screenshot
    if state.approved_node == node.id:
        state.approved_node = state.approved_requests = None


def _action_edited(state: SessionState, event: Event) -> None:
    node = _node(state, event)
    action = cast(ActionEdited, event.payload).action
    if node.action and action != node.action:
        node.earlier_actions = (*node.earlier_actions, node.action)
    node.action = action
    node.protected = True


def _approval_requested(state: SessionState, event: Event) -> None:
    p = cast(ApprovalRequested, event.payload)
    state.approval = Approval(_node_id(event), p.action, p.rule, p.role, p.name, p.screenshot, p.box, p.requests)
    state.approved_node = state.approved_requests = None  # an approved action held again needs a new answer
    state.status = RunStatus.AWAITING_APPROVAL
    state.cause = Cause.APPROVAL
    state.reason = f"approval required: {p.rule}"


def _approval_granted(state: SessionState, event: Event) -> None:
    state.approved_node = event.node_id
    state.approved_requests = cast(ApprovalGranted, event.payload).requests
    state.approval = None
    state.status = RunStatus.RUNNING
    state.cause = Cause.OPERATOR
    state.reason = None


def _observed(state: SessionState, event: Event) -> None:
    p = cast(Observed, event.payload)
    state.progress = p.progress
    state.summary = p.summary
    state.feedback = p.feedback
    state.notes.extend(p.notes)
    for proposal in p.proposals:
        state.proposals[proposal.node] = proposal.action
    for candidate in p.candidates:
        known = state.candidates.get(candidate.name)
        fields = {**known.fields, **candidate.fields} if known is not None else candidate.fields
        state.candidates[candidate.name] = SeenCandidate.model_construct(
            name=candidate.name,
            verdict=cast(Any, candidate.verdict),  # as the log keeps it: any word (`CandidateReport`), unchecked here
            fields=fields,
            unmet=candidate.unmet,
            seen_at=event.node_id,
        )


def _note_added(state: SessionState, event: Event) -> None:
    state.notes.append(cast(NoteAdded, event.payload).text)


def _model_call(state: SessionState, event: Event) -> None:
    p = cast(ModelCalled, event.payload)
    metrics = state.metrics
    metrics.model_calls += 1
    if not p.ok:
        metrics.model_errors += 1
    for key, value in p.usage.items():
        if key in _USAGE_COUNTS and _counts(value):
            setattr(metrics, key, getattr(metrics, key) + value)


_USAGE_COUNTS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"})
"""The usage keys `Metrics` adds up, under the same names; calls without usage (scripted ones) cost nothing."""


def _counts(value: Any) -> bool:
    """A recorded count or cost is added only when it is a finite number >= 0.

    The adapters validate usage before recording it; this keeps logs written before they did from
    pulling the session's cost below zero, where a cost cap could never trigger.
    """
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < math.inf


def _see_page(state: SessionState, page: ActionExecuted | PageObserved | RolledBack) -> None:
    if page.url:
        state.url = page.url
        state.title = page.title
    if page.observation is not None:
        state.page_text = page.observation


def _page_observed(state: SessionState, event: Event) -> None:
    state.proposals.clear()
    _see_page(state, cast(PageObserved, event.payload))


def _rollback(state: SessionState, event: Event) -> None:
    p = cast(RolledBack, event.payload)
    state.metrics.rollbacks += 1
    state.proposals.clear()
    if p.ok:
        _see_page(state, p)


def _command_handled(state: SessionState, event: Event) -> None:
    state.handled_commands.add(cast(CommandApplied | CommandRejected, event.payload).command_id)
    if event.kind is Kind.COMMAND_APPLIED:
        state.metrics.commands_applied += 1
        _stack_edit(state, event)
        _sign_nodes(state, cast(CommandApplied, event.payload))
        if cast(CommandApplied, event.payload).command.get("kind") == "reject":
            state.rejection_open = True
    else:
        state.metrics.commands_rejected += 1


def _stack_edit(state: SessionState, event: Event) -> None:
    """An edit that changed nodes goes on the undo stack; an undo takes the edit it undid off it."""
    applied = cast(CommandApplied, event.payload)
    if applied.undoes is not None:
        state.edits = [e for e in state.edits if cast(CommandApplied, e.payload).command_id != applied.undoes]
    elif applied.changes:
        state.edits.append(event)


def _sign_nodes(state: SessionState, applied: CommandApplied) -> None:
    """The nodes a command made or changed are its operator's; a command whose operator is not known
    leaves them with no known editor rather than the previous one. An edited action that approved a
    guarded one records no changes (no undo may take it back), so its node is the approved one."""
    changed = [(change.id, change.before is None) for change in applied.changes]
    if not changed and applied.command.get("kind") == "edit_action" and state.approved_node is not None:
        changed = [(state.approved_node, False)]
    for node_id, made in changed:
        signed = state.made_by if made else state.edited_by
        if applied.by is None:
            signed.pop(node_id, None)
        else:
            signed[node_id] = applied.by


def _diagnosed(state: SessionState, event: Event) -> None:
    """The latest diagnosis stands; it changes nothing about the run itself."""
    state.diagnosis = cast(Diagnosed, event.payload)


def _answer_judged(state: SessionState, event: Event) -> None:
    """The operator's word on the answer: the session keeps its status, its cause says what is known."""
    judged = cast(AnswerJudged, event.payload)
    state.answer_verdict = judged
    state.cause = Cause.ANSWER_ACCEPTED if judged.accepted else Cause.ANSWER_REJECTED


def _secret_found(state: SessionState, event: Event) -> None:
    state.secrets = state.secrets.with_found(cast(SecretFound, event.payload).value)


def _ignore(state: SessionState, event: Event) -> None:
    return None


_HANDLERS: dict[Kind, Callable[[SessionState, Event], None]] = {
    Kind.SESSION_CREATED: _session_created,
    Kind.SESSION_FORKED: _session_forked,
    Kind.SESSION_STATUS: _session_status,
    Kind.SESSION_FINISHED: _session_finished,
    Kind.STEP: _step,
    Kind.CONFIG_CHANGED: _config_changed,
    Kind.CONSTRAINTS_SET: _constraints_set,
    Kind.NODE_EXPANDED: _node_expanded,
    Kind.NODES_ADDED: _nodes_added,
    Kind.STATUS_CHANGED: _status_changed,
    Kind.NODE_REWRITTEN: _node_rewritten,
    Kind.NODE_RESET: _node_reset,
    Kind.NODE_RESTORED: _node_restored,
    Kind.CHILDREN_REORDERED: _children_reordered,
    Kind.REVISION_USED: _revision_used,
    Kind.ALTERNATIVE_FORCED: _alternative_forced,
    Kind.ACTION_EXECUTED: _action_executed,
    Kind.ACTION_EDITED: _action_edited,
    Kind.APPROVAL_REQUESTED: _approval_requested,
    Kind.APPROVAL_GRANTED: _approval_granted,
    Kind.OBSERVED: _observed,
    Kind.NOTE_ADDED: _note_added,
    Kind.MODEL_CALL: _model_call,
    Kind.UPDATE_REFUSED: _ignore,
    Kind.ROLLBACK: _rollback,
    Kind.PAGE_OBSERVED: _page_observed,
    Kind.COMMAND_APPLIED: _command_handled,
    Kind.COMMAND_REJECTED: _command_handled,
    Kind.DIAGNOSED: _diagnosed,
    Kind.SECRET_FOUND: _secret_found,
    Kind.ANSWER_JUDGED: _answer_judged,
}


def apply(state: SessionState, event: Event) -> None:
    """Fold one event into `state`; refuses any event that is not the next in sequence."""
    if event.seq != state.seq + 1:
        raise EventOrderError(f"event {event.seq} applied after {state.seq}; expected {state.seq + 1}")
    _HANDLERS[event.kind](state, event)
    state.seq = event.seq


def replay(events: Iterable[Event], state: SessionState | None = None) -> SessionState:
    """Rebuild state from a log prefix (or continue folding onto `state`)."""
    state = state if state is not None else SessionState()
    for event in events:
        apply(state, event)
    return state


_VALIDATE: dict[Kind, Callable[[dict[str, Any]], Payload]] = {
    kind: model.__pydantic_validator__.validate_python for kind, model in PAYLOADS.items()
}
"""Each kind's payload validator, called directly: the same checks as `Model(**fields)` at half the cost."""


class Recorder:
    """Sequences drafts, applies them to the live state and collects them for the store."""

    __slots__ = ("_clock", "events", "state")

    def __init__(self, state: SessionState, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.events: list[Event] = []
        self._clock = clock

    def record(self, kind: Kind, node_id: str | None = None, **fields: Any) -> Event:
        """Validate `fields` into the kind's payload model (so a wrong field fails here, where it was made)."""
        payload: Payload = _VALIDATE[kind](fields)
        event = Event(self.state.seq + 1, kind, node_id, payload, payload.VERSION, self._clock())
        apply(self.state, event)
        self.events.append(event)
        return event

    def take(self) -> list[Event]:
        events, self.events = self.events, []
        return events
