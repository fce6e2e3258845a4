"""A model that answers with what another session's model answered: for rehearsal and regression.

A recorded session's successful `model_call` events are matched to new calls by (question, node
description), in recorded order. Among several recordings with the same key, the one made for the
same node id at the same revision count is preferred, so a session rebuilt after a pause or crash
(with a fresh `ReplayModel`) still gets the answer meant for that node rather than the first one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from planner.errors import ModelOutputError
from planner.events import Event, ModelCalled
from planner.questions import (
    Completion,
    Constraints,
    Expansion,
    FinalAnswer,
    Observation,
    Question,
    Repair,
    Reply,
    View,
)
from planner.state import SessionState, apply

__all__ = ["RecordedCall", "ReplayModel", "recorded_calls"]

OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One accepted answer: the question, the node it was for, and the output as stored."""

    question: str
    description: str
    output: dict[str, Any]
    node_id: str = ""
    revisions: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "description": self.description,
            "output": self.output,
            "node_id": self.node_id,
            "revisions": self.revisions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordedCall:
        """A call as `to_json` wrote it; one recorded before the rename names its question `operator`."""
        fields = dict(data)
        if "question" not in fields and "operator" in fields:
            fields["question"] = fields.pop("operator")
        return cls(**fields)


def recorded_calls(events: Iterable[Event]) -> list[RecordedCall]:
    """The accepted model answers of a session's log, each with its node's description at call time.

    The events are folded as they go because a `model_call` event names only the node id, and a
    node's description can be rewritten later in the run.
    """
    state = SessionState()
    calls = []
    for event in events:
        call = event.payload
        if isinstance(call, ModelCalled) and call.ok and call.output is not None:
            node = state.tree.get(event.node_id or "")
            if node is not None:
                calls.append(RecordedCall(call.question, node.description, call.output, node.id, node.revisions))
        apply(state, event)
    return calls


class ReplayModel:
    """Implements `planner.protocols.Model` by replaying `RecordedCall`s (see the module docstring)."""

    def __init__(self, calls: Sequence[RecordedCall | Mapping[str, Any]], name: str = "replay") -> None:
        self.name = name
        self._calls = [c if isinstance(c, RecordedCall) else RecordedCall.from_json(c) for c in calls]
        self._used: set[int] = set()

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        return self._answer(Question.CONSTRAINTS, view, Constraints)

    def expand(self, view: View) -> Reply[Expansion]:
        return self._answer(Question.EXPAND, view, Expansion)

    def repair(self, view: View, reason: str) -> Reply[Repair]:
        return self._answer(Question.REPAIR, view, Repair)

    def check_completion(self, view: View) -> Reply[Completion]:
        return self._answer(Question.COMPLETE, view, Completion)

    def observe(self, view: View, action: str) -> Reply[Observation]:
        return self._answer(Question.OBSERVE, view, Observation)

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        return self._answer(Question.FINAL_ANSWER, view, FinalAnswer)

    def _answer(self, question: Question, view: View, output: type[OutputT]) -> Reply[OutputT]:
        node = view.node
        candidates = [
            i
            for i, call in enumerate(self._calls)
            if i not in self._used and call.question == question and call.description == node.description
        ]
        exact = [
            i for i in candidates if (self._calls[i].node_id, self._calls[i].revisions) == (node.id, node.revisions)
        ]
        chosen = next(iter(exact or candidates), None)
        if chosen is None:
            raise ModelOutputError(f"no recorded answer for {question} on {node.description!r}")
        self._used.add(chosen)
        try:
            return Reply(output.model_validate(self._calls[chosen].output))
        except ValidationError as error:
            raise ModelOutputError(
                f"recorded {question} answer is no longer valid: {error.errors()[0]['msg']}"
            ) from None
