"""The demo tasks that run against the bundled shop, and a check of an agent's final answer.

Each task names the strings a correct final answer must contain (product names, prices). The
check is deliberately simple, substring matching after case-folding and collapsing whitespace, so
an operator can see at a glance why an answer passed or failed.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from planner.inputs import InputError, describe_validation_error, parse_json, read_text_file, shown
from planner.models.offline import Playbook

__all__ = [
    "TASKS_PATH",
    "Correction",
    "Criteria",
    "CriterionResult",
    "DemoTask",
    "TaskError",
    "TaskKind",
    "check_answer",
    "load_tasks",
    "select_tasks",
]

TASKS_PATH = Path(__file__).with_name("tasks.json")

TASKS_LIMIT = 2_000_000
"""Bytes a task file may have; the bundled one is under 20 KB."""


class TaskError(ValueError):
    """A task file that cannot be used, or a task id that names no task; the message says which and why."""


_Text = Annotated[str, Field(min_length=1, max_length=2000)]


class TaskKind(StrEnum):
    """Which part of the console a task exercises."""

    PLAIN = "plain"
    """A straight sequence of steps that works first time."""
    OR_FALLBACK = "or_fallback"
    """The obvious alternative fails (the broken price filter); another alternative of the OR node works."""
    REPAIR = "repair"
    """The first plan fails and the planner must repair it."""
    MULTI = "multi"
    """Several items, several constraints, all in one answer."""
    GUARDED = "guarded"
    """Includes an action the guard holds for approval (add to cart, checkout, password)."""
    WRONG_DECOMPOSITION = "wrong_decomposition"
    """A naive plan assumes a fact it should look up; the operator injects the missing sub-goals."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Criteria(_Frozen):
    must_contain: list[_Text] = Field(min_length=1)


class Correction(_Frozen):
    """An operator's corrective injection, in the shape of the console's `inject` command."""

    parent: str = Field(pattern=r"^0(\.[1-9][0-9]*)*$")
    position: int | None = Field(default=None, ge=0)
    goals: list[_Text] = Field(min_length=1)


class DemoTask(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    title: _Text
    task: _Text
    start_path: str = Field(pattern=r"^/")
    kind: TaskKind
    criteria: Criteria
    notes: _Text | None = None
    correction: Correction | None = None
    playbook: Playbook | None = None
    """How the offline demo model decomposes this task (see `planner.models.offline`)."""

    @model_validator(mode="after")
    def _kind_needs(self) -> Self:
        """The fields a kind is about must be there: a repair says what fails, a bad decomposition how to fix it."""
        if self.kind in (TaskKind.REPAIR, TaskKind.OR_FALLBACK) and not self.notes:
            raise ValueError(f"a {self.kind.value} task must say in `notes` what fails")
        if (self.kind is TaskKind.WRONG_DECOMPOSITION) != (self.correction is not None):
            raise ValueError("`correction` is required for wrong_decomposition tasks and only for them")
        return self


class CriterionResult(_Frozen):
    passed: bool
    found: list[str]
    missing: list[str]


_TASK_LIST = TypeAdapter(list[DemoTask])


def load_tasks(path: Path | None = None) -> list[DemoTask]:
    """Read and validate a task file (by default the bundled demo/tasks.json)."""
    source = path or TASKS_PATH
    name = f"task file {shown(source)}"
    try:
        tasks = _TASK_LIST.validate_python(parse_json(read_text_file(source, TASKS_LIMIT)))
    except InputError as error:
        raise TaskError(f"cannot use {name}: {error}") from None
    except ValidationError as error:
        raise TaskError(
            f"{name} is not a list of tasks of the documented shape: {describe_validation_error(error)}"
        ) from None
    ids = [t.id for t in tasks]
    if duplicates := sorted({i for i in ids if ids.count(i) > 1}):
        raise TaskError(f"{name} has duplicate task ids: {', '.join(duplicates)}")
    return tasks


def select_tasks(tasks: list[DemoTask], only: list[str] | None) -> list[DemoTask]:
    """The tasks named in `only` (all of them when it is empty), refusing an id that names none."""
    known = {task.id for task in tasks}
    if unknown := [task_id for task_id in only or [] if task_id not in known]:
        raise TaskError(f"no task '{shown(unknown[0], 60)}'; choose from: {', '.join(sorted(known))}")
    return [task for task in tasks if not only or task.id in only]


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_answer(task: DemoTask, answer: str) -> CriterionResult:
    """Which of the task's required strings the answer contains, ignoring case and spacing."""
    text = _normalise(answer)
    found = [s for s in task.criteria.must_contain if _normalise(s) in text]
    missing = [s for s in task.criteria.must_contain if _normalise(s) not in text]
    return CriterionResult(passed=not missing, found=found, missing=missing)
