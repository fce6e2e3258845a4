"""Engine budgets, ablation switches and breakpoints."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from planner.effects import RequestRule
from planner.questions import MAX_CHILDREN

__all__ = ["Breakpoint", "EngineConfig"]

_Price = Annotated[float, Field(gt=0, le=1_000)]
"""USD per million tokens: above zero, and far above any list price."""


class Breakpoint(StrEnum):
    AFTER_EXPANSION = "after_expansion"
    BEFORE_ACTION = "before_action"
    ON_FAILURE = "on_failure"
    ON_REPAIR = "on_repair"


class EngineConfig(BaseModel):
    """How a session plans. Stored with the session, so a resumed or forked run plans the same way.

    Each field that needs a reason says it below, where it is declared.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    repair: bool = True
    or_alternatives: bool = True
    max_steps: int = Field(default=300, ge=1, le=100_000)
    max_revisions: int = Field(default=2, ge=0, le=20)
    expansion_retries: int = Field(default=2, ge=0, le=10)
    max_children: int = Field(default=30, ge=1, le=MAX_CHILDREN)
    """The most sub-goals one expansion or repair may propose: every later prompt shows them all, so an
    answer with thousands would make each call huge; such an answer is retried, then fails the node."""
    completion_check: Literal["root", "every_and"] = "root"
    """By default "root": the paper found checking every AND node too strict."""
    lookahead: int = Field(default=3, ge=0, le=10)
    """How many upcoming sub-goals a model may ground as actions while it reads a page (0 turns it off
    and every node gets its own expansion call)."""
    constraints: bool = True
    """Extract the task's requirements once before planning."""
    max_cost_usd: float | None = Field(default=None, gt=0, le=10_000)
    """The run pauses once the model calls' estimated cost reaches it (None: no cap); an operator raises
    it to go on."""
    breakpoints: frozenset[Breakpoint] = frozenset()
    node_breakpoints: frozenset[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        default=frozenset(), max_length=10_000
    )
    """Nodes an operator marked "break here": the run pauses whenever the traversal is about to enter one
    (`planner.engine`), until they are removed."""
    guard: bool = True
    allowed_domains: tuple[
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=253)], ...
    ] = Field(default=(), max_length=50)
    """Where the browser may go without an operator's approval beyond the start URL's host (subdomains
    included): a real site's CDN, say. The guard asks before anything else and the browser's fence
    refuses it."""
    review_first_plan: bool = False
    """The console's "Start paused": the run pauses once the root is expanded, before any browser action,
    so the operator reviews the first plan as a whole (`planner.engine`)."""
    request_rules: tuple[RequestRule, ...] = Field(default=(), max_length=200)
    """The effect fence's policy (`planner.effects`): which requests a page may send to a server
    unattended, which wait for an operator (by default, every one that can change state) and which are
    refused; an operator's "always allow" in the approval box adds one."""
    model_prices: tuple[_Price, _Price] | None = None
    """A Claude model's input and output prices in USD per million tokens, for a model the capability
    table does not price (or one whose price changed): without any price, a session with a cost cap
    cannot keep it (`planner.models.claude`)."""
