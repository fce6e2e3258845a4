"""The questions a planner asks its model, and what each answer must be.

Outputs are pydantic models: a backend that returns something else raises `ModelOutputError`, and
the engine retries within its budget. Field validators hold the shape rules every backend shares
(an OR alternative carries a score, an action node carries an action); rules that need the tree
(is this node id real?) are checked by the engine.

Every text field and every list has a maximum length, so no answer can make later prompts (which
show the tree, the notes and the candidates) grow without bound: the sizes are generous for what
each field is for, and an answer over them is malformed output like any other. How many sub-goals
one expansion may propose is the session's `EngineConfig.max_children`, at most `MAX_CHILDREN`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from planner.tree import Node, Tree

__all__ = [
    "MAX_CHILDREN",
    "CallRecord",
    "Candidate",
    "ChildSpec",
    "Completion",
    "Constraints",
    "CriticalStep",
    "Diagnosis",
    "Expansion",
    "FailureCategory",
    "FinalAnswer",
    "ItemConstraints",
    "Observation",
    "Proposal",
    "Question",
    "Repair",
    "Reply",
    "StepWork",
    "View",
]


class Question(StrEnum):
    """The questions a planner asks its model: one per `planner.protocols.Model` method."""

    CONSTRAINTS = "constraints"
    EXPAND = "expand"
    OBSERVE = "observe"
    REPAIR = "repair"
    COMPLETE = "complete"
    FINAL_ANSWER = "final_answer"


class StepWork(StrEnum):
    """What one engine step does: the work of a node's frame, or the session's first and last steps."""

    CONSTRAINTS = "constraints"
    EXPAND = "expand"
    EXECUTE = "execute"
    CHECK = "check"
    RECOVER = "recover"
    FINISH = "finish"


MAX_CHILDREN = 100
"""Most children one expansion or repair may carry; `EngineConfig.max_children` sets a lower limit per session."""

_Description = Annotated[str, Field(min_length=1, max_length=2000)]
"""A node's description, the same bound an operator's edit has (`planner.commands`)."""
_ActionText = Annotated[str, Field(max_length=2000)]
_Line = Annotated[str, Field(max_length=1000)]
"""A note, a constraint, a progress line: one line of text."""
_Text = Annotated[str, Field(max_length=4000)]
"""A summary, a reason, an answer: a paragraph."""
_NodeId = Annotated[str, Field(max_length=100)]


class ChildSpec(BaseModel):
    """A sub-goal (AND child) or a scored alternative strategy (OR child).

    `action` is optional lookahead: when the sub-goal is one browser action on the page the model is
    looking at, giving it now saves the child its own expansion call. The engine keeps it only
    while that page stays current.
    """

    description: _Description
    score: float | None = Field(default=None, gt=0.0, le=1.0)
    action: _ActionText | None = None


class Expansion(BaseModel):
    """Node Expansion: the node's type, and its children or its one browser action."""

    type: Literal["AND", "OR", "ACTION"]
    children: list[ChildSpec] = Field(default_factory=list, max_length=MAX_CHILDREN)
    action: _ActionText | None = None
    reasoning: _Text = ""

    @model_validator(mode="after")
    def _shape_matches_type(self) -> Expansion:
        if self.type == "ACTION":
            if not self.action or not self.action.strip():
                raise ValueError("an ACTION expansion needs a non-empty action")
            if self.children:
                raise ValueError("an ACTION expansion has no children")
        else:
            if not self.children:
                raise ValueError(f"an {self.type} expansion needs at least one child")
            if self.type == "OR" and any(child.score is None for child in self.children):
                raise ValueError("every OR alternative needs a score in (0, 1]")
        return self


class Repair(BaseModel):
    """Node Repair: children to prune (by id) and new children to append; nothing added means give up."""

    prune: list[_NodeId] = Field(default_factory=list, max_length=MAX_CHILDREN)
    add: list[ChildSpec] = Field(default_factory=list, max_length=MAX_CHILDREN)
    reasoning: _Text = ""


class Completion(BaseModel):
    """Node Completion Check: is the node's objective met, given its children and the notes?

    For the root, a complete verdict may carry the final answer, which then needs no call of its own.
    """

    complete: bool
    reason: _Text = ""
    answer: _Text | None = None


class ItemConstraints(BaseModel):
    item: str = Field(min_length=1, max_length=200)
    constraints: list[_Line] = Field(default_factory=list, max_length=50)


class Constraints(BaseModel):
    """Task-constraint extraction: what the task explicitly requires, per item and of the task overall.

    Extracted once per session; every later prompt shows it, so decompositions, the completion check
    and the final answer are all held to the same requirements.
    """

    items: list[ItemConstraints] = Field(default_factory=list, max_length=50)
    task: list[_Line] = Field(default_factory=list, max_length=50)

    def lines(self) -> list[str]:
        """One line per requirement ("espresso machine: cheapest"), the form sessions store and show."""
        lines = [f"{group.item}: {c}" for group in self.items for c in group.constraints if c.strip()]
        return lines + [c for c in self.task if c.strip()]


class Candidate(BaseModel):
    """An item the task may be answered with, and how it stands against the task's constraints.

    Candidates are kept for the whole run by name (a later report on the same name updates it), so an
    operator sees every item that was considered and why it was dropped, not only those noted.
    """

    name: str = Field(min_length=1, max_length=300)
    verdict: Literal["qualifies", "uncertain", "rejected"] = "uncertain"
    fields: dict[Annotated[str, Field(max_length=200)], _Line] = Field(default_factory=dict, max_length=50)
    unmet: list[_Line] = Field(default_factory=list, max_length=50)


class Proposal(BaseModel):
    """A browser action for an upcoming sub-goal, read off the page just observed."""

    node: _NodeId
    action: str = Field(min_length=1, max_length=2000)


class Observation(BaseModel):
    """Observation Summarizer and Global Tree Update in one answer.

    Both read the page an action just reached, so one call serves both: what the page shows, the
    progress made and what to focus on next (`feedback`), facts worth keeping, and open nodes to
    prune (by id) or describe more sharply.
    `ahead` folds in the next Node Expansion when it is a single action on this page: the model is
    reading that page anyway, so planning the next click costs nothing extra. `candidates` keeps the
    table of items the task may be answered with (the paper's candidate-item tracking).
    """

    summary: _Text = ""
    progress: _Line = ""
    feedback: _Line = ""
    notes: list[_Line] = Field(default_factory=list, max_length=50)
    prune: list[_NodeId] = Field(default_factory=list, max_length=MAX_CHILDREN)
    rewrite: dict[_NodeId, Annotated[str, Field(max_length=2000)]] = Field(
        default_factory=dict, max_length=MAX_CHILDREN
    )
    ahead: list[Proposal] = Field(default_factory=list, max_length=10)
    candidates: list[Candidate] = Field(default_factory=list, max_length=50)
    reasoning: _Text = ""


class FinalAnswer(BaseModel):
    """The answer to the task, or None with what is missing: a run never succeeds without an answer."""

    answer: _Text | None = None
    missing: _Text = ""


_Finding = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
"""One statement of a diagnosis: never empty."""


class FailureCategory(StrEnum):
    """The paper's failure categories (its Table 10)."""

    WRONG_SEARCH_STRATEGY = "wrong_search_strategy"
    MISSED_INFORMATION = "missed_information"
    NAVIGATION_ERROR = "navigation_error"
    PREMATURE_STOP = "premature_stop"
    CONSTRAINT_VIOLATION = "constraint_violation"
    VERIFICATION_FAILURE = "verification_failure"
    OTHER = "other"


class CriticalStep(BaseModel):
    """A step where the run went wrong: its number in the step sequence, and the node it ran at if known."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step_number: int = Field(ge=1, le=1_000_000)
    node_id: Annotated[str, StringConstraints(pattern=r"^0(\.[0-9]{1,6}){0,50}$")] | None = None
    what_happened: _Finding
    what_went_wrong: _Finding


class Diagnosis(BaseModel):
    """The paper's Table 10 fields; a model's tool input validates into this."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root_cause: _Finding
    critical_steps: list[CriticalStep] = Field(default_factory=list, max_length=20)
    what_should_have_been_done: _Finding
    failure_category: FailureCategory
    confidence: int = Field(ge=1, le=5)


@dataclass(slots=True)
class CallRecord:
    """What a backend sent and got back for one question; stored as a `model_call` event.

    `effort` is the effort level the call asked for (None: the model's default, or a model without
    effort levels). `thinking` holds the summaries of the model's thinking that came with the answer,
    kept so an operator can read why a decomposition was chosen; they are never part of the answer.
    """

    prompt: str | None = None
    raw: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    latency_ms: float = 0.0
    effort: str | None = None
    thinking: list[str] = field(default_factory=list)


OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass(slots=True)
class Reply(Generic[OutputT]):
    output: OutputT
    call: CallRecord = field(default_factory=CallRecord)


@dataclass(frozen=True, slots=True)
class View:
    """The read-only context a question is asked in.

    It holds the live tree by reference, so building it is free; a backend renders whatever part
    of it its prompt needs. `lookahead` is how many upcoming sub-goals (`planner.frames.upcoming`)
    the model may give actions for ahead of time; 0 switches lookahead off.
    """

    task: str
    tree: Tree
    node: Node
    notes: tuple[str, ...] = ()
    progress: str = ""
    feedback: str = ""
    observation: str = ""
    url: str | None = None
    allow_or: bool = True
    constraints: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    lookahead: int = 0
