"""Which sessions need the operator, and why: the one rule behind the console's attention inbox.

A session needs the operator when nothing more will happen until they act on it:

- an action waits for their approval (`awaiting_approval`), the most urgent: a run is held mid-step;
- a problem paused it (the runner stopped on an exception or was shut down, the model was
  unavailable, the cost cap was reached, no runner could be built), or it failed;
- it stopped at a breakpoint the operator set, or for a plan review (after an expansion, or the
  first plan of a session started paused: it waits for the operator's review);
- it succeeded, but its answer lacks what the task's answer must say (a bundled task's check): the
  agent thinks it is done, and a list that showed it as a plain success would hide a wrong answer.

A pause the operator made themselves needs nothing: Pause, one Step, a rejection that pauses, a fork
(which starts paused). Running and stopped sessions need nothing either, nor succeeded ones whose
answer passed its check or had none to pass.

A rejection with nothing left to try pauses the run for a changed plan (`Cause.NO_ALTERNATIVE`): a
problem for the operator to solve, listed as such.

Each operator works their own inbox: an item they opened or acknowledged is "seen" (still listed,
no longer new; the page title counts only new ones), one they dismissed is gone (`inbox`). A mark
belongs to the item, a session's need for one reason, so the same session needing them again for
another reason is a new item.

The listing row (`SessionInfo`) is all this reads, so the inbox costs one query however many sessions
there are. Its `cause` (a `planner.events.Cause`, recorded with every status change) tells the kinds
of pause apart; its reason is only shown. A pause without a cause (a writer that did not say) is
treated as a problem: shown rather than hidden.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from planner.events import Cause, RunStatus
from sessions.client.markdown import short
from sessions.store import SessionInfo

__all__ = ["WHY_CHARS", "Attention", "InboxItem", "Mark", "Need", "inbox", "needing_attention"]

WHY_CHARS = 160
"""A reason longer than this is cut: the inbox gives one line per session, the session page the rest."""

_OPERATORS_OWN = frozenset({Cause.OPERATOR, Cause.STEP})
"""Causes of a pause the operator asked for: it needs nothing more from them."""
_BREAKPOINTS = frozenset({Cause.BREAKPOINT, Cause.PLAN_REVIEW})
"""Causes of a stop at one of the session's breakpoints; any other pause is a problem."""


class Need(StrEnum):
    """What a session needs the operator for."""

    APPROVAL = "approval"
    ERROR = "error"
    FAILED = "failed"
    ANSWER = "answer"
    BREAKPOINT = "breakpoint"


_URGENCY = {Need.APPROVAL: 0, Need.ERROR: 1, Need.FAILED: 1, Need.ANSWER: 1, Need.BREAKPOINT: 2}
"""Lower first: a held action, then a problem (paused by one, failed, a wrong answer), then a breakpoint."""


@dataclass(frozen=True, slots=True)
class Attention:
    """One session that needs the operator: what for, and why in one line."""

    session_id: str
    need: Need
    why: str
    task: str
    since: float
    """When the session's row last changed (its `updated_at`): newest first within a need."""

    @property
    def key(self) -> str:
        """Names this need of this session: a session that needs the operator again, for another
        reason or after leaving the inbox, is a new item (a browser notifies each key once)."""
        return f"{self.session_id}:{self.need.value}:{self.why}"


def needing_attention(sessions: Iterable[SessionInfo]) -> list[Attention]:
    """The sessions that need the operator, most urgent first (approval; then a problem or a failure;
    then a breakpoint), newest first within each."""
    found = [item for info in sessions if (item := _attention(info)) is not None]
    return sorted(found, key=lambda item: (_URGENCY[item.need], -item.since, item.session_id))


def _attention(info: SessionInfo) -> Attention | None:
    reason = " ".join((info.reason or "").split())
    if info.status == RunStatus.AWAITING_APPROVAL:
        need, why = Need.APPROVAL, reason or "an action waits for approval"
    elif info.status == RunStatus.FAILED:
        need, why = Need.FAILED, f"failed: {reason}" if reason else "failed"
    elif info.status == RunStatus.SUCCEEDED and info.cause == Cause.ANSWER_MISSED:
        need, why = Need.ANSWER, f"succeeded, but {reason}" if reason else "succeeded, but the answer check is not met"
    elif info.status != RunStatus.PAUSED or info.cause in _OPERATORS_OWN:
        return None
    elif info.cause in _BREAKPOINTS:
        need, why = Need.BREAKPOINT, reason or "stopped at a breakpoint"
    else:
        need, why = Need.ERROR, f"paused: {reason}" if reason else "paused by a problem"
    return Attention(info.id, need, short(why, WHY_CHARS), info.task, info.updated_at)


class Mark(StrEnum):
    """What an operator did with an inbox item (`EventStore.mark_attention` keeps it)."""

    SEEN = "seen"
    """Opened or acknowledged: listed, no longer new."""
    DISMISSED = "dismissed"
    """Taken off their inbox."""


@dataclass(frozen=True, slots=True)
class InboxItem:
    """An item of one operator's inbox: the need, and whether they have seen it."""

    attention: Attention
    seen: bool


def inbox(items: Iterable[Attention], marks: Mapping[str, str]) -> list[InboxItem]:
    """`items` (in their order) as an operator's inbox, given their marks by item key: dismissed ones
    left out, the rest new or seen."""
    return [
        InboxItem(item, marks.get(item.key) == Mark.SEEN) for item in items if marks.get(item.key) != Mark.DISMISSED
    ]
