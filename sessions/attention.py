"""Which sessions need the operator, and why: the one rule behind the console's attention inbox.

A session needs the operator when nothing more will happen until they act on it:

- an action waits for their approval (`awaiting_approval`), the most urgent: a run is held mid-step;
- a problem paused it (the runner stopped on an exception, the model was unavailable, the cost cap was
  reached, no runner could be built), or it failed;
- it stopped at a breakpoint the operator set (plan review after an expansion included).

A pause the operator made themselves needs nothing: Pause, one Step, a rejection that pauses, starting
paused, a fork (which starts paused). Running, stopped and succeeded sessions need nothing either.

The listing row (`SessionInfo`) is all this reads, so the inbox costs one query however many sessions
there are. It holds the status and the reason recorded with it, and the planner records why a session
paused only as that sentence; the kinds of pause are therefore told apart by the fixed openings of those
sentences, each written in exactly one place (named below). tests/test_attention.py makes the real
engine, commands and fork write them, so a change of wording there fails a test instead of silently
moving sessions in or out of the inbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from planner.events import RunStatus
from sessions.markdown import short
from sessions.store import SessionInfo

__all__ = ["WHY_CHARS", "Attention", "Need", "needing_attention"]

WHY_CHARS = 160
"""A reason longer than this is cut: the inbox gives one line per session, the session page the rest."""

_OPERATORS_OWN = (
    "paused by operator",  # planner.commands._pause
    "rejected by operator",  # planner.commands._reject, with "pause" set
    "paused after one step",  # planner.engine.Engine._pause_after, after the operator's Step
    "forked from ",  # planner.state._session_forked
)
"""Openings of the reasons for a pause the operator asked for (a session created paused has none)."""

_BREAKPOINTS = (
    "breakpoint: ",  # planner.engine.Engine._held_before and _pause_after
    "plan review: ",  # planner.engine.Engine._pause_after, the after-expansion breakpoint
)
"""Openings of the reasons the engine gives when it stops at one of the session's breakpoints."""


class Need(StrEnum):
    """What a session needs the operator for."""

    APPROVAL = "approval"
    ERROR = "error"
    FAILED = "failed"
    BREAKPOINT = "breakpoint"


_URGENCY = {Need.APPROVAL: 0, Need.ERROR: 1, Need.FAILED: 1, Need.BREAKPOINT: 2}
"""Lower first: a held action, then a problem (paused by one or failed), then a breakpoint."""


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
    elif info.status != RunStatus.PAUSED or not reason or reason.startswith(_OPERATORS_OWN):
        return None
    elif reason.startswith(_BREAKPOINTS):
        need, why = Need.BREAKPOINT, reason
    else:
        need, why = Need.ERROR, f"paused: {reason}"
    return Attention(info.id, need, short(why, WHY_CHARS), info.task, info.updated_at)
