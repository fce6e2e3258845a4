"""Plan templates: a decomposition an operator fixed once, saved with parameters and injected again.

A template is a list of goals (description, type, optional score, sub-goals) whose descriptions may
hold `{param}` placeholders. Saving one from a subtree (`Template.from_subtree`) turns only the
values the operator names into placeholders; injecting one (`planner.commands.Inject` with a
template) fills them (`Template.fill`) and records where the nodes came from (`TemplateRef`). The
session store keeps every version of a name (`sessions.client.templates`); this module is pure.

Placeholders are `{name}` only (no format specs, no attribute access); `{{` and `}}` are literal
braces, so a node whose own text holds braces is saved escaped and comes back as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.inputs import InputError, describe_validation_error, shown
from planner.status import REMOVED
from planner.tree import Node, NodeType, Status, TemplateRef, Tree

__all__ = ["MAX_DEPTH", "MAX_GOALS", "GoalType", "Template", "TemplateGoal", "parse_ref", "parse_values"]

MAX_GOALS = 200
"""Goals in one template, at every level together: an inject adds them all in one edit."""
MAX_DEPTH = 8
"""Levels of sub-goals below a template's top goals."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")
_PARAM = r"[A-Za-z_][A-Za-z0-9_]{0,39}"
_PARAM_NAME = re.compile(_PARAM)
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(" + _PARAM + r")\}")
_LEFT_OUT = REMOVED | {Status.FAIL}
"""Children a saved template leaves out: what the plan no longer holds, and what failed."""

GoalType = Literal["AND", "OR", "UNKNOWN"]


def _name(text: str) -> str:
    """A name the command line can spell, with no '@' (which starts a version: `name@2`)."""
    if not _NAME.fullmatch(text):
        raise ValueError(
            f"'{shown(text, 40)}' is not a template name: use letters, digits, '_', '.' or '-' "
            "(at most 80), starting with a letter or digit"
        )
    return text


def _param(text: str) -> str:
    if not _PARAM_NAME.fullmatch(text):
        raise ValueError(
            f"'{shown(text, 40)}' is not a parameter name: use a letter or '_' followed by letters, digits or '_'"
        )
    return text


def _not_blank(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValueError("cannot be blank; write some text")
    return text


TemplateName = Annotated[str, AfterValidator(_name)]
ParamName = Annotated[str, AfterValidator(_param)]


class TemplateGoal(BaseModel):
    """One goal of a template: UNKNOWN (the planner expands it when it gets there) or an AND/OR with
    its sub-goals. `score` ranks it among the alternatives of an OR (None: the operator's default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_not_blank)]
    type: GoalType = "UNKNOWN"
    score: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    children: list[TemplateGoal] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _typed_by_children(self) -> TemplateGoal:
        """A goal's type says how its sub-goals combine, so a goal has sub-goals exactly when it is AND or OR."""
        if self.children and self.type == "UNKNOWN":
            raise ValueError(f"'{shown(self.description, 40)}' has sub-goals, so its type must be AND or OR")
        if not self.children and self.type != "UNKNOWN":
            raise ValueError(
                f"'{shown(self.description, 40)}' is {self.type} but has no sub-goals; give it some or make it UNKNOWN"
            )
        return self

    def walk(self) -> Iterator[TemplateGoal]:
        """This goal and every goal below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def depth(self) -> int:
        return 1 + max((child.depth() for child in self.children), default=0)


class Template(BaseModel):
    """A named, versioned plan fragment with `{param}` placeholders (its `params`, each used somewhere)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: TemplateName
    version: int = Field(default=1, ge=1, le=1_000_000)
    description: str = Field(default="", max_length=2000)
    params: list[ParamName] = Field(default_factory=list, max_length=20)
    goals: list[TemplateGoal] = Field(min_length=1, max_length=50)

    @model_validator(mode="after")
    def _consistent(self) -> Template:
        goals = [goal for top in self.goals for goal in top.walk()]
        if len(goals) > MAX_GOALS:
            raise ValueError(f"it has {len(goals)} goals; a template holds at most {MAX_GOALS}")
        if max(top.depth() for top in self.goals) > MAX_DEPTH + 1:
            raise ValueError(f"its goals nest more than {MAX_DEPTH} levels deep")
        twice = sorted({p for p in self.params if self.params.count(p) > 1})
        if twice:
            raise ValueError(f"parameter {twice[0]} is declared twice")
        used = {name for goal in goals for name in _placeholders(goal.description)}
        undeclared = sorted(used - set(self.params))
        if undeclared:
            raise ValueError(f"a goal uses {{{undeclared[0]}}}, which is not one of the template's parameters")
        unused = [p for p in self.params if p not in used]
        if unused:
            raise ValueError(f"parameter {unused[0]} is used by no goal; write {{{unused[0]}}} in a goal or drop it")
        return self

    @property
    def ref(self) -> TemplateRef:
        return TemplateRef(self.name, self.version)

    @property
    def size(self) -> int:
        """How many nodes an inject of it adds."""
        return sum(1 for top in self.goals for _ in top.walk())

    def body(self) -> dict[str, object]:
        """What makes two versions the same template: everything but the version."""
        return self.model_dump(mode="json", exclude={"version"})

    def fill(self, values: Mapping[str, str]) -> list[TemplateGoal]:
        """The goals with every placeholder replaced by its value; `InputError` names an unknown
        parameter or one left without a value."""
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            known = ", ".join(self.params) or "none"
            raise InputError(f"template {self.name} has no parameter {unknown[0]} (its parameters: {known})")
        missing = [p for p in self.params if not values.get(p, "").strip()]
        if missing:
            raise InputError(f"template {self.name} needs a value for {missing[0]}: give it as {missing[0]}=VALUE")
        try:
            return [TemplateGoal.model_validate(_filled(goal, values)) for goal in self.goals]
        except ValidationError as error:
            raise InputError(
                f"template {self.name} filled in cannot be injected: {describe_validation_error(error)}"
            ) from None

    @classmethod
    def from_subtree(
        cls,
        tree: Tree,
        node_id: str,
        name: str,
        values: Mapping[str, str] | None = None,
        description: str = "",
        children_only: bool = False,
    ) -> Template:
        """The subtree at `node_id` (or, with `children_only`, its sub-goals) as a template, each of
        `values` (param -> literal text) made a placeholder wherever the text holds it.

        Left out: children that failed or were pruned or deleted. An action becomes an UNKNOWN goal
        with its description (its action names page elements, which differ next time); an AND or OR
        left with no children becomes UNKNOWN. Raises `InputError` with one sentence.
        """
        node = tree.get(node_id)
        if node is None:
            raise InputError(f"there is no node {shown(node_id, 40)} in this session")
        values = dict(values or {})
        for param, value in values.items():
            _bad_param(param)
            if not value.strip():
                raise InputError(f"parameter {param} has no value; write it as {param}=TEXT")
        same = [p for p in values if list(values.values()).count(values[p]) > 1]
        if same:
            raise InputError(f"parameters {' and '.join(same[:2])} have the same value; give each its own")
        if children_only:
            kept = _kept(tree, node)
            if not kept:
                raise InputError(f"{node.id} has no sub-goals to save; save the node itself instead")
            goals = [_goal(tree, child, node.type is NodeType.OR) for child in kept]
        else:
            goals = [_goal(tree, node, False)]
        texts = [text for top in goals for text in _texts(top)]
        absent = [p for p, value in values.items() if not any(value in text for text in texts)]
        if absent:
            raise InputError(
                f"'{shown(values[absent[0]], 40)}' ({absent[0]}) occurs nowhere in {node.id}'s subtree; "
                "give a value its text contains"
            )
        data = {
            "name": name,
            "description": description,
            "params": list(values),
            "goals": [_parametrised(goal, values) for goal in goals],
        }
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise InputError(f"cannot save it as a template: {describe_validation_error(error)}") from None


def _bad_param(param: str) -> None:
    """`InputError` for a parameter name an operator typed that cannot be one."""
    try:
        _param(param)
    except ValueError as error:
        raise InputError(str(error)) from None


def _placeholders(text: str) -> Iterator[str]:
    for match in _PLACEHOLDER.finditer(text):
        if match[1]:
            yield match[1]


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _filled(goal: TemplateGoal, values: Mapping[str, str]) -> dict[str, object]:
    text = _PLACEHOLDER.sub(lambda m: values[m[1]] if m[1] else m[0][0], goal.description)
    return {
        "description": text,
        "type": goal.type,
        "score": goal.score,
        "children": [_filled(child, values) for child in goal.children],
    }


def _kept(tree: Tree, node: Node) -> list[Node]:
    if node.type not in (NodeType.AND, NodeType.OR):
        return []
    return [child for child in tree.children(node) if child.status not in _LEFT_OUT]


def _goal(tree: Tree, node: Node, scored: bool) -> dict[str, object]:
    """A node and its kept children as template data (not yet validated: the limits apply to the whole)."""
    children = [_goal(tree, child, node.type is NodeType.OR) for child in _kept(tree, node)]
    return {
        "description": node.description,
        "type": node.type.value if children else "UNKNOWN",
        "score": node.score if scored else None,
        "children": children,
    }


def _texts(goal: dict[str, object]) -> Iterator[str]:
    """The descriptions of a goal's data and of everything below it."""
    yield str(goal["description"])
    for child in goal["children"]:  # type: ignore[attr-defined]
        yield from _texts(child)


def _parametrised(goal: dict[str, object], values: Mapping[str, str]) -> dict[str, object]:
    """The goal's texts escaped, with each value replaced by its placeholder (longer values first, so
    one value inside another is never cut)."""
    ordered = sorted(values.items(), key=lambda item: len(item[1]), reverse=True)
    pattern = re.compile("|".join(re.escape(_escape(value)) for _, value in ordered)) if ordered else None
    by_value = {_escape(value): param for param, value in ordered}

    def convert(data: dict[str, object]) -> dict[str, object]:
        text = _escape(str(data["description"]))
        if pattern is not None:
            text = pattern.sub(lambda m: "{" + by_value[m[0]] + "}", text)
        return {**data, "description": text, "children": [convert(c) for c in data["children"]]}  # type: ignore[attr-defined]

    return convert(goal)


def parse_ref(text: str) -> tuple[str, int | None]:
    """`name` or `name@version` as (name, version or None for the newest); `InputError` otherwise."""
    name, at, version = text.strip().partition("@")
    try:
        _name(name)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not at:
        return name, None
    if not version.isdigit() or not 1 <= int(version) <= 1_000_000:
        raise InputError(f"'{shown(text, 60)}' has no version after '@'; write {name} or {name}@2")
    return name, int(version)


def parse_values(lines: list[str]) -> dict[str, str]:
    """`name=value` lines (blank ones skipped) as a dict; `InputError` for a line without `=`, a bad
    name or a name given twice."""
    values: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            continue
        name, eq, value = line.partition("=")
        name = name.strip()
        if not eq:
            raise InputError(f"'{shown(line, 40)}' is not name=value; write e.g. brand=Northwind")
        _bad_param(name)
        if name in values:
            raise InputError(f"parameter {name} is given twice; give it once")
        values[name] = value.strip()
    return values
