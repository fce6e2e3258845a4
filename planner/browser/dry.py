"""An environment with no browser: every action succeeds unless the script says it fails."""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping, Sequence

from planner.actions import is_note
from planner.browser.dialogs import answer_dialog
from planner.browser.effect_fence import EffectFence
from planner.effects import RequestRule, SentRequest
from planner.guard import GuardRules
from planner.latency import Latency
from planner.protocols import ActionResult, ElementInfo, Page, Preview
from planner.secrets import Secrets

__all__ = ["DRY_START", "DryEnvironment", "is_dry"]

DRY_START = "dry://start"


def is_dry(url: str | None) -> bool:
    """Sessions without a real start page run in the dry environment."""
    return url is None or url.startswith("dry://")


class DryEnvironment:
    """Implements `planner.protocols.Environment` without side effects.

    The URL after an action is derived from the action text, so a resumed run sees the same URLs.
    `confirms` maps actions to the message of a `confirm` dialog the page opens when they run, answered
    as the browser answers one (`planner.browser.dialogs`, by `guard_rules`): a risky one is dismissed
    and the action held for approval unless it runs approved. `sends` maps actions to the request their
    page sends ("POST http://shop.test/order"), judged as the browser's effect fence judges one: a
    state-changing one is held unless the session's rules allow it, the action is approved, or the
    request itself is (`allow`). `secrets` (name -> value) are filled in
    as the browser fills them (`planner.secrets`): `executed` holds each action as it was run, values
    and all, while the URL it leads to is made from the action as the model wrote it, and every page
    is hidden as the browser hides it. `latency` makes each action take as long as a browser's would.
    """

    def __init__(
        self,
        fail_actions: list[str] | tuple[str, ...] = (),
        start_url: str = DRY_START,
        *,
        confirms: Mapping[str, str] | None = None,
        guard_rules: GuardRules | None = None,
        sends: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        latency: Latency | None = None,
    ) -> None:
        self.fail_actions = frozenset(fail_actions)
        self.latency = latency
        self.secrets = Secrets(secrets)
        self.url = start_url
        self.executed: list[str] = []
        self.confirms = dict(confirms or {})
        self.guard_rules = guard_rules if guard_rules is not None else GuardRules()
        self.sends = dict(sends or {})
        self.arrived: list[str] = []
        """The requests of `sends` the fence let through, as "METHOD URL": what a server would have received."""
        self._reports: list[str] = []
        self._effects = EffectFence((), self._reports.append)

    def execute(
        self,
        action: str,
        *,
        approved: bool = False,
        allow: Collection[str] = (),
        rules: Sequence[RequestRule] | None = None,
    ) -> ActionResult:
        if self.latency is not None and not is_note(action):  # a note is the agent's own, not the browser's
            time.sleep(self.latency.action_delay(action))
        self.executed.append(self.secrets.fill(action))
        if action in self.fail_actions:
            return ActionResult(ok=False, error=f"dry run: {action!r} is scripted to fail", page=self.observe())
        if action in self.sends:
            method, url = self.sends[action].split(" ", 1)
            self._effects.start(approved=approved, allow=allow, rules=rules)
            if self._effects.admits(method, url, lambda: SentRequest(method=method, url=url, kind="form")):
                self.arrived.append(self.sends[action])
            held = self._effects.held
            self._effects.stop()
            if held:
                error = f"held for an operator's approval: the page sent {held[0].describe()}"
                return ActionResult(ok=False, error=error, page=self.observe(), held_requests=held)
        reports: tuple[str, ...] = tuple(self._reports)
        self._reports.clear()
        if action in self.confirms:
            answer = answer_dialog("confirm", self.confirms[action], "", self.guard_rules, approved)
            reports += (answer.report,)
            if answer.held is not None:
                page = self._reporting(reports)
                return ActionResult(ok=False, error=answer.report, page=page, reports=reports, held_dialog=answer.held)
        if not action.lower().startswith("note"):
            self.url = "dry://" + (re.sub(r"[^a-z0-9]+", "-", action.lower()).strip("-") or "page")
        return ActionResult(ok=True, page=self._reporting(reports), reports=reports)

    def _reporting(self, reports: tuple[str, ...]) -> Page:
        """The page, its text headed by the action's reports as the browser's observation has them."""
        page = self.observe()
        if not reports:
            return page
        return Page(url=page.url, title=page.title, text="\n".join([*(f"({r})" for r in reports), page.text]))

    def goto(self, url: str) -> ActionResult:
        self.url = url
        return ActionResult(ok=True, page=self.observe())

    def observe(self) -> Page:
        url = self.secrets.hide(self.url)
        return Page(url=url, title="dry run", text=f"(dry run at {url})")

    def check(self, action: str) -> str | None:
        return None if action.strip() else "empty action"

    def target(self, action: str) -> ElementInfo | None:
        return None

    def preview(self, action: str) -> Preview | None:
        return None  # no page to picture

    def close(self) -> None:
        return None
