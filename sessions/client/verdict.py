"""What is known of a finished run's answer: the words every list and report uses, and an operator's word.

The planner ends a run "succeeded" when it believes it is done. That is a belief, not a fact: on a real
site nothing checks the answer. So a succeeded run reads "answered, not checked" until something
confirms it: the task's answer check (`planner.answers`: "answer checked", or "answer check not met"),
or an operator who read the answer and accepted it ("answer accepted") or rejected it ("answer
rejected"). Only a check that passed or an operator's acceptance is ever drawn as a success.

An operator's word is one `answer_judged` event appended to the finished session's log, like a
diagnosis (`sessions.client.diagnose`): only once the run has ended and its runner let go of it, so
the append never races the runner's last writes. The latest word stands; the session's listing row
carries it as its cause, so lists, the inbox and exports see it without reading the log.
"""

from __future__ import annotations

import time

from planner.events import AnswerJudged, Cause, Event, Kind, RunStatus
from planner.state import replay
from sessions.errors import SessionInputError
from sessions.store import EventStore
from sessions.store.reading import ended, load_events

__all__ = ["judge_answer", "judged_line", "standing"]

_KNOWN = {
    Cause.ANSWER_CHECKED.value: "answer checked",
    Cause.ANSWER_MISSED.value: "answer check not met",
    Cause.ANSWER_ACCEPTED.value: "answer accepted",
    Cause.ANSWER_REJECTED.value: "answer rejected",
}
"""A succeeded run's status in words, by what is known of its answer (its cause)."""
_BELIEVED = "answered, not checked"
"""A succeeded run that nothing has confirmed: the planner believes it is done."""


def standing(status: str, cause: str | None) -> str:
    """A session's status in words (`status` and `cause` as its listing row holds them)."""
    if status == RunStatus.SUCCEEDED:
        return _KNOWN.get(cause or "", _BELIEVED)
    if status == RunStatus.FAILED and cause == Cause.ANSWER_ACCEPTED:
        return "failed, answer accepted"
    return status.replace("_", " ")


def judged_line(judged: AnswerJudged) -> str:
    """An operator's word on an answer as one plain line ("Accepted by ana: read it myself"), for the
    console, the Markdown export and the HTML report alike; each escapes it for where it goes."""
    who = judged.by or "an operator"
    why = f": {judged.reason}" if judged.reason else ""
    return f"{'Accepted' if judged.accepted else 'Rejected'} by {who}{why}"


def judge_answer(
    store: EventStore, session_id: str, *, accepted: bool, reason: str | None = None, by: str | None = None
) -> AnswerJudged:
    """Record `by`'s word on the finished session's answer; returns what was stored. A session still
    running, still held by its runner, or that ended without an answer is refused with a sentence."""
    info = ended(store, session_id, "accept or reject its answer once it has")
    state = replay(load_events(store, session_id))
    if state.final_answer is None:
        raise SessionInputError(f"session {session_id} ended without an answer: there is none to accept or reject")
    payload = AnswerJudged(accepted=accepted, reason=(reason or "").strip() or None, by=by)
    event = Event(state.seq + 1, Kind.ANSWER_JUDGED, None, payload, payload.VERSION, time.time())
    cause = Cause.ANSWER_ACCEPTED if accepted else Cause.ANSWER_REJECTED
    store.append(session_id, [event], status=info.status, reason=info.reason, steps=info.steps, cause=cause.value)
    return payload
