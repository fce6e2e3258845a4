"""An environment with no browser: every action succeeds unless the script says it fails."""

from __future__ import annotations

import re

from planner.protocols import ActionResult, ElementInfo, Page

__all__ = ["DRY_START", "DryEnvironment", "is_dry"]

DRY_START = "dry://start"


def is_dry(url: str | None) -> bool:
    """Sessions without a real start page run in the dry environment."""
    return url is None or url.startswith("dry://")


class DryEnvironment:
    """Implements `planner.protocols.Environment` without side effects.

    The URL after an action is derived from the action text, so a resumed run sees the same URLs.
    """

    def __init__(self, fail_actions: list[str] | tuple[str, ...] = (), start_url: str = DRY_START) -> None:
        self.fail_actions = frozenset(fail_actions)
        self.url = start_url
        self.executed: list[str] = []

    def execute(self, action: str, *, approved: bool = False) -> ActionResult:
        self.executed.append(action)
        if action in self.fail_actions:
            return ActionResult(ok=False, error=f"dry run: {action!r} is scripted to fail", page=self.observe())
        if not action.lower().startswith("note"):
            self.url = "dry://" + (re.sub(r"[^a-z0-9]+", "-", action.lower()).strip("-") or "page")
        return ActionResult(ok=True, page=self.observe())

    def goto(self, url: str) -> ActionResult:
        self.url = url
        return ActionResult(ok=True, page=self.observe())

    def observe(self) -> Page:
        return Page(url=self.url, title="dry run", text=f"(dry run at {self.url})")

    def check(self, action: str) -> str | None:
        return None if action.strip() else "empty action"

    def target(self, action: str) -> ElementInfo | None:
        return None

    def close(self) -> None:
        return None
