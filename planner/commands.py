"""Operator commands: the one place that decides whether an edit is allowed, and what it does.

A command is validated against the current state in full before anything is recorded, then
becomes ordinary events followed by `command_applied`; a command that cannot be applied becomes a
single `command_rejected` whose reason is written for the person who sent it. Applying a command
whose id was already handled does nothing, so a command delivered twice takes effect once.

A plan edit records the nodes it added or changed (`planner.diff`); `Undo` takes back the latest
one only while none of those nodes has run, through `node_restored` events, so state stays a fold
of the log (docs/architecture.md, "planner/commands.py").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Literal, cast
from uuid import uuid4

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from planner.config import Breakpoint
from planner.diff import EditRecorder
from planner.errors import CommandRejected
from planner.events import Cause, CommandApplied, Event, Kind, NodeChange, NodeFace
from planner.inputs import InputError, describe_validation_error, shown
from planner.secrets import MASK
from planner.state import TERMINAL, Recorder, RunStatus, SessionState
from planner.status import CLOSED, IN_PROGRESS, REMOVED, REOPENABLE
from planner.templates import ParamName, Template, TemplateGoal
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status

__all__ = [
    "COMMAND_MODELS",
    "FIELD_NAMES",
    "OPERATOR_SCORE",
    "ActionCheck",
    "Approve",
    "Command",
    "Edit",
    "EditAction",
    "Force",
    "Inject",
    "NodeBreakpoint",
    "Pause",
    "Prune",
    "Reject",
    "Reopen",
    "Resume",
    "SetBreakpoints",
    "SetBudget",
    "SetConstraints",
    "SetPlan",
    "Spelling",
    "Step",
    "Stop",
    "Undo",
    "apply_command",
    "command_problem",
    "describe_command_error",
    "parse_command",
    "sender",
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


def _operator_name(text: str) -> str:
    """Who sent a command is a name or an address on one line: it is shown beside the nodes they made
    and in reports, where a line break or a control character would forge a line of its own."""
    text = text.strip()
    if not text:
        raise ValueError("cannot be blank; leave it out or give the operator's name")
    if not text.isprintable():
        raise ValueError("must be one line of printable text")
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
_OperatorName = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_operator_name)]


class _Command(BaseModel):
    """`provenance` says where an edit came from when the operator did not type it ("counterfactual of
    call #12": `sessions.client.counterfactual`); `command_applied` keeps it with the rest of the command.

    `by` is who sent the command ("alice", "alice@example.org"; None: not known), as the front end
    that sent it knows them: the console's signed-in user, the command line's `--operator`. The
    runner records it with the command's outcome, and the nodes the command made or edited show it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    command_id: str = Field(default_factory=lambda: uuid4().hex, min_length=1, max_length=64)
    provenance: str | None = Field(
        default=None, min_length=1, max_length=200, description="where the edit came from, if not typed"
    )
    by: Annotated[_OperatorName | None, Spelling(option="--operator", noun="operator name")] = Field(
        default=None, description="who sends it (default $ANDOR_OPERATOR, else the user name)"
    )


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
    """Add sub-goals (under an AND) or alternatives (under an OR) at a position among the children.

    Under a node not expanded yet, the goals are either its only steps (`node_type` makes it an AND
    or an OR now) or, with `plan_rest`, the steps it starts with: it stays unexpanded, and its
    expansion keeps them and adds the planner's own around them (`planner.engine`).

    With a `template` (`planner.templates`) instead of `goals`, its goals are added, nested ones
    included, with `params` filling its placeholders, and each node records the template it came
    from. Front ends look the template up in the session store and send it whole, so the command
    holds everything it applies.
    """

    kind: Literal["inject"] = Field("inject", description="add sub-goals or alternatives under a node")
    parent: _NodeId = Field(description="node id to add under, e.g. 0 or 0.2")
    goals: Annotated[list[_Text], Spelling(option="--goal")] = Field(
        default_factory=list, max_length=50, description="a sub-goal (repeat)"
    )
    position: int | None = Field(
        default=None, ge=0, le=100_000, description="index among the children (default: append)"
    )
    node_type: Annotated[Literal["AND", "OR"] | None, Spelling(option="--type")] = Field(
        default=None, description="type for an unexpanded parent"
    )
    plan_rest: bool = Field(
        default=False,
        description="for an unexpanded parent: start with these steps and let the planner plan the rest around them",
    )
    scores: Annotated[
        list[Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]] | None, Spelling(option="--score")
    ] = Field(default=None, description="score per OR alternative")
    template: Annotated[Template | None, Spelling(noun="template")] = Field(
        default=None, description="a saved template to inject instead of --goal: NAME or NAME@VERSION (default newest)"
    )
    params: Annotated[
        dict[ParamName, Annotated[str, Field(max_length=500)]], Spelling(option="--param", noun="parameter")
    ] = Field(
        default_factory=dict, max_length=20, description="a value for the template's parameter: name=value (repeat)"
    )

    @model_validator(mode="after")
    def _goals_or_template(self) -> Inject:
        """Sub-goals come from the operator's text or from a template, never both."""
        if self.template is None:
            if not self.goals:
                raise ValueError("sub-goals: cannot be empty")  # the sentence an empty list always had
            if self.params:
                raise ValueError("template parameters fill a template's placeholders; give the template too")
        elif self.goals:
            raise ValueError("give sub-goals or a template, not both")
        elif self.scores is not None:
            raise ValueError("a template's sub-goals carry their own scores; leave the scores out")
        return self


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
    """Let the guarded action run; when the effect fence held what it sent, let exactly those requests
    through, and with `always`, every later one like them (same method, host and path) too."""

    kind: Literal["approve"] = Field("approve", description="let the guarded action run")
    node: _NodeId | None = None
    always: bool = Field(
        default=False, description="also allow such requests from now on (same method, host and path): a session rule"
    )


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


class NodeBreakpoint(_Command):
    """Pause whenever the traversal is about to enter this node (`off` removes the breakpoint).

    The breakpoint stays until removed: a node entered again after a reopen or a re-expansion pauses again.
    """

    kind: Literal["breakpoint"] = Field(
        "breakpoint", description="pause when the run is about to enter a node (--off removes it)"
    )
    node: _NodeId
    off: bool = Field(default=False, description="remove the node's breakpoint instead of setting it")


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


_CHILD_LINE = re.compile(r"\s*(?P<id>\d+(?:\.\d+)*)\s*(?:=(?P<text>.*))?", re.DOTALL)
"""One child of a plan, as a line: "0.2" keeps 0.2, "0.2=text" rewords it, any other text is a new sub-goal."""


def _plan_entry(line: str) -> tuple[str | None, str | None]:
    """A plan line as (child id or None for a new sub-goal, description or None to keep it as it is).

    A new sub-goal whose text itself starts with a number and "=" is written with a leading "=".
    """
    if line.startswith("="):
        return None, line[1:].strip()
    match = _CHILD_LINE.fullmatch(line)
    if match is None:
        return None, line.strip()
    text = match["text"]
    return match["id"], None if text is None else text.strip()


def _plan_line_from_dict(value: object) -> object:
    """A child given as {"id": ..., "description": ...} (JSON, the console's table) becomes its line,
    so a plan reads the same however it was sent."""
    if not isinstance(value, dict):
        return value
    child_id, text = value.get("id"), value.get("description")
    if not isinstance(child_id, str | None) or not isinstance(text, str | None):
        return value  # the str check below refuses it, naming the child
    if child_id:
        return child_id if text is None else f"{child_id}={text}"
    text = text or ""
    return f"={text}" if _CHILD_LINE.fullmatch(text) or text.startswith("=") else text


def _plan_line(line: str) -> str:
    """Every child says something: a new one its text, a kept one its id (and, if reworded, its text)."""
    child_id, text = _plan_entry(line)
    if (child_id is None and not text) or (text is not None and not text.strip()):
        raise ValueError("cannot be blank; write some text")
    return line.strip()


_PlanLine = Annotated[
    str,
    Field(min_length=1, max_length=2300),
    BeforeValidator(_plan_line_from_dict),
    AfterValidator(_plan_line),
]


class SetPlan(_Command):
    """Set a node's plan as a whole: which of its children stay, in what order, with what wording,
    and which sub-goals are new. Children not yet started may be reworded, moved or left out (left
    out: PRUNED, kept as history); a child that started or finished must be listed as it is, in its
    place among the other started ones. `start` resumes the run once the plan is applied, so a
    refused plan never starts a run the operator meant to change first.
    """

    kind: Literal["plan"] = Field(
        "plan", description="set a node's children as a whole: keep, reword, reorder, remove, add"
    )
    node: _NodeId = Field(description="node whose children are planned, e.g. 0")
    children: Annotated[list[_PlanLine], Spelling(option="--child", noun="child")] = Field(
        min_length=1,
        max_length=50,
        description='a child, in order (repeat): "0.2" keeps it, "0.2=text" rewords it, other text is new',
    )
    start: bool = Field(default=False, description="resume the run once the plan is applied")

    def entries(self) -> list[tuple[str | None, str | None]]:
        """Each child as (id or None for a new sub-goal, description or None to keep it)."""
        return [_plan_entry(line) for line in self.children]


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
    | NodeBreakpoint
    | SetConstraints
    | SetBudget
    | SetPlan,
    Field(discriminator="kind"),
]

_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)


def parse_command(data: dict[str, object] | str) -> Command:
    """Validate a command from JSON text or a dict (raises pydantic's ValidationError)."""
    if isinstance(data, str):
        return _ADAPTER.validate_json(data)
    return _ADAPTER.validate_python(data)


_SENDER: TypeAdapter[str | None] = TypeAdapter(_OperatorName | None)


def sender(payload: object) -> str | None:
    """Who sent a stored command that cannot be read as a whole, when its `by` at least is a usable
    name (else None): its rejection still says whose command it was."""
    try:
        return _SENDER.validate_python(payload.get("by") if isinstance(payload, dict) else None)
    except ValidationError:
        return None


FIELD_NAMES: dict[str, str] = {
    "kind": "command kind",
    "command_id": "command id",
    "provenance": "origin",
    "by": "operator",
    "parent": "parent node",
    "goals": "sub-goals",
    "position": "position",
    "node_type": "node type",
    "plan_rest": "let the planner plan the rest",
    "scores": "scores",
    "template": "template",
    "params": "template parameters",
    "node": "node",
    "always": "always allow",
    "reason": "reason",
    "description": "description",
    "reexpand": "expand again",
    "child": "alternative",
    "pause": "pause first",
    "action": "action",
    "breakpoints": "breakpoints",
    "off": "remove the breakpoint",
    "constraints": "constraints",
    "max_cost_usd": "cost cap",
    "children": "sub-goals",
    "start": "start",
    # a template's own fields, reached through an inject's template
    "name": "name",
    "version": "version",
    "type": "type",
    "score": "score",
}
"""Every field of a command (and of the template an inject carries) in the words of the operator who
filled it: a refusal says "cost cap", never `max_cost_usd`. tests/test_commands.py checks that every
field has one."""


def describe_command_error(error: ValidationError) -> str:
    """Why `parse_command` refused a command, as one sentence for the operator who sent it.

    pydantic locates a problem inside a tagged union under the tag ("inject", "goals", 0); the
    sentence names the command instead, and its fields in the operator's words (`FIELD_NAMES`):
    "invalid inject command: sub-goals #1: cannot be blank". A form that sent the command says which
    one itself, and shows only what is wrong (`command_problem`).
    """
    subject, problem = _command_error(error)
    return f"{subject}: {problem}"


def command_problem(error: ValidationError, *, tagged: bool = True) -> str:
    """What is wrong with a refused command, without naming it ("sub-goals #1: cannot be blank"): for
    a form, whose own title already says which command it sends. `tagged`: the error is `parse_command`'s
    (located under the command's kind); else a command model's own, built directly (`Inject(...)`)."""
    return _command_error(error, tagged=tagged)[1]


def _command_error(error: ValidationError, *, tagged: bool = True) -> tuple[str, str]:
    """The command named (its kind as the CLI spells it) and what is wrong with it, apart."""
    first = error.errors(include_url=False)[0]
    if not tagged:
        return "invalid command", describe_validation_error(error, names=FIELD_NAMES, keyed={"params"})
    if not first["loc"] and first["type"] in _NOT_A_COMMAND:
        kinds = ", ".join(COMMAND_MODELS)
        tag = (first.get("ctx") or {}).get("tag")
        if tag is not None:
            given = f"'{shown(tag, 30)}' is not a command kind"
        elif first["type"] == "union_tag_not_found":
            given = "its kind is missing"
        else:
            given = "a command is an object with named fields, its kind among them"
        return "invalid command", f"{given}; use one of {kinds}"
    kind = first["loc"][0] if first["loc"] else None
    subject = f"invalid {shown(kind.replace('_', ' '), 30)} command" if isinstance(kind, str) else "invalid command"
    detail = describe_validation_error(error, skip=1 if kind is not None else 0, names=FIELD_NAMES, keyed={"params"})
    return subject, detail


_NOT_A_COMMAND = frozenset({"union_tag_invalid", "union_tag_not_found", "model_attributes_type", "dict_type"})
"""pydantic's errors for something that is no command at all (no kind, an unknown kind, not an object)."""


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
            by=command.by,
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
            by=command.by,
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
    return isinstance(command, (Inject, Prune, Edit, Reopen, Force, Undo, SetPlan))


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
    """A status change a command makes: the operator's doing, whatever it is."""
    return lambda rec: rec.record(
        Kind.SESSION_STATUS, None, status=status.value, cause=Cause.OPERATOR, reason=reason, **extra
    )


def _set(node_id: str, status: Status, reason: str, subtree: bool = False) -> _Effect:
    return lambda rec: rec.record(Kind.STATUS_CHANGED, node_id, status=status.value, reason=reason, subtree=subtree)


def _reword(node_id: str, description: str) -> _Effect:
    return lambda rec: rec.record(Kind.NODE_REWRITTEN, node_id, description=description, by=Origin.OPERATOR.value)


def _restore(node_id: str, face: NodeFace) -> _Effect:
    return lambda rec: rec.record(Kind.NODE_RESTORED, node_id, to=replace(face, order=None))


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
    """One more step: a Step pressed while single steps still run adds one to them, so N presses are N steps."""
    _not_awaiting(state)
    _within_budget(state)
    steps = state.single_steps + 1 if state.status is RunStatus.RUNNING and state.single_steps else 1
    reason = "one step" if steps == 1 else f"{steps} steps"
    return [_status(RunStatus.RUNNING, reason, single_step=True, single_steps=steps)]


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
    if command.plan_rest:
        _plans_rest(parent, command)
    elif unexpanded and command.node_type is None:
        raise CommandRejected(
            f"{parent.id} is not expanded yet: choose AND or OR for it, or let the planner plan the rest"
        )
    if not unexpanded and command.node_type not in (None, parent.type.value):
        raise CommandRejected(f"{parent.id} is already an {parent.type.value} node")
    kind = command.node_type or (NodeType.AND.value if unexpanded else parent.type.value)
    typed = kind if unexpanded and not command.plan_rest else None
    if command.position is not None and command.position > len(parent.children):
        raise CommandRejected(
            f"position {command.position} is past the end; {parent.id} has {len(parent.children)} children"
        )
    if command.template is not None:
        return _inject_template(state, command, command.template, parent, kind, typed)
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
    nodes: list[dict[str, object]] = [
        {"id": child_id, "description": goal, "score": score}
        for child_id, goal, score in zip(ids, command.goals, scores)
    ]
    effects.append(_nodes_added(parent, nodes, command.position, typed))
    return effects


def _plans_rest(parent: Node, command: Inject) -> None:
    """An inject that leaves the rest to the planner goes under a node it has not planned yet, as a
    sequence: the planner's steps are added around the operator's in order, never as alternatives."""
    if parent.type is not NodeType.UNKNOWN:
        raise CommandRejected(
            f"{parent.id} is already planned; the planner plans the rest only of a node not expanded yet"
        )
    if command.node_type == NodeType.OR.value:
        raise CommandRejected("the planner plans around the operator's steps in order (AND), not as OR alternatives")


def _nodes_added(
    parent: Node, nodes: list[dict[str, object]], position: int | None, parent_type: str | None, **more: object
) -> _Effect:
    """The operator's `nodes_added` under `parent` (an inject's goals, or a template's whole subtree)."""
    return lambda rec: rec.record(
        Kind.NODES_ADDED,
        parent.id,
        nodes=nodes,
        origin=Origin.OPERATOR.value,
        position=position,
        parent_type=parent_type,
        **more,
    )


def _inject_template(
    state: SessionState, command: Inject, template: Template, parent: Node, kind: str, typed: str | None
) -> list[_Effect]:
    """A template's goals, filled with the command's params, as one `nodes_added` event holding every
    level, so its `command_applied` lists every node it added and one undo takes the whole subtree back."""
    try:
        goals = template.fill(command.params)
    except InputError as error:
        raise CommandRejected(str(error)) from None
    _or_already_done(state, parent)
    unexpanded = parent.type is NodeType.UNKNOWN
    effects = _open_path(state, parent, include_self=not unexpanded)
    specs: list[dict[str, object]] = []
    types: dict[str, str] = {}
    for node_id, goal in zip(state.tree.new_child_ids(parent, len(goals)), goals):
        _template_specs(node_id, goal, kind == "OR", specs, types)
    effects.append(_nodes_added(parent, specs, command.position, typed, types=types, template=template.ref))
    return effects


def _template_specs(
    node_id: str, goal: TemplateGoal, scored: bool, specs: list[dict[str, object]], types: dict[str, str]
) -> None:
    """`goal` and its sub-goals as node specs, parents first; a new node's children are numbered from
    1, as `Tree.new_child_ids` numbers them. An OR alternative without a score gets the operator's."""
    specs.append(
        {"id": node_id, "description": goal.description, "score": (goal.score or OPERATOR_SCORE) if scored else None}
    )
    if goal.children:
        types[node_id] = goal.type
        for number, child in enumerate(goal.children, start=1):
            _template_specs(f"{node_id}.{number}", child, goal.type == "OR", specs, types)


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
    effects = [_reword(node.id, description)]
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
    if after.order is not None and tuple(node.children) != after.order:
        return f"{node.id}'s children changed again after {name}: undo would overwrite that change"
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
    restorations = _restorations(state, applied)
    effects = [_restore(node_id, face) for node_id, face in restorations]
    return effects + [
        _reorder_back(state, node_id, face.order) for node_id, face in restorations if face.order is not None
    ]


def _reorder_back(state: SessionState, node_id: str, order: tuple[str, ...]) -> _Effect:
    """Put a node's children back in the order an edit found them; the children the edit added (now
    DELETED by the same undo) follow, as history, since a child never leaves the list."""
    later = [child_id for child_id in state.tree[node_id].children if child_id not in order]
    return lambda rec: rec.record(Kind.CHILDREN_REORDERED, node_id, order=[*order, *later])


def _pending(state: SessionState, node_id: str | None) -> Node:
    approval = state.approval
    if state.status is not RunStatus.AWAITING_APPROVAL or approval is None:
        raise CommandRejected("no action is waiting for approval")
    if node_id is not None and node_id != approval.node_id:
        raise CommandRejected(f"the action waiting for approval is at {approval.node_id}, not {node_id}")
    return state.tree[approval.node_id]


def _approve(state: SessionState, command: Approve) -> list[_Effect]:
    node = _pending(state, command.node)
    held = state.approval.requests if state.approval is not None else ()
    effects: list[_Effect] = []
    if command.always:
        if not held:
            raise CommandRejected(
                f"{node.id} is held by its name or where it leads, not by a request it sent: approve it without "
                "'always' (only a held request can be allowed from now on)"
            )
        rules = list(state.config.request_rules)
        rules += [rule for rule in dict.fromkeys(r.allowing_rule() for r in held) if rule not in rules]
        dumped = [rule.model_dump(mode="json") for rule in rules]
        effects.append(lambda rec: rec.record(Kind.CONFIG_CHANGED, changes={"request_rules": dumped}))
    keys = tuple(r.key for r in held) if held else None
    effects.append(lambda rec: rec.record(Kind.APPROVAL_GRANTED, node.id, action=node.action, requests=keys))
    return effects


def _reject(state: SessionState, command: Reject) -> list[_Effect]:
    node = _pending(state, None)
    held = state.approval.requests if state.approval is not None else ()
    what = f"{held[0].describe()} held and rejected by the operator" if held else "rejected by operator"
    reason = what + (f": {command.reason.strip()}" if command.reason.strip() else "")
    return [
        _set(node.id, Status.FAIL, reason),
        _status(RunStatus.PAUSED if command.pause else RunStatus.RUNNING, reason),
    ]


def _edit_action(state: SessionState, command: EditAction, check_action: ActionCheck | None) -> list[_Effect]:
    action = command.action.strip()
    if MASK in action:  # the operator saw the action masked (`planner.secrets`): the dots are no secret's value
        raise CommandRejected(
            f"the action holds a masked secret ({MASK}), which would be typed as those dots; write the secret as "
            "{{NAME}} or approve the action as shown"
        )
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


def _node_breakpoint(state: SessionState, command: NodeBreakpoint) -> list[_Effect]:
    """A node breakpoint is engine config (`EngineConfig.node_breakpoints`), so the engine reads it
    live and a fold of the log gives it back; only a node the run can still enter may get one."""
    node = _node(state, command.node)
    marked = state.config.node_breakpoints
    if command.off:
        if node.id not in marked:
            raise CommandRejected(f"{node.id} has no breakpoint to remove")
        chosen = marked - {node.id}
    elif node.id in marked:
        raise CommandRejected(f"{node.id} already has a breakpoint")
    elif node.status is Status.SUCCESS:
        raise CommandRejected(f"{node.id} has already succeeded; set the breakpoint on a node still to come")
    elif node.status in REOPENABLE:
        raise CommandRejected(f"{node.id} has already finished ({node.status.value}); reopen it first")
    else:
        chosen = marked | {node.id}
    return [lambda rec: rec.record(Kind.CONFIG_CHANGED, changes={"node_breakpoints": sorted(chosen)})]


def _set_budget(state: SessionState, command: SetBudget) -> list[_Effect]:
    if command.max_cost_usd == state.config.max_cost_usd:
        raise CommandRejected("that is the cost cap already")
    return [lambda rec: rec.record(Kind.CONFIG_CHANGED, changes={"max_cost_usd": command.max_cost_usd})]


def _set_constraints(state: SessionState, command: SetConstraints) -> list[_Effect]:
    chosen = [line.strip() for line in command.constraints if line.strip()]
    if chosen == state.constraints:
        raise CommandRejected("those are the constraints already")
    return [lambda rec: rec.record(Kind.CONSTRAINTS_SET, ROOT_ID, constraints=chosen, by=Origin.OPERATOR.value)]


_PLAN_REMOVED = "operator: removed in plan review"
"""The reason a child left out of an operator's plan is pruned with."""


def _set_plan(state: SessionState, command: SetPlan) -> list[_Effect]:
    """Validate the whole plan first, then prune the children left out, reword, add the new ones at
    the end and put every child in the order given (`children_reordered`), all in one edit.

    Children removed from the plan before (PRUNED or DELETED) stay where they are in the list, as
    history; the children in the plan fill the other places in the order given.
    """
    node = _node(state, command.node)
    if command.start:
        _not_awaiting(state)
        _within_budget(state)
    _plannable(node)
    entries = command.entries()
    listed = _planned_children(state, node, [child_id for child_id, _ in entries if child_id is not None])
    live = [child for child in state.tree.children(node) if child.status not in REMOVED]
    _keeps_started(state, live, entries)
    new = [text or "" for child_id, text in entries if child_id is None]
    effects: list[_Effect] = []
    if new:
        _or_already_done(state, node)
        effects = _open_path(state, node, include_self=True)
    left_out = [child for child in live if child.id not in listed]
    reworded = [
        (child_id, text)
        for child_id, text in entries
        if child_id is not None and text is not None and text != state.tree[child_id].description
    ]
    new_ids = state.tree.new_child_ids(node, len(new))
    fresh = iter(new_ids)
    plan = [child_id if child_id is not None else next(fresh) for child_id, _ in entries]
    order = _plan_order([*node.children, *new_ids], set(plan), plan)
    if not (left_out or reworded or new or order != [*node.children, *new_ids]):
        if not command.start:
            raise CommandRejected(f"that is the plan of {node.id} already")
        if state.status is RunStatus.RUNNING:
            raise CommandRejected("the session is already running")
    effects += [_set(child.id, Status.PRUNED, _PLAN_REMOVED, subtree=True) for child in left_out]
    effects += [_reword(child_id, text) for child_id, text in reworded]
    if new:
        score = OPERATOR_SCORE if node.type is NodeType.OR else None
        nodes = [{"id": child_id, "description": text, "score": score} for child_id, text in zip(new_ids, new)]
        effects.append(
            lambda rec: rec.record(Kind.NODES_ADDED, node.id, nodes=nodes, origin=Origin.OPERATOR.value, position=None)
        )
    if order != [*node.children, *new_ids]:
        effects.append(lambda rec: rec.record(Kind.CHILDREN_REORDERED, node.id, order=order))
    if command.start and state.status is not RunStatus.RUNNING:
        effects.append(_status(RunStatus.RUNNING, "resumed by operator after plan review"))
    return effects


def _plannable(node: Node) -> None:
    """Only an expanded AND or OR node that is still open has a plan of children to set."""
    if node.type is NodeType.ACTION:
        raise CommandRejected(f"{node.id} is an action and has no sub-goals; plan its parent instead")
    if node.type is NodeType.UNKNOWN:
        raise CommandRejected(f"{node.id} is not expanded yet; inject its sub-goals instead")
    if node.status is Status.SUCCESS:
        raise CommandRejected(f"{node.id} already succeeded; its plan is done")
    if node.status in REMOVED:
        raise CommandRejected(f"{node.id} is {node.status.value}; reopen it first")


def _planned_children(state: SessionState, node: Node, listed: list[str]) -> list[str]:
    """The ids a plan keeps, once each is known to be a child of `node` still in its plan."""
    twice = sorted({child_id for child_id in listed if listed.count(child_id) > 1}, key=listed.index)
    if twice:
        raise CommandRejected(f"{_ids(twice)} listed more than once; list each child once")
    unknown = [child_id for child_id in listed if child_id not in state.tree]
    if unknown:
        raise CommandRejected(
            f"there is no node {_ids(unknown)} in this session; a new sub-goal is written without an id "
            "(put '=' before text that starts with a number and '=')"
        )
    strangers = [child_id for child_id in listed if state.tree[child_id].parent != node.id]
    if strangers:
        raise CommandRejected(f"{_ids(strangers)} {_is(strangers)} not a child of {node.id}")
    gone = [state.tree[child_id] for child_id in listed if state.tree[child_id].status in REMOVED]
    if gone:
        raise CommandRejected(f"{gone[0].id} is {gone[0].status.value}; reopen it to plan it again")
    return listed


def _keeps_started(state: SessionState, live: list[Node], entries: list[tuple[str | None, str | None]]) -> None:
    """A child that started or finished is history the plan cannot rewrite: it stays, as it is, in
    its place among the other started children."""
    listed = [child_id for child_id, _ in entries if child_id is not None]
    started = [child for child in live if child.status is not Status.UNVISITED]
    dropped = [child.id for child in started if child.id not in listed]
    if dropped:
        raise CommandRejected(
            f"{_ids(dropped)} already started or finished and cannot be removed; keep {_it(dropped)} in the plan"
        )
    ids = [child.id for child in started]
    if [child_id for child_id in listed if child_id in ids] != ids:
        raise CommandRejected(
            f"{_ids(ids)} already started or finished and cannot be moved; keep {_it(ids)} in the order "
            f"{', '.join(ids)}"
        )
    changed = [
        child_id
        for child_id, text in entries
        if child_id in ids and text is not None and text != state.tree[child_id].description
    ]
    if changed:
        raise CommandRejected(
            f"{_ids(changed)} already started or finished and cannot be changed; keep {_it(changed)} as worded"
        )


def _plan_order(children: list[str], planned: set[str], plan: list[str]) -> list[str]:
    """`children` with the places of the planned ones filled by `plan`, in order; the others stay put."""
    fill = iter(plan)
    return [next(fill) if child_id in planned else child_id for child_id in children]


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _is(ids: list[str]) -> str:
    return "is" if len(ids) == 1 else "are"


def _it(ids: list[str]) -> str:
    return "it" if len(ids) == 1 else "them"


_VALIDATORS: dict[type[_Command], Callable[..., list[_Effect]]] = {
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
    NodeBreakpoint: _node_breakpoint,
    SetConstraints: _set_constraints,
    SetBudget: _set_budget,
    SetPlan: _set_plan,
}

_NEEDS_PAGE = frozenset({EditAction})
"""Commands whose validator also takes the page's action check."""

COMMAND_MODELS: dict[str, type[BaseModel]] = {model.model_fields["kind"].default: model for model in _VALIDATORS}
"""Each command kind's model: front ends build their forms from these (the CLI's verbs take exactly
a model's fields), so a field added here reaches every front end or fails its tests."""
