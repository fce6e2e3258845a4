"""The browser action vocabulary, defined once.

Parsing turns an action string into a typed action or raises `ActionSyntaxError` with a message a
model (or a person) can act on. The prompt's action list is generated from `VOCABULARY`, so the
grammar the model is told and the grammar the parser accepts cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, Field

from planner.errors import PlannerError

__all__ = [
    "VOCABULARY",
    "Action",
    "ActionSyntaxError",
    "Click",
    "GoBack",
    "Goto",
    "Hover",
    "Note",
    "Scroll",
    "Select",
    "Type",
    "describe_actions",
    "is_note",
    "leading_actions",
    "note_text",
    "parse_action",
]


class ActionSyntaxError(PlannerError):
    """An action string that is not one of the vocabulary's forms."""


class Click(BaseModel):
    kind: Literal["click"] = "click"
    element: int


class Hover(BaseModel):
    kind: Literal["hover"] = "hover"
    element: int


class Type(BaseModel):
    kind: Literal["type"] = "type"
    element: int
    text: str
    enter: bool = True


class Select(BaseModel):
    kind: Literal["select"] = "select"
    element: int
    option: str


class Scroll(BaseModel):
    kind: Literal["scroll"] = "scroll"
    direction: Literal["up", "down"]


class GoBack(BaseModel):
    kind: Literal["go_back"] = "go_back"


class Goto(BaseModel):
    kind: Literal["goto"] = "goto"
    url: str = Field(min_length=1)


class Note(BaseModel):
    kind: Literal["note"] = "note"
    text: str = Field(min_length=1)


Action = Annotated[Click | Hover | Type | Select | Scroll | GoBack | Goto | Note, Field(discriminator="kind")]

VOCABULARY: dict[str, tuple[str, str]] = {
    "click": ("click [id]", "click the element with this id"),
    "hover": ("hover [id]", "move the pointer over an element, to open a menu that shows on hover"),
    "type": ("type [id] [text] [1|0]", "type text into a field; 1 presses Enter afterwards (default), 0 does not"),
    "select": ("select [id] [option]", "choose an option of a drop-down by its visible text"),
    "scroll": ("scroll [up|down]", "scroll the page by one screen"),
    "go_back": ("go_back", "return to the previous page"),
    "goto": ("goto [url]", "open a URL"),
    "note": ("note [text]", "record a fact needed for the answer; does not touch the page"),
}


def describe_actions() -> str:
    """The action list as a model prompt shows it."""
    return "\n".join(f"- {usage}: {meaning}" for usage, meaning in VOCABULARY.values())


def _groups(rest: str) -> list[str]:
    """Split `[a] [b c] [d]` into its bracketed parts; brackets may nest inside a part."""
    groups: list[str] = []
    depth, start = 0, -1
    for i, char in enumerate(rest):
        if char == "[":
            if depth == 0:
                start = i + 1
            depth += 1
        elif char == "]" and depth > 0:
            depth -= 1
            if depth == 0:
                groups.append(rest[start:i])
        elif depth == 0 and not char.isspace():
            raise ActionSyntaxError(f"unexpected text {rest[i:]!r} outside brackets")
    if depth:
        raise ActionSyntaxError("unclosed '['")
    return groups


def _element(value: str, verb: str) -> int:
    value = value.strip()
    if not value.isdigit():
        raise ActionSyntaxError(f"{verb}: element id must be a number, got {value!r}")
    return int(value)


def parse_action(text: str) -> Click | Hover | Type | Select | Scroll | GoBack | Goto | Note:
    """Parse one action string, e.g. ``type [12] [wireless mouse] [1]``."""
    text = text.strip()
    verb, _, rest = text.partition(" ")
    verb = verb.lower()
    if verb == "note":
        body = rest.strip()
        if body.startswith("[") and body.endswith("]"):
            body = body[1:-1]
        if not body.strip():
            raise ActionSyntaxError("note: needs text, as in note [the cheapest is $12]")
        return Note(text=body.strip())
    if verb not in VOCABULARY:
        known = ", ".join(VOCABULARY)
        raise ActionSyntaxError(f"unknown action {verb!r}; use one of: {known}")
    groups = _groups(rest)
    usage = VOCABULARY[verb][0]
    if verb == "go_back":
        if groups:
            raise ActionSyntaxError("go_back takes no arguments")
        return GoBack()
    if verb == "click" and len(groups) == 1:
        return Click(element=_element(groups[0], verb))
    if verb == "hover" and len(groups) == 1:
        return Hover(element=_element(groups[0], verb))
    if verb == "type" and len(groups) in (2, 3):
        enter = True
        if len(groups) == 3:
            if groups[2].strip() not in ("0", "1"):
                raise ActionSyntaxError(f"type: last argument must be 1 or 0, got {groups[2]!r}")
            enter = groups[2].strip() == "1"
        return Type(element=_element(groups[0], verb), text=groups[1], enter=enter)
    if verb == "select" and len(groups) == 2:
        return Select(element=_element(groups[0], verb), option=groups[1].strip())
    if verb == "scroll" and len(groups) == 1 and groups[0].strip().lower() in ("up", "down"):
        return Scroll(direction=groups[0].strip().lower())  # type: ignore[arg-type]
    if verb == "goto" and len(groups) == 1 and groups[0].strip():
        return Goto(url=groups[0].strip())
    raise ActionSyntaxError(f"{verb}: expected `{usage}`, got {text!r}")


def is_note(action: str) -> bool:
    """Note actions leave the page as it was, so the engine skips summary and tree update."""
    return action.strip().split(" ", 1)[0].lower() == "note"


GoalT = TypeVar("GoalT")


def leading_actions(goals: Iterable[GoalT], ground: Callable[[GoalT], str | None]) -> list[tuple[GoalT, str]]:
    """The goals that can be planned ahead on the current page, each with its action, in order.

    Grounding stops at the first goal `ground` cannot turn into one action, and after the first
    action that changes the page: ids in later actions would belong to a page not seen yet. Notes
    leave the page as it was, so planning goes on past them.
    """
    planned: list[tuple[GoalT, str]] = []
    for goal in goals:
        action = ground(goal)
        if action is None:
            break
        planned.append((goal, action))
        if not is_note(action):
            break
    return planned


def note_text(action: str) -> str:
    try:
        parsed = parse_action(action)
    except ActionSyntaxError:
        return action.strip()[4:].strip()
    return parsed.text if isinstance(parsed, Note) else action
