"""Operator commands: the one place that decides whether an edit is allowed, and what it does.

A command is validated against the current state in full before anything is recorded, then
becomes ordinary events followed by `command_applied`; a command that cannot be applied becomes a
single `command_rejected` whose reason is written for the person who sent it. Applying a command
whose id was already handled does nothing, so a command delivered twice takes effect once.

A plan edit (inject, prune, edit, reopen, force, and an action edit that approves nothing) records
in its `command_applied` the nodes it added or changed, before and after (`planner.diff`). `Undo`
takes back the latest such edit still on the state's undo stack, and only while it is safe: every
node the edit added or changed is still exactly as the edit left it (same status, type, description,
action and forced alternative), an alternative it forced is still untried, and no node it puts back
in the plan would sit under a node that has since finished. Because the traversal marks a node
VISITED when it enters it, an action SUCCESS or FAIL when it runs, and typing a node is expanding
it, "as the edit left it" means none of its nodes has run. The undo restores each node through
`node_restored` events (a node the edit added leaves the plan as DELETED, its id never reused), so
state stays a fold of the log and the traversal's position stays derived from the tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Literal, cast
from uuid import uuid4

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from planner.config import Breakpoint
from planner.diff import EditRecorder
from planner.errors import CommandRejected
from planner.events import CommandApplied, Event, Kind, NodeChange, NodeFace
from planner.inputs import describe_validation_error, shown
from planner.state import TERMINAL, Recorder, RunStatus, SessionState
from planner.status import CLOSED, IN_PROGRESS, REMOVED, REOPENABLE
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status

__all__ = [
    "COMMAND_MODELS",
    "OPERATOR_SCORE",
    "ActionCheck",
    "Approve",
    "Command",
    "Edit",
    "EditAction",
    "Force",
    "Inject",
    "Pause",
    "Prune",
    "Reject",
    "Reopen",
    "Resume",
    "SetBreakpoints",
    "SetBudget",
    "SetConstraints",
    "Spelling",
    "Step",
    "Stop",
    "Undo",
    "apply_command",
    "describe_command_error",
    "parse_command",
    "undo_refusal",
]

OPERATOR_SCORE = 1.0
"""Score given to an operator's OR alternative when none is chosen: it runs before the model's."""


def _not_blank(text: str) -> str:
    """Descriptions, goals, reasons and actions must say something: whitespace alone would empty a node."""
    text = text.strip()
    if not text:
        raise ValueError("cannot be blank; write some text")
    return text


def _blank_or_text(text: str) -> str:
    """An optional reason is left out or says something; spaces alone are a slip, not a reason."""
    if text and not text.strip():
        raise ValueError("cannot be only spaces; leave it out or write a reason")
    return text.strip()


@dataclass(frozen=True, slots=True)
class Spelling:
    """How a command line spells a command field: field metadata that validation ignores.

    Front ends build their forms from the models (see `COMMAND_MODELS`); a form of flags needs a few
    words the types do not give. `option` is the flag (default: the field's name, dashed: `--node`);
    `argument` makes the field positional under that name instead; `noun` is what an error calls
    one value (default: the flag's or the argument's words); `unit` is what a number counts.
    """

    option: str | None = None
    argument: str | None = None
    noun: str | None = None
    unit: str | None = None


_Text = Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_not_blank)]
_NodeId = Annotated[str, Field(min_length=1, max_length=200), Spelling(noun="node id")]


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    command_id: str = Field(default_factory=lambda: uuid4().hex, min_length=1, max_length=64)


class Pause(_Command):
    kind: Literal["pause"] = Field("pause", description="pause at the next step boundary")


class Resume(_Command):
    kind: Literal["resume"] = Field("resume", description="resume a paused or stopped session")


class Step(_Command):
    """Run exactly one step, then pause."""

    kind: Literal["step"] = Field("step", description="run one step, then pause")


class Stop(_Command):
    kind: Literal["stop"] = Field("stop", description="stop the run (resumable)")


class Inject(_Command):
    """Add sub-goals (under an AND) or alternatives (under an OR) at a position among the children."""

    kind: Literal["inject"] = Field("inject", description="add sub-goals or alternatives under a node")
    parent: _NodeId = Field(description="node id to add under, e.g. 0 or 0.2")
    goals: Annotated[list[_Text], Spelling(option="--goal")] = Field(
        min_length=1, max_length=50, description="a sub-goal (repeat)"
    )
    position: int | None = Field(
        default=None, ge=0, le=100_000, description="index among the children (default: append)"
    )
    node_type: Annotated[Literal["AND", "OR"] | None, Spelling(option="--type")] = Field(
        default=None, description="type for an unexpanded parent"
    )
    scores: Annotated[
        list[Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]] | None, Spelling(option="--score")
    ] = Field(default=None, description="score per OR alternative")


class Prune(_Command):
    """Remove a step the plan does not need; later siblings are kept (unlike a failure)."""

    kind: Literal["prune"] = Field("prune", description="remove a step the plan does not need")
    node: _NodeId
    reason: _Text


class Edit(_Command):
    kind: Literal["edit"] = Field("edit", description="change the description of an open node")
    node: _NodeId
    description: _Text
    reexpand: bool = Field(default=False, description="drop its open children and expand it again")


class Reopen(_Command):
    kind: Literal["reopen"] = Field("reopen", description="return a FAIL, PRUNED or DELETED node to UNVISITED")
    node: _NodeId


class Force(_Command):
    """Choose which OR alternative runs next."""

    kind: Literal["force"] = Field("force", description="choose the OR alternative that runs next")
    node: _NodeId
    child: _NodeId


class Undo(_Command):
    """Take back the operator's latest plan edit, while none of the nodes it added or changed has run."""

    kind: Literal["undo"] = Field("undo", description="take back the last plan edit while its nodes have not run")


class Approve(_Command):
    kind: Literal["approve"] = Field("approve", description="let the guarded action run")
    node: _NodeId | None = None


class Reject(_Command):
    """Refuse the guarded action: it fails, and the planner recovers at once, or (`pause`) the
    session pauses first so the operator can change the plan before it does."""

    kind: Literal["reject"] = Field("reject", description="refuse the guarded action (it fails)")
    reason: Annotated[str, Field(max_length=2000), AfterValidator(_blank_or_text)] = ""
    pause: bool = Field(default=False, description="pause after rejecting, so the plan can be changed first")


class EditAction(_Command):
    """Replace a pending action's text; for a guarded action this also approves the new text."""

    kind: Literal["edit_action"] = Field("edit_action", description="replace a pending action (approves a guarded one)")
    action: _Text
    node: _NodeId | None = None


class SetBreakpoints(_Command):
    """Change when the session pauses by itself, while it runs."""

    kind: Literal["breakpoints"] = Field(
        "breakpoints", description="set when the session pauses by itself (none clears them)"
    )
    breakpoints: Annotated[list[Breakpoint], Spelling(argument="KIND", noun="breakpoint")] = Field(default_factory=list)


class SetConstraints(_Command):
    """Replace the task's constraints, one requirement per entry; every later prompt is held to them.

    Setting them before the run starts also skips the model's own extraction.
    """

    kind: Literal["constraints"] = Field("constraints", description="replace the task's constraints (none clears them)")
    constraints: Annotated[list[Annotated[str, Field(max_length=500)]], Spelling(argument="REQUIREMENT")] = Field(
        default_factory=list, max_length=50, description='e.g. "backpack: price under $60"'
    )


class SetBudget(_Command):
    """Change the session's cost cap in USD (None removes it); the run pauses when the cap is spent."""

    kind: Literal["budget"] = Field("budget", description="set the cost cap in USD (without --max-cost: no cap)")
    max_cost_usd: Annotated[float | None, Spelling(option="--max-cost", unit="USD")] = Field(
        default=None, gt=0, le=10_000, allow_inf_nan=False
    )


Command = Annotated[
    Pause
    | Resume
    | Step
    | Stop
    | Inject
    | Prune
    | Edit
    | Reopen
    | Force
    | Undo
    | Approve
    | Reject
    | EditAction
    | SetBreakpoints
    | SetConstraints
    | SetBudget,
    Field(discriminator="kind"),
]

_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)


def parse_command(data: dict[str, object] | str) -> Command:
    """Validate a command from JSON text or a dict (raises pydantic's ValidationError)."""
    if isinstance(data, str):
        return _ADAPTER.validate_json(data)
    return _ADAPTER.validate_python(data)


def describe_command_error(error: ValidationError) -> str:
    """Why `parse_command` refused a command, as one sentence for the operator who sent it.

    pydantic locates a problem inside a tagged union under the tag ("inject", "goals", 0); the
    sentence names the command instead ("invalid inject command: goals #1: cannot be blank").
    """
    first = error.errors(include_url=False)[0]
    if first["type"] in ("union_tag_invalid", "union_tag_not_found", "model_attributes_type", "dict_type"):
        kinds = ", ".join(COMMAND_MODELS)
        tag = (first.get("ctx") or {}).get("tag")
        given = f"'{shown(tag, 30)}' is not a command kind" if tag is not None else "its kind is missing"
        return f"invalid command: {given}; use one of {kinds}"
    kind = first["loc"][0] if first["loc"] else None
    subject = f"invalid {shown(kind, 30)} command" if isinstance(kind, str) else "invalid command"
    return f"{subject}: {describe_validation_error(error, skip=1 if kind is not None else 0)}"


ActionCheck = Callable[[str], "str | None"]
"""Why an action cannot run on the current page, or None (`Environment.check`)."""


def apply_command(state: SessionState, command: Command, check_action: ActionCheck | None = None) -> list[Event]:
    """Apply or reject `command` against `state`; returns the events recorded (none if already handled).

    `check_action` is the page's own check: an operator's edited action is refused when the page
    could not run it, exactly as a model's action would be. Without it (no browser yet) the edit is
    taken as written and the engine's own check still applies before it runs.
    """
    if command.command_id in state.handled_commands:
        return []
    recorder = EditRecorder(state)
    summary = command.model_dump(mode="json")
    target = _target(state, command)
    try:
        effects = _validate(state, command, check_action)
    except CommandRejected as rejection:
        recorder.record(
            Kind.COMMAND_REJECTED,
            target,
            command_id=command.command_id,
            command=summary,
            reason=str(rejection),
        )
    else:
        warning = _warning(state, command)
        edits_plan = _edits_plan(state, command)
        undoes = _undone(state).command_id if isinstance(command, Undo) else None
        for effect in effects:
            effect(recorder)
        recorder.record(
            Kind.COMMAND_APPLIED,
            target,
            command_id=command.command_id,
            command=summary,
            warning=warning,
            changes=recorder.changes() if edits_plan else [],
            undoes=undoes,
        )
    return recorder.take()


def _edits_plan(state: SessionState, command: Command) -> bool:
    """Whether the command's changes are recorded: every plan edit, and an undo. An edited action that
    approves a guarded one runs at once, so it is no edit an undo could take back."""
    if isinstance(command, EditAction):
        return state.status is not RunStatus.AWAITING_APPROVAL
    return isinstance(command, (Inject, Prune, Edit, Reopen, Force, Undo))


# -- validation ------------------------------------------------------------------------------------

_Effect = Callable[[Recorder], object]


def _warning(state: SessionState, command: Command) -> str | None:
    """What an accepted command cannot undo: actions in a pruned subtree that already ran."""
    if not isinstance(command, Prune):
        return None
    node = state.tree[command.node]
    ran = [n for n in (node, *state.tree.descendants(node)) if n.type is NodeType.ACTION and n.status is Status.SUCCESS]
    if not ran:
        return None
    shown = ", ".join(f"{n.id} ({n.action})" for n in ran[:3]) + (f" and {len(ran) - 3} more" if len(ran) > 3 else "")
    return f"already ran in the browser: {shown}; pruning takes it out of the plan but does not undo it"


def _target(state: SessionState, command: Command) -> str | None:
    """The node a command's events are filed under; an undo's is the one its edit was made at."""
    if isinstance(command, Undo):
        return state.edits[-1].node_id if state.edits else None
    for name in ("parent", "node"):
        value = getattr(command, name, None)
        if value is not None:
            return value
    return None


def _validate(state: SessionState, command: Command, check_action: ActionCheck | None) -> list[_Effect]:
    if state.status in TERMINAL:
        raise CommandRejected(f"the session has ended ({state.status.value}); fork it to continue")
    validator = _VALIDATORS[type(command)]
    return validator(state, command, check_action) if type(command) in _NEEDS_PAGE else validator(state, command)


def _status(status: RunStatus, reason: str, **extra: object) -> _Effect:
    return lambda rec: rec.record(Kind.SESSION_STATUS, status=status.value, reason=reason, **extra)


def _set(node_id: str, status: Status, reason: str, subtree: bool = False) -> _Effect:
    return lambda rec: rec.record(Kind.STATUS_CHANGED, node_id, status=status.value, reason=reason, subtree=subtree)


def _node(state: SessionState, node_id: str) -> Node:
    node = state.tree.get(node_id)
    if node is None:
        raise CommandRejected(f"there is no node {node_id!r} in this session")
    return node


def _not_awaiting(state: SessionState) -> None:
    if state.status is RunStatus.AWAITING_APPROVAL:
        raise CommandRejected("an action is waiting for approval: approve, edit or reject it first")


def _pause(state: SessionState, command: Pause) -> list[_Effect]:
    _not_awaiting(state)
    if state.status is not RunStatus.RUNNING:
        raise CommandRejected(f"the session is already {state.status.value}")
    return [_status(RunStatus.PAUSED, "paused by operator")]


def _resume(state: SessionState, command: Resume) -> list[_Effect]:
    _not_awaiting(state)
    _within_budget(state)
    if state.status is RunStatus.RUNNING:
        raise CommandRejected("the session is already running")
    return [_status(RunStatus.RUNNING, "resumed by operator")]


def _step(state: SessionState, command: Step) -> list[_Effect]:
    _not_awaiting(state)
    _within_budget(state)
    return [_status(RunStatus.RUNNING, "one step", single_step=True)]


def _within_budget(state: SessionState) -> None:
    if (spent := state.over_budget) is not None:
        raise CommandRejected(spent)


def _stop(state: SessionState, command: Stop) -> list[_Effect]:
    if state.status is RunStatus.STOPPED:
        raise CommandRejected("the session is already stopped")
    return [_status(RunStatus.STOPPED, "stopped by operator")]


def _open_path(state: SessionState, node: Node, include_self: bool) -> list[_Effect]:
    """Reopen finished or failed ancestors so the traversal can reach `node` again.

    Refused under a node waiting to be expanded again: its old children are history (pruned or
    finished), and reopening one would leave open work under a node the traversal expands afresh.
    """
    effects: list[_Effect] = []
    chain = [node] if include_self else []
    chain.extend(state.tree.ancestors(node))
    for ancestor in chain:
        if ancestor.status in REMOVED:
            raise CommandRejected(f"{ancestor.id} is {ancestor.status.value}; reopen it first")
        if ancestor.type is NodeType.UNKNOWN:
            raise CommandRejected(f"{ancestor.id} is waiting to be expanded again; its old children are history")
    for ancestor in chain:
        if ancestor.status in (Status.SUCCESS, Status.FAIL):
            effects.append(_set(ancestor.id, Status.VISITED, "reopened by operator"))
    return effects


def _or_already_done(state: SessionState, node: Node) -> None:
    if node.type is NodeType.OR:
        done = [c.id for c in state.tree.children(node) if c.status is Status.SUCCESS]
        if done:
            raise CommandRejected(f"{node.id} already succeeded through {done[0]}; another alternative would never run")


def _inject(state: SessionState, command: Inject) -> list[_Effect]:
    parent = _node(state, command.parent)
    if parent.type is NodeType.ACTION:
        raise CommandRejected(f"{parent.id} is an action; inject under its parent, or edit it with re-expand")
    if parent.status in REMOVED:
        raise CommandRejected(f"{parent.id} is {parent.status.value}; reopen it first")
    unexpanded = parent.type is NodeType.UNKNOWN
    if unexpanded and command.node_type is None:
        raise CommandRejected(f"{parent.id} is not expanded yet: choose AND or OR for it")
    if not unexpanded and command.node_type not in (None, parent.type.value):
        raise CommandRejected(f"{parent.id} is already an {parent.type.value} node")
    kind = command.node_type or parent.type.value
    if command.position is not None and command.position > len(parent.children):
        raise CommandRejected(
            f"position {command.position} is past the end; {parent.id} has {len(parent.children)} children"
        )
    scores: list[float | None] = [None] * len(command.goals)
    if kind == "OR":
        if command.scores is not None and len(command.scores) != len(command.goals):
            raise CommandRejected(f"give one score per alternative ({len(command.goals)}), or none")
        scores = list(command.scores) if command.scores is not None else [OPERATOR_SCORE] * len(command.goals)
    elif command.scores:
        raise CommandRejected("scores are only for OR alternatives")
    _or_already_done(state, parent)
    effects = _open_path(state, parent, include_self=not unexpanded)
    ids = state.tree.new_child_ids(parent, len(command.goals))
    nodes = [
        {"id": child_id, "description": goal, "score": score}
        for child_id, goal, score in zip(ids, command.goals, scores)
    ]
    effects.append(
        lambda rec: rec.record(
            Kind.NODES_ADDED,
            parent.id,
            nodes=nodes,
            origin=Origin.OPERATOR.value,
            position=command.position,
            parent_type=kind if unexpanded else None,
        )
    )
    return effects


def _prune(state: SessionState, command: Prune) -> list[_Effect]:
    node = _node(state, command.node)
    if node.id == ROOT_ID:
        raise CommandRejected("the root cannot be pruned; stop the session instead")
    if node.status in REMOVED:
        raise CommandRejected(f"{node.id} is already {node.status.value}")
    return [_set(node.id, Status.PRUNED, f"operator: {command.reason.strip()}", subtree=True)]


def _edit(state: SessionState, command: Edit) -> list[_Effect]:
    node = _node(state, command.node)
    if node.status in CLOSED:
        raise CommandRejected(f"{node.id} is {node.status.value}; reopen it before editing")
    description = command.description.strip()
    effects: list[_Effect] = [
        lambda rec: rec.record(Kind.NODE_REWRITTEN, node.id, description=description, by=Origin.OPERATOR.value)
    ]
    if command.reexpand:
        effects += _reexpand(state, node, "re-expand requested by operator")
    return effects


def _reopen(state: SessionState, command: Reopen) -> list[_Effect]:
    node = _node(state, command.node)
    if node.status not in REOPENABLE:
        raise CommandRejected(f"only FAIL, PRUNED or DELETED nodes can be reopened; {node.id} is {node.status.value}")
    parent = state.tree.parent(node)
    effects: list[_Effect] = []
    if parent is not None:
        _or_already_done(state, parent)
        effects = _open_path(state, parent, include_self=True)
    if node.type is NodeType.ACTION:
        effects.append(
            lambda rec: rec.record(Kind.NODE_RESET, node.id, by=Origin.OPERATOR.value, reason="reopened by operator")
        )
    else:
        effects += _reexpand(state, node, "reopened by operator")
    return effects


def _reexpand(state: SessionState, node: Node, reason: str) -> list[_Effect]:
    """Send a node back to expansion; its open children are superseded and kept as pruned history."""
    effects = [
        _set(child.id, Status.PRUNED, "superseded: the parent is expanded again", subtree=True)
        for child in state.tree.children(node)
        if child.status not in CLOSED
    ]
    if node.type is not NodeType.UNKNOWN or node.status is not Status.UNVISITED:
        effects.append(
            lambda rec: rec.record(Kind.NODE_RESET, node.id, reexpand=True, by=Origin.OPERATOR.value, reason=reason)
        )
    return effects


def _force(state: SessionState, command: Force) -> list[_Effect]:
    node = _node(state, command.node)
    if node.type is not NodeType.OR:
        raise CommandRejected(f"{node.id} is not an OR node; only OR alternatives can be forced")
    child = _node(state, command.child)
    if child.parent != node.id:
        raise CommandRejected(f"{child.id} is not an alternative of {node.id}")
    if child.status is not Status.UNVISITED:
        raise CommandRejected(f"{child.id} is {child.status.value}; only an untried alternative can be forced")
    if node.status in CLOSED:
        raise CommandRejected(f"{node.id} is {node.status.value}")
    running = [c.id for c in state.tree.children(node) if c.status in IN_PROGRESS]
    if running:
        raise CommandRejected(f"{running[0]} is in progress; prune it first to switch alternatives")
    return [lambda rec: rec.record(Kind.ALTERNATIVE_FORCED, node.id, child=child.id)]


def _undone(state: SessionState) -> CommandApplied:
    """The edit an undo takes back: the top of the undo stack (so a second undo takes the one before)."""
    if not state.edits:
        raise CommandRejected("nothing to undo: no plan edit of yours is left to take back")
    return cast(CommandApplied, state.edits[-1].payload)


def _edit_name(applied: CommandApplied) -> str:
    """How a refusal names an edit: "the inject at 0"."""
    kind = str(applied.command.get("kind", "edit")).replace("_", " ")
    at = applied.command.get("parent") or applied.command.get("node")
    return f"the {kind} at {at}" if at else f"the {kind}"


def _since(node: Node, change: NodeChange, name: str) -> str | None:
    """Why `node` can no longer be put back as `change` found it, or None while it is as the edit left it."""
    after = change.after
    if (node.status, node.type) != (after.status, after.type):
        now = node.status.value if node.type is after.type else f"{node.status.value} {node.type.value}"
        return (
            f"{node.id} already ran since {name} (it is {now} now): undo would take back a plan the agent has acted on"
        )
    if (node.description, node.action, node.forced) != (after.description, after.action, after.forced):
        return f"{node.id} was changed again after {name}: undo would overwrite that change"
    return None


def _restorations(state: SessionState, applied: CommandApplied) -> list[tuple[str, NodeFace]]:
    """Each node of the edit with the face an undo gives it, or `CommandRejected` saying why it may not."""
    name = _edit_name(applied)
    if state.approved_node is not None and any(c.id == state.approved_node for c in applied.changes):
        raise CommandRejected(f"{state.approved_node} is approved to run: undo would change an approved action")
    restored: list[tuple[str, NodeFace]] = []
    for change in applied.changes:
        node = state.tree[change.id]
        problem = _since(node, change, name)
        if problem:
            raise CommandRejected(problem)
        chosen = state.tree.get(change.after.forced or "")
        newly = change.after.forced != (change.before.forced if change.before else None)
        if chosen is not None and newly and chosen.status is not Status.UNVISITED:
            raise CommandRejected(
                f"{chosen.id} already ran since {name} (it is {chosen.status.value} now): "
                "undo would un-choose an alternative the agent is working on"
            )
        if change.before is None:
            face = replace(change.after, status=Status.DELETED, reason="undone by operator")
        else:
            face = change.before
        restored.append((change.id, face))
    final = {node_id: face.status for node_id, face in restored}
    for node_id, face in restored:
        if face.status in CLOSED:
            continue
        for ancestor in state.tree.ancestors(state.tree[node_id]):
            status = final.get(ancestor.id, ancestor.status)
            if status in CLOSED:
                raise CommandRejected(
                    f"{ancestor.id} is {status.value} since {name}: undo would put {node_id} back under a closed "
                    f"node; reopen {node_id} instead"
                )
    return restored


def undo_refusal(state: SessionState) -> str | None:
    """Why `Undo` would be refused now, in the sentence it would be refused with, or None when it would apply.

    Front ends ask this to offer the undo only when it can work (and to say why not)."""
    try:
        _validate(state, Undo(), None)
    except CommandRejected as refusal:
        return str(refusal)
    return None


def _undo(state: SessionState, command: Undo) -> list[_Effect]:
    _not_awaiting(state)
    applied = _undone(state)
    return [
        lambda rec, node_id=node_id, face=face: rec.record(Kind.NODE_RESTORED, node_id, to=face)
        for node_id, face in _restorations(state, applied)
    ]


def _pending(state: SessionState, node_id: str | None) -> Node:
    approval = state.approval
    if state.status is not RunStatus.AWAITING_APPROVAL or approval is None:
        raise CommandRejected("no action is waiting for approval")
    if node_id is not None and node_id != approval.node_id:
        raise CommandRejected(f"the action waiting for approval is at {approval.node_id}, not {node_id}")
    return state.tree[approval.node_id]


def _approve(state: SessionState, command: Approve) -> list[_Effect]:
    node = _pending(state, command.node)
    return [lambda rec: rec.record(Kind.APPROVAL_GRANTED, node.id, action=node.action)]


def _reject(state: SessionState, command: Reject) -> list[_Effect]:
    node = _pending(state, None)
    reason = "rejected by operator" + (f": {command.reason.strip()}" if command.reason.strip() else "")
    return [
        _set(node.id, Status.FAIL, reason),
        _status(RunStatus.PAUSED if command.pause else RunStatus.RUNNING, reason),
    ]


def _edit_action(state: SessionState, command: EditAction, check_action: ActionCheck | None) -> list[_Effect]:
    action = command.action.strip()
    problem = check_action(action) if check_action is not None else None
    if problem:
        raise CommandRejected(f"{action} cannot run on this page: {problem}")
    if state.status is RunStatus.AWAITING_APPROVAL:
        node = _pending(state, command.node)
        return [
            lambda rec: rec.record(Kind.ACTION_EDITED, node.id, action=action),
            lambda rec: rec.record(Kind.APPROVAL_GRANTED, node.id, action=action),
        ]
    if command.node is None:
        raise CommandRejected("no action is waiting for approval; name the action node to edit")
    node = _node(state, command.node)
    if node.type is not NodeType.ACTION or node.status not in (Status.UNVISITED, Status.VISITED):
        raise CommandRejected(f"{node.id} is not an action waiting to run")
    return [lambda rec: rec.record(Kind.ACTION_EDITED, node.id, action=action)]


def _set_breakpoints(state: SessionState, command: SetBreakpoints) -> list[_Effect]:
    chosen = sorted({b.value for b in command.breakpoints})
    if set(chosen) == state.config.breakpoints:
        raise CommandRejected("those breakpoints are already set")
    return [lambda rec: rec.record(Kind.CONFIG_CHANGED, changes={"breakpoints": chosen})]


def _set_budget(state: SessionState, command: SetBudget) -> list[_Effect]:
    if command.max_cost_usd == state.config.max_cost_usd:
        raise CommandRejected("that is the budget already")
    return [lambda rec: rec.record(Kind.CONFIG_CHANGED, changes={"max_cost_usd": command.max_cost_usd})]


def _set_constraints(state: SessionState, command: SetConstraints) -> list[_Effect]:
    chosen = [line.strip() for line in command.constraints if line.strip()]
    if chosen == state.constraints:
        raise CommandRejected("those are the constraints already")
    return [lambda rec: rec.record(Kind.CONSTRAINTS_SET, ROOT_ID, constraints=chosen, by=Origin.OPERATOR.value)]


_VALIDATORS: dict[type, Callable[..., list[_Effect]]] = {
    Pause: _pause,
    Resume: _resume,
    Step: _step,
    Stop: _stop,
    Inject: _inject,
    Prune: _prune,
    Edit: _edit,
    Reopen: _reopen,
    Force: _force,
    Undo: _undo,
    Approve: _approve,
    Reject: _reject,
    EditAction: _edit_action,
    SetBreakpoints: _set_breakpoints,
    SetConstraints: _set_constraints,
    SetBudget: _set_budget,
}

_NEEDS_PAGE = frozenset({EditAction})
"""Commands whose validator also takes the page's action check."""

COMMAND_MODELS: dict[str, type[BaseModel]] = {model.model_fields["kind"].default: model for model in _VALIDATORS}
"""Each command kind's model: front ends build their forms from these (the CLI's verbs take exactly
a model's fields), so a field added here reaches every front end or fails its tests."""
