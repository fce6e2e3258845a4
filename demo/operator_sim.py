"""A simulated operator: general rules an operator follows, kept as data, applied through the command queue.

A policy is a list of rules. Each rule has a trigger on what the console shows (the folded
`SessionState` of the stored log) and an intervention (inject, prune, edit, reopen, force, approve,
reject) whose arguments are templates filled from the matching node and the rule's named regex groups:

    {"name": "skip-out-of-stock", "why": "...",
     "when": {"on": "failed", "reason": "no link or button"}, "page": "Out of stock",
     "then": {"do": "inject", "under": "{node}", "node_type": "AND",
              "goals": ["go back", "open the first result in stock", "{description}"]}}

The operator (`SimulatedOperator`) is a runner's `on_idle` hook on a session created paused: at
each boundary it folds the new events from the store (never the runner's own objects), makes at
most one intervention, and otherwise single-steps the run, so it sees every step boundary.
`load_policy` refuses a bad policy file with one sentence (`PolicyError`). The triggers and template
variables: docs/architecture.md, "demo/operator_sim.py".
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from demo.tasks import TASKS_PATH
from planner.events import CommandApplied, CommandRejected, Kind
from planner.inputs import InputError, describe_validation_error, parse_json, read_text_file, shown
from planner.state import RunStatus, SessionState, replay
from planner.status import CLOSED
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status
from sessions.client.commands import queue_command
from sessions.errors import SessionsError
from sessions.store import EventStore

__all__ = [
    "EDIT_KINDS",
    "POLICIES_PATH",
    "SIMULATED_OPERATOR",
    "ConsoleView",
    "Intervention",
    "Policy",
    "PolicyError",
    "PolicyFile",
    "Rule",
    "SimulatedOperator",
    "load_policy",
    "settle",
]

POLICIES_PATH = TASKS_PATH.with_name("operator_policies.json")
"""The bundled policy file, next to the demo tasks it was written for."""

POLICY_LIMIT = 1_000_000
"""Bytes a policy file may have; the bundled one is a few KB."""

SIMULATED_OPERATOR = "simulated operator"
"""Who the simulated operator's commands say sent them (`by`)."""

EDIT_KINDS = frozenset({"inject", "prune", "edit", "reopen", "force", "reject"})
"""Interventions that change the run's course; an approval only lets the planned action go (every condition approves)."""


class PolicyError(SessionsError):
    """A policy file that cannot be used, or a policy name it does not hold; the message says which and why."""


def _compile(value: object) -> object:
    """Patterns match case-insensitively: an operator's rule about "Out of stock" means any spelling of it."""
    if isinstance(value, str):
        try:
            return re.compile(value, re.IGNORECASE)
        except re.error as error:
            raise ValueError(f"'{shown(value, 60)}' is not a regular expression ({error})") from None
    return value


_Pattern = Annotated[re.Pattern[str], BeforeValidator(_compile)]
_Template = Annotated[str, Field(min_length=1, max_length=2000)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Planned(_Frozen):
    """An open node whose description matches `node` appeared in the plan (made by the planner, not by you)."""

    on: Literal["planned"]
    node: _Pattern


class _Expanded(_Frozen):
    """A node whose description matches `node` was expanded (as `type`, when given) and has not finished.

    An operator reacts to an expansion while its node is being worked on, on the page of that work; once
    the node is done, a later page is about other work, and the expansion is history."""

    on: Literal["expanded"]
    node: _Pattern
    type: Literal["AND", "OR", "ACTION"] | None = None


class _Failed(_Frozen):
    """A node whose description matches `node` failed with a reason that matches `reason` ("HTTP 5.." for a server error)."""

    on: Literal["failed"]
    node: _Pattern = Field(default_factory=lambda: re.compile(""))
    reason: _Pattern = Field(default_factory=lambda: re.compile(""))


class _Ran(_Frozen):
    """An action node whose description matches `node` ran and succeeded; `action` matches its action."""

    on: Literal["ran"]
    node: _Pattern = Field(default_factory=lambda: re.compile(""))
    action: _Pattern = Field(default_factory=lambda: re.compile(""))


class _Approval(_Frozen):
    """A guarded action waits for approval; `guard` matches the guard's rule ("password field",
    "element named 'Place order' matches 'place order'"), `action` the action."""

    on: Literal["approval"]
    guard: _Pattern = Field(default_factory=lambda: re.compile(""))
    action: _Pattern = Field(default_factory=lambda: re.compile(""))


class _Finishing(_Frozen):
    """The root succeeded and the run is about to finish with an answer that has no match for `answer_lacks`."""

    on: Literal["finishing"]
    answer_lacks: _Pattern


Trigger = Annotated[_Planned | _Expanded | _Failed | _Ran | _Approval | _Finishing, Field(discriminator="on")]


class _Inject(_Frozen):
    do: Literal["inject"]
    under: _Template = "{parent}"
    position: _Template | None = "{index}"
    """Where among the children (a template giving a whole number); None appends."""
    goals: list[_Template] = Field(min_length=1, max_length=50)
    node_type: Literal["AND", "OR"] | None = None
    """For a parent not expanded yet (a node whose expansion failed)."""


class _Prune(_Frozen):
    do: Literal["prune"]
    node: _Template = "{node}"
    reason: _Template


class _Edit(_Frozen):
    do: Literal["edit"]
    node: _Template = "{node}"
    description: _Template
    reexpand: bool = True


class _Reopen(_Frozen):
    do: Literal["reopen"]
    node: _Template = "{node}"


class _Force(_Frozen):
    do: Literal["force"]
    node: _Template = "{parent}"
    child: _Template = "{node}"


class _Approve(_Frozen):
    do: Literal["approve"]


class _Reject(_Frozen):
    do: Literal["reject"]
    reason: _Template


Action = Annotated[_Inject | _Prune | _Edit | _Reopen | _Force | _Approve | _Reject, Field(discriminator="do")]

_VARIABLES = frozenset({"node", "parent", "index", "next", "description", "task", "url", "action", "rule", "answer"})


class Rule(_Frozen):
    """One of an operator's habits: when the console shows `when` (and the task and page match), do `then`."""

    name: str = Field(min_length=1, max_length=100)
    why: str = Field(default="", max_length=2000)
    when: Trigger
    task: _Pattern | None = None
    unless_task: _Pattern | None = None
    page: _Pattern | None = None
    then: Action

    @model_validator(mode="after")
    def _templates_name_known_values(self) -> Self:
        """A template may name only the variables and the named groups of the rule's own patterns."""
        patterns = [getattr(self.when, name, None) for name in ("node", "reason", "action", "guard")]
        groups = {g for p in [*patterns, self.task, self.page] if isinstance(p, re.Pattern) for g in p.groupindex}
        known = _VARIABLES | groups
        for template in _templates(self.then):
            try:
                parsed = string.Formatter().parse(template)
                fields = [(name, spec, conv) for _, name, spec, conv in parsed if name is not None]
            except ValueError as error:
                raise ValueError(f"the template '{shown(template, 60)}' is malformed ({error})") from None
            unknown = [name for name, _, _ in fields if name not in known]
            if unknown or any(spec or conv for _, spec, conv in fields):
                raise ValueError(
                    f"the template '{shown(template, 60)}' names '{shown(unknown[0] if unknown else template, 30)}'; "
                    f"use {{name}} with one of {', '.join(sorted(known))}"
                )
        if isinstance(self.then, _Approve | _Reject) != isinstance(self.when, _Approval):
            raise ValueError("approve and reject answer an approval trigger, and an approval trigger only those")
        return self


def _templates(action: BaseModel) -> list[str]:
    values = [getattr(action, name, None) for name in ("under", "position", "node", "child", "description", "reason")]
    goals = action.goals if isinstance(action, _Inject) else []
    return [value for value in [*values, *goals] if isinstance(value, str)]


class Policy(_Frozen):
    """A named set of rules, in priority order, and what to do with a guarded action no rule decides."""

    name: str = Field(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=60)
    description: str = Field(default="", max_length=2000)
    rules: list[Rule] = Field(default_factory=list, max_length=200)
    fallback_approval: Literal["approve", "reject"] = "approve"
    max_edits: int = Field(default=4, ge=0, le=100)


class PolicyFile(_Frozen):
    policies: list[Policy] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        names = [p.name for p in self.policies]
        if duplicates := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"policy names must be unique; {', '.join(duplicates)} appears twice")
        for policy in self.policies:
            rules = [r.name for r in policy.rules]
            if twice := sorted({n for n in rules if rules.count(n) > 1}):
                raise ValueError(f"policy {policy.name} has two rules named {twice[0]}")
        return self


def load_policy(name: str = "default", path: Path | None = None) -> Policy:
    """The policy `name` from a policy file (by default the bundled one), or one sentence why not."""
    source = path or POLICIES_PATH
    where = f"policy file {shown(source)}"
    try:
        book = PolicyFile.model_validate(parse_json(read_text_file(source, POLICY_LIMIT)))
    except InputError as error:
        raise PolicyError(f"cannot use {where}: {error}") from None
    except ValidationError as error:
        raise PolicyError(f"{where} is not a list of operator policies: {describe_validation_error(error)}") from None
    chosen = {policy.name: policy for policy in book.policies}
    if name not in chosen:
        raise PolicyError(f"{where} has no policy '{shown(name, 60)}'; choose from: {', '.join(sorted(chosen))}")
    return chosen[name]


# -- what the console shows ------------------------------------------------------------------------


class ConsoleView:
    """A session as the console sees it: the fold of its stored log, brought up to date on `refresh`.

    It also keeps when each step began (`step_at`), so latencies can be told in seconds."""

    def __init__(self, store: EventStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.state = SessionState()
        self.step_at: dict[int, float] = {}

    def refresh(self) -> SessionState:
        for event in self.store.load(self.session_id, after=self.state.seq):
            replay([event], self.state)
            if event.kind is Kind.SESSION_CREATED:
                self.step_at[0] = event.at
            elif event.kind is Kind.STEP:
                self.step_at[self.state.steps] = event.at
        return self.state


@dataclass(slots=True)
class Intervention:
    """One command the operator queued, why, and (after the run) what the runner made of it."""

    kind: str
    rule: str
    command: dict[str, Any]
    node: str | None
    node_step: int
    """The step that planned the node the intervention is about: where the trouble entered the plan."""
    step: int
    """The session's step count when the command was queued."""
    applied: bool | None = None
    reason: str | None = None
    applied_at: float | None = None

    @property
    def is_edit(self) -> bool:
        return self.kind in EDIT_KINDS


def settle(store: EventStore, session_id: str, interventions: list[Intervention]) -> None:
    """Fill in each intervention's outcome from the log: applied or rejected, and when."""
    by_id = {i.command["command_id"]: i for i in interventions}
    for event in store.load(session_id):
        handled = event.payload
        if isinstance(handled, CommandApplied | CommandRejected) and handled.command_id in by_id:
            intervention = by_id[handled.command_id]
            intervention.applied = isinstance(handled, CommandApplied)
            intervention.reason = handled.reason if isinstance(handled, CommandRejected) else None
            intervention.applied_at = event.at


# -- matching --------------------------------------------------------------------------------------


def _search(pattern: re.Pattern[str] | None, text: str, found: dict[str, str]) -> bool:
    """Whether `pattern` (None: anything) occurs in `text`; its named groups go into `found`."""
    if pattern is None:
        return True
    match = pattern.search(text)
    if match is None:
        return False
    found.update({key: value for key, value in match.groupdict().items() if value is not None})
    return True


def _node_values(state: SessionState, node: Node) -> dict[str, str]:
    parent = state.tree.parent(node)
    index = parent.children.index(node.id) if parent is not None else 0
    return {
        "node": node.id,
        "parent": parent.id if parent is not None else node.id,
        "index": str(index),
        "next": str(index + 1),
        "description": node.description,
        "action": node.action or "",
    }


def _subjects(state: SessionState, when: BaseModel) -> list[tuple[Node, dict[str, str]]]:
    """The nodes a trigger fires on in this state, each with the values its patterns captured."""
    tree = state.tree
    found: list[tuple[Node, dict[str, str]]] = []
    if isinstance(when, _Approval):
        approval = state.approval
        if state.status is RunStatus.AWAITING_APPROVAL and approval is not None:
            values: dict[str, str] = {"rule": approval.rule, "action": approval.action}
            if _search(when.guard, approval.rule, values) and _search(when.action, approval.action, values):
                found.append((tree[approval.node_id], values))
        return found
    if isinstance(when, _Finishing):
        root = tree[ROOT_ID]
        answer = state.final_answer or ""
        if root.status is Status.SUCCESS and not state.finished and not when.answer_lacks.search(answer):
            found.append((root, {"answer": answer}))
        return found
    for node in tree.walk():
        values = {}
        if isinstance(when, _Planned):
            hit = node.status is Status.UNVISITED and node.origin is not Origin.OPERATOR and node.id != ROOT_ID
            hit = hit and _search(when.node, node.description, values)
        elif isinstance(when, _Expanded):
            hit = node.type is not NodeType.UNKNOWN and node.status not in CLOSED
            hit = hit and (when.type is None or node.type.value == when.type)
            hit = hit and _search(when.node, node.description, values)
        elif isinstance(when, _Failed):
            hit = node.status is Status.FAIL and _search(when.node, node.description, values)
            hit = hit and _search(when.reason, node.reason or "", values)
        else:
            assert isinstance(when, _Ran)
            hit = node.type is NodeType.ACTION and node.status is Status.SUCCESS
            hit = hit and _search(when.node, node.description, values)
            hit = hit and _search(when.action, node.action or "", values)
        if hit:
            found.append((node, values))
    return found


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format_map(values)


def _command(then: BaseModel, values: dict[str, str]) -> dict[str, Any]:
    """The command payload an intervention sends, its templates filled in."""
    if isinstance(then, _Inject):
        position = _fill(then.position, values) if then.position is not None else None
        return {
            "kind": "inject",
            "parent": _fill(then.under, values),
            "goals": [_fill(goal, values) for goal in then.goals],
            "position": int(position) if position is not None and position.isdigit() else None,
            "node_type": then.node_type,
        }
    if isinstance(then, _Prune):
        return {"kind": "prune", "node": _fill(then.node, values), "reason": _fill(then.reason, values)}
    if isinstance(then, _Edit):
        node, text = _fill(then.node, values), _fill(then.description, values)
        return {"kind": "edit", "node": node, "description": text, "reexpand": then.reexpand}
    if isinstance(then, _Reopen):
        return {"kind": "reopen", "node": _fill(then.node, values)}
    if isinstance(then, _Force):
        return {"kind": "force", "node": _fill(then.node, values), "child": _fill(then.child, values)}
    if isinstance(then, _Reject):
        return {"kind": "reject", "reason": _fill(then.reason, values)}
    return {"kind": "approve"}


# -- the operator ----------------------------------------------------------------------------------


@dataclass(slots=True)
class SimulatedOperator:
    """A runner's `on_idle` hook that follows `policy` through the command queue (see the module docstring).

    Create the session paused: the operator steps it one boundary at a time. `interventions` lists
    what it did, in order; `settle` fills in their outcomes once the run is over.
    """

    store: EventStore
    session_id: str
    policy: Policy
    view: ConsoleView = field(init=False)
    interventions: list[Intervention] = field(default_factory=list)
    approvals: int = 0
    """Guarded actions approved by `fallback_approval` (no rule decided them)."""
    _reacted: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.view = ConsoleView(self.store, self.session_id)

    def __call__(self, _runner_state: SessionState) -> bool:
        """Look at the console, queue one command, and keep the runner waiting for it (True)."""
        if self.store.pending(self.session_id):
            return True
        state = self.view.refresh()
        if state.finished:
            return False
        chosen = self.decide(state)
        if chosen is not None:
            chosen.command["command_id"] = self._send(chosen.command)
            self.interventions.append(chosen)
        elif state.status is RunStatus.AWAITING_APPROVAL:
            if self.policy.fallback_approval == "approve":
                self.approvals += 1
                self._send({"kind": "approve"})
            else:
                self._send({"kind": "reject", "reason": "no rule allows it"})
        elif state.status is RunStatus.PAUSED:
            self._send({"kind": "step"})
        else:
            return False  # stopped: nothing for an operator to step
        return True

    def _send(self, command: dict[str, Any]) -> str:
        """Queue a command signed as this operator's, so its nodes and the reports say who made them."""
        return queue_command(self.store, self.session_id, {**command, "by": SIMULATED_OPERATOR})

    @property
    def edits(self) -> int:
        return sum(1 for i in self.interventions if i.is_edit)

    def decide(self, state: SessionState) -> Intervention | None:
        """The first rule (in the policy's order) that fires on a node not reacted to yet; remembers that it reacted."""
        for rule in self.policy.rules:
            editing = not isinstance(rule.then, _Approve)
            if editing and self.edits >= self.policy.max_edits:
                continue
            base = {"task": state.task, "url": state.url or ""}
            if not _search(rule.task, state.task, base) or (rule.unless_task and rule.unless_task.search(state.task)):
                continue
            if not _search(rule.page, state.page_text, base):
                continue
            for node, values in _subjects(state, rule.when):
                key = (rule.when.on, node.id)
                if key in self._reacted:
                    continue
                self._reacted.add(key)
                command = _command(rule.then, {**base, **_node_values(state, node), **values})
                return Intervention(command["kind"], rule.name, command, node.id, node.step_created, state.steps)
        return None
