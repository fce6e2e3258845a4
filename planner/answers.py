"""Whether a final answer says what a task's answer must say: the strings a correct answer contains.

Deliberately simple, substring matching after case-folding and collapsing whitespace, so that an
operator can see at a glance why an answer passed or failed ("missing: Northwind, 54.99"). The
bundled demo tasks carry such strings; a session created for one of them keeps its strings
(`SessionState.expect`), so the console, the reports and the suite check the answer the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["AnswerCheck", "check_answer"]


class AnswerCheck(BaseModel):
    """Which required strings the answer contains (`found`) and which it lacks (`missing`)."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    found: list[str]
    missing: list[str]


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_answer(required: Sequence[str], answer: str | None) -> AnswerCheck:
    """Check `answer` (None: no answer, so every required string is missing) against `required`."""
    text = _normalise(answer or "")
    found = [s for s in required if _normalise(s) in text]
    missing = [s for s in required if _normalise(s) not in text]
    return AnswerCheck(passed=not missing, found=found, missing=missing)
