"""The two things the engine talks to: a planning model and a browsing environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from planner.operators import Completion, Constraints, Expansion, FinalAnswer, Observation, Repair, Reply, View

__all__ = ["ActionResult", "ElementInfo", "Environment", "Model", "Page"]


@runtime_checkable
class Model(Protocol):
    """One method per planner operator. Raise `ModelOutputError` for an unusable answer and
    `ModelUnavailable` when the backend cannot be reached."""

    name: str

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        """The task's explicit item and task requirements, asked once before the root is expanded."""
        ...

    def expand(self, view: View) -> Reply[Expansion]: ...

    def repair(self, view: View, reason: str) -> Reply[Repair]: ...

    def check_completion(self, view: View) -> Reply[Completion]: ...

    def observe(self, view: View, action: str) -> Reply[Observation]:
        """Summarize the page an action reached, propose the global tree update and, up to
        `view.lookahead` upcoming sub-goals, the actions that achieve them on this page; one call."""
        ...

    def final_answer(self, view: View) -> Reply[FinalAnswer]: ...


@dataclass(frozen=True, slots=True)
class Page:
    """A compact, model-ready view of the current page."""

    url: str
    title: str = ""
    text: str = ""
    html_chars: int = 0


@dataclass(frozen=True, slots=True)
class ElementInfo:
    """What an action would touch, for the action guard.

    `texts` are the element's other names a person may see or a page may use (visible text,
    value, aria-label, title); `form_submits` the names of the submit controls of a text field's
    form, which Enter presses; `url` where the action leads, resolved as the browser will: a goto's
    target, a link's href, a form's action ("" when a goto's URL cannot be parsed).
    """

    role: str = ""
    name: str = ""
    input_type: str = ""
    texts: tuple[str, ...] = ()
    form_submits: tuple[str, ...] = ()
    url: str = ""


@dataclass(frozen=True, slots=True)
class ActionResult:
    """The outcome of one action. A failure is data (`ok=False`, `error`), never an exception."""

    ok: bool
    page: Page | None = None
    error: str | None = None
    screenshot: str | None = None
    duration_ms: float = 0.0


@runtime_checkable
class Environment(Protocol):
    def execute(self, action: str, *, approved: bool = False) -> ActionResult:
        """Run one action. `approved` says an operator approved this very action, so it may go
        where the environment's own fence would otherwise refuse (another host)."""
        ...

    def goto(self, url: str) -> ActionResult: ...

    def observe(self) -> Page: ...

    def check(self, action: str) -> str | None:
        """Why this action cannot run on the current page (bad syntax, unknown element), or None."""
        ...

    def target(self, action: str) -> ElementInfo | None:
        """What `action` would touch or where it would lead, for the guard; None when unknown."""
        ...

    def close(self) -> None: ...
