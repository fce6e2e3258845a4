"""How a browser action fails: as data, one sentence a model and an operator can read.

An action's expected failures (an element gone, a read-only field, a download that never came) are
raised as `_ActionFailed` deep in the code that met them and become `ActionResult.error` where the
action ends; Playwright's own errors are cut to the sentence that says what happened. The exception
never leaves this package, so it stays private to it: the errors the planner shows its callers are
`PlannerError`s (`planner.errors`).
"""

from __future__ import annotations

import re

__all__ = ["first_line", "is_crash", "read_only"]


class _ActionFailed(Exception):
    """An expected failure of one action; its message becomes `ActionResult.error`."""


def first_line(error: BaseException) -> str:
    """Playwright messages carry a call log after the first line; people need only the first."""
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return re.sub(r"^\w+\.\w+: ", "", line)


def is_crash(error: BaseException) -> bool:
    text = str(error).lower()
    return "target crashed" in text or "page crashed" in text


def read_only(element_id: int) -> str:
    return f"element {element_id} is read-only (a picker or a script fills it); click it and choose a value instead"
