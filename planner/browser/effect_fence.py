"""The effect fence's bookkeeping for one browser: which state-changing requests an action may send.

`planner.effects` says what a policy does with one request; this keeps what one action has been
granted and what it has sent. An action an operator approved may send anything its session's rules
do not block. Otherwise a held request is refused and remembered (`held`), so the action fails and
the engine asks an operator; approved, the action runs again with those requests in `allow`, each let
through once. Once an approved request has gone through, the action has had its effect: it will not
be run again, so anything else it sends that would be held is refused and reported instead.

Refusing rather than holding the request open is deliberate (see the README's reliability
section): an approval may take hours and outlive the browser, while the refused request never
reached the server, so running the action again after approval sends it exactly once.

Between actions nothing the agent did sent a request, so a held one is refused and reported:
there is no action to approve.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from planner.effects import RequestRule, SentRequest, Verdict, decide

__all__ = ["EffectFence"]


class EffectFence:
    """Judges each request a page sends; `report` receives one sentence for each it refuses but does not
    hold for approval (the environment shows them at the head of the next observation)."""

    def __init__(self, rules: Sequence[RequestRule], report: Callable[[str], None]) -> None:
        self._default = self.rules = tuple(rules)
        self._report = report
        self._acting = False
        self._approved = False
        self._allow: set[str] = set()
        self._passed: list[SentRequest] = []
        self._held: dict[str, SentRequest] = {}

    def start(self, *, approved: bool, allow: Collection[str], rules: Sequence[RequestRule] | None) -> None:
        """An action begins: what it may send, under `rules` (None: the rules the fence was made with).
        What the page sends between actions is judged by the last action's rules."""
        self.rules = self._default if rules is None else tuple(rules)
        self._acting, self._approved = True, approved
        self._allow = set(allow)
        self._passed.clear()
        self._held.clear()

    def stop(self) -> None:
        """The action's page has been read: what the page sends now, it sends between actions."""
        self._acting = self._approved = False
        self._allow.clear()

    @property
    def acting(self) -> bool:
        """An action runs: what the page sends now is that action's."""
        return self._acting

    @property
    def approved(self) -> bool:
        """An operator approved the action that runs."""
        return self._approved

    @property
    def passed(self) -> tuple[SentRequest, ...]:
        """The approved requests this action let through: its effect, whatever else then failed."""
        return tuple(self._passed)

    @property
    def held(self) -> tuple[SentRequest, ...]:
        """The requests this action sent that wait for an operator, in the order sent."""
        return tuple(self._held.values())

    def admits(self, method: str, url: str, sent: Callable[[], SentRequest]) -> bool:
        """Whether a request may reach its server; `sent` describes it, called only when it is refused."""
        verdict = decide(self.rules, method, url)
        if verdict is Verdict.ALLOW:
            return True
        if verdict is Verdict.BLOCK:
            self._report(f"the page sent {sent().describe()}, which the session's request rules block; it was refused")
            return False
        if self._approved:
            return True
        key = f"{method.upper()} {url}"
        if key in self._allow:
            self._allow.discard(key)
            self._passed.append(request := sent())
            self._report(f"the page sent {request.describe()}, which an operator approved: it went through")
            return True
        request = sent()
        if not self._acting:
            self._report(
                f"between actions, the page sent {request.describe()}, which could change state on the server; it was "
                "refused (no action of the agent's sent it, so there was nothing to approve)"
            )
        elif self._passed:
            approved = self._passed[0].describe()
            self._report(
                f"the page also sent {request.describe()}, which was refused: the action had already sent {approved}, "
                "which an operator approved, so it is not run again"
            )
        else:
            self._held.setdefault(request.key, request)
        return False
