"""The demo tasks that run against the bundled shop, and a check of an agent's final answer.

Each task names the strings a correct final answer must contain (product names, prices). The
check is deliberately simple, substring matching after case-folding and collapsing whitespace, so
an operator can see at a glance why an answer passed or failed.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from planner.answers import AnswerCheck
from planner.answers import check_answer as check_required
from planner.browser.dry import is_dry
from planner.effects import RequestRule
from planner.guard import url_host
from planner.inputs import InputError, describe_validation_error, parse_json, read_text_file, shown
from planner.models.offline import Playbook
from planner.secrets import placeholders
from sessions.catalogue import Bundled, Listed

__all__ = [
    "CATALOGUE",
    "CORRECTED_KINDS",
    "TASKS_PATH",
    "Correction",
    "Criteria",
    "DemoTask",
    "DemoTasks",
    "TaskError",
    "TaskKind",
    "Trouble",
    "check_answer",
    "load_tasks",
    "select_tasks",
    "shop_request_rules",
]

TASKS_PATH = Path(__file__).with_name("tasks.json")

SHOP_RULES_PATH = Path(__file__).parent / "shop" / "request_rules.json"
"""The shop's own request policy: the requests of its forms that change nothing an operator must approve."""

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
    """A naive plan assumes a fact it should look up, or trusts a label; the operator corrects the plan."""
    MISSED_CONSTRAINT = "missed_constraint"
    """The plan drops one of the task's conditions (in stock, under $60, the real price); the operator adds it."""
    DEAD_END = "dead_end"
    """The plan runs into a wall it has no way around (no results, a login, page 1 only); the operator opens a way."""


CORRECTED_KINDS = frozenset({TaskKind.WRONG_DECOMPOSITION, TaskKind.MISSED_CONSTRAINT, TaskKind.DEAD_END})
"""Kinds the offline model gets wrong on purpose; each such task records the operator's `correction`."""


class Trouble(StrEnum):
    """The shop behaviours (demo/README.md) a task runs into, so results can be read by kind of trouble."""

    UNLISTED_CATEGORY = "unlisted_category"
    BROKEN_FILTER = "broken_filter"
    IGNORED_FILTER = "ignored_filter"
    PAGINATION = "pagination"
    SALE_BADGE = "sale_badge"
    OUT_OF_STOCK = "out_of_stock"
    STALE_LISTING_PRICE = "stale_listing_price"
    CONSENT_MODAL = "consent_modal"
    SLOW_PAGE = "slow_page"
    LOGIN_WALL = "login_wall"
    SEARCH_VOCABULARY = "search_vocabulary"
    GUARDED_ACTION = "guarded_action"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Criteria(_Frozen):
    must_contain: list[_Text] = Field(min_length=1)


_NodeId = Annotated[str, Field(pattern=r"^0(\.[1-9][0-9]*)*$")]


class Correction(_Frozen):
    """The operator's small fix for a task the offline model gets wrong: one console command.

    It applies to the naive plan as the operator first sees it, paused after the session's first two
    steps (the task's constraints, then the root's expansion). `inject` (the default kind) adds
    `goals` under `parent` at `position`; `edit` rewrites the unexpanded `node` to `description`.
    """

    kind: Literal["inject", "edit"] = "inject"
    parent: _NodeId | None = None
    position: int | None = Field(default=None, ge=0)
    goals: list[_Text] = Field(default_factory=list)
    node: _NodeId | None = None
    description: _Text | None = None

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Self:
        """An inject names a parent and goals, an edit a node and a description, and neither the other's."""
        wanted: tuple[object, ...]
        unwanted: tuple[object, ...]
        if self.kind == "inject":
            wanted, unwanted = (self.parent, self.goals), (self.node, self.description)
        else:
            wanted, unwanted = (self.node, self.description), (self.parent, self.goals or None, self.position)
        if not all(wanted) or any(value is not None for value in unwanted):
            raise ValueError(
                "an inject correction takes parent, goals and an optional position; an edit takes node and description"
            )
        return self

    def command(self) -> dict[str, object]:
        """The command payload to queue (`sessions.client.commands.queue_command`), as the console would send it."""
        if self.kind == "edit":
            return {"kind": "edit", "node": self.node, "description": self.description, "reexpand": True}
        return {"kind": "inject", "parent": self.parent, "goals": list(self.goals), "position": self.position}


class DemoTask(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    title: _Text
    task: _Text
    secrets: dict[str, str] = Field(default_factory=dict)
    """The values of the `{{NAME}}` placeholders the task writes (`planner.secrets`): the shop's demo
    account's password, which the browser types and no person, file or model is shown."""
    start_path: str = Field(pattern=r"^/")
    kind: TaskKind
    criteria: Criteria
    notes: _Text | None = None
    trouble: list[Trouble] = Field(default_factory=list)
    """The shop behaviours the task runs into."""
    correction: Correction | None = None
    playbook: Playbook | None = None
    """How the offline demo model decomposes this task (see `planner.models.offline`)."""

    @model_validator(mode="after")
    def _kind_needs(self) -> Self:
        """The fields a kind is about must be there: a repair says what fails, a bad decomposition how to fix it."""
        if self.kind in (TaskKind.REPAIR, TaskKind.OR_FALLBACK) and not self.notes:
            raise ValueError(f"a {self.kind.value} task must say in `notes` what fails")
        if missing := [name for name in placeholders(self.task) if name not in self.secrets]:
            raise ValueError(f"the task writes {{{{{missing[0]}}}}}; give its value in `secrets`")
        if (self.kind in CORRECTED_KINDS) != (self.correction is not None):
            kinds = ", ".join(sorted(CORRECTED_KINDS))
            raise ValueError(f"`correction` is required for {kinds} tasks and only for them")
        return self


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


_RULE_LIST = TypeAdapter(list[RequestRule])


def shop_request_rules(start_url: str) -> tuple[RequestRule, ...]:
    """The bundled shop's request rules, bound to the host a session starts on: its cookie choice
    (POST /consent) and its sign-in (POST /login) change nothing an operator must approve, while
    adding to the cart, removing from it and placing an order stay held (or approved by name)."""
    host = url_host(start_url) or "*"
    rules = _RULE_LIST.validate_python(parse_json(read_text_file(SHOP_RULES_PATH, TASKS_LIMIT)))
    return tuple(rule.model_copy(update={"host": host}) for rule in rules)


class DemoTasks:
    """The bundled tasks as a session catalogue (`sessions.catalogue`): a session whose task is one of them
    gets its secrets, its playbook and its answer's expected strings, and, in a browser, the shop's rules."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path

    def tasks(self) -> list[Listed]:
        return [Listed(f"{t.title} ({t.kind.value})", t.task, t.start_path) for t in load_tasks(self._path)]

    def bundled(self, task: str, start_url: str | None) -> Bundled | None:
        found = next((t for t in load_tasks(self._path) if t.task == task), None)
        if found is None:
            return None
        in_browser = start_url is not None and not is_dry(start_url)
        return Bundled(
            secrets=dict(found.secrets),
            request_rules=shop_request_rules(start_url or "") if in_browser else (),
            playbook=found.playbook,
            expectations=tuple(found.criteria.must_contain),
        )


CATALOGUE = DemoTasks()
"""What `ANDOR_CATALOGUE` names by default."""


def select_tasks(tasks: list[DemoTask], only: list[str] | None) -> list[DemoTask]:
    """The tasks named in `only` (all of them when it is empty), refusing an id that names none."""
    known = {task.id for task in tasks}
    if unknown := [task_id for task_id in only or [] if task_id not in known]:
        raise TaskError(f"no task '{shown(unknown[0], 60)}'; choose from: {', '.join(sorted(known))}")
    return [task for task in tasks if not only or task.id in only]


def check_answer(task: DemoTask, answer: str | None) -> AnswerCheck:
    """Which of the task's required strings the answer contains (`planner.answers`, the one rule)."""
    return check_required(task.criteria.must_contain, answer)
