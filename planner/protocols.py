"""The two things the engine talks to: a planning model and a browsing environment."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from planner.effects import RequestRule, SentRequest
from planner.events import Box
from planner.questions import Completion, Constraints, Expansion, FinalAnswer, Observation, Repair, Reply, View

__all__ = ["ActionResult", "ElementInfo", "Environment", "Model", "Page", "Preview"]


@runtime_checkable
class Model(Protocol):
    """One method per planner question. Raise `ModelOutputError` for an unusable answer and
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
    """The outcome of one action. A failure is data (`ok=False`, `error`), never an exception.

    `reports`: what else happened that the agent should know, one sentence each, also shown at the
    top of `page.text`: a dialog the page showed and how it was answered, a file it downloaded.
    `held_dialog`: set when the page asked to confirm something the guard's name rule calls risky
    and the environment dismissed it for want of an operator's approval ("the page asked to confirm
    'Delete your account?'"); the action then failed, and the engine asks an operator to approve it,
    with that as the rule. Run again approved, the dialog is accepted.
    `held_requests`: requests the page sent that could change state on a server and that the effect
    fence refused for want of an operator's approval (`planner.effects`); the action then failed, and
    the engine asks an operator. Run again with them allowed, they go through, each once.
    """

    ok: bool
    page: Page | None = None
    error: str | None = None
    screenshot: str | None = None
    duration_ms: float = 0.0
    reports: tuple[str, ...] = ()
    held_dialog: str | None = None
    held_requests: tuple[SentRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class Preview:
    """The page as an action would find it, for the operator who approves it: a `screenshot` file with
    the action's element scrolled into view, and `box`, where that element is in the screenshot's
    pixels (None: the action touches no element, as a goto, or the element is not drawn on screen)."""

    screenshot: str
    box: Box | None = None


@runtime_checkable
class Environment(Protocol):
    def execute(
        self,
        action: str,
        *,
        approved: bool = False,
        allow: Collection[str] = (),
        rules: Sequence[RequestRule] = (),
    ) -> ActionResult:
        """Run one action. `approved` says an operator approved this very action, so it may go
        where the environment's own fences would otherwise refuse (another host, a state-changing
        request). `allow` names requests an operator approved (`SentRequest.key`), each let through
        once; `rules` is the session's request policy (`planner.effects`)."""
        ...

    def goto(self, url: str) -> ActionResult: ...

    def observe(self) -> Page: ...

    def check(self, action: str) -> str | None:
        """Why this action cannot run on the current page (bad syntax, unknown element), or None."""
        ...

    def target(self, action: str) -> ElementInfo | None:
        """What `action` would touch or where it would lead, for the guard; None when unknown."""
        ...

    def preview(self, action: str) -> Preview | None:
        """A picture of what `action` would touch, for the operator asked to approve it; None when
        none can be taken (no browser, no screenshot folder, a page that cannot be drawn).

        A method of its own rather than a box in `ElementInfo`: `target` runs before every guarded
        check, and a screenshot costs a browser round trip and a file, so only a held action pays for it.
        """
        ...

    def close(self) -> None: ...
