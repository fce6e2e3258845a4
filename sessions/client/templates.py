"""Plan templates in the session store: save a session's subtree as one, find one to inject, list,
delete, and carry them between stores as a JSON file (`TemplateFile`).

What a template is (its placeholders, what a saved subtree keeps) is `planner.templates`; this
module is where templates meet the store and the sessions. Saving never overwrites: a name saved
again gets its next version, and an import adds versions the same way (skipping any it already
holds), after the whole file has been checked. Every refusal is one sentence (`InputError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.inputs import InputError, describe_validation_error, parse_json, shown
from planner.templates import Template, parse_ref
from sessions.store import EventStore
from sessions.store.reading import load_state

__all__ = [
    "FILE_FORMAT",
    "MAX_FILE_BYTES",
    "Imported",
    "TemplateFile",
    "TemplateLibrary",
    "delete",
    "describe",
    "export_text",
    "import_text",
    "listing",
    "lookup",
    "newest",
    "save_subtree",
    "with_template",
]

FILE_FORMAT: Final = "andor-templates"
"""The `format` tag of an exported file, so a file of another kind is refused by name."""
MAX_FILE_BYTES = 5_000_000
"""An exported file of the most templates a file may hold fits well within this."""


class TemplateFile(BaseModel):
    """An exported set of templates: every version of each, oldest first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["andor-templates"] = FILE_FORMAT
    templates: list[Template] = Field(min_length=1, max_length=1000)


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import did: the templates it saved (with their new versions) and those the store already held."""

    saved: list[Template]
    unchanged: list[Template]


def lookup(store: EventStore, ref: str) -> Template:
    """The template `name` (newest version) or `name@version` names."""
    name, version = parse_ref(ref)
    found = store.template(name, version)
    if found is not None:
        return found
    if version is not None and store.template(name) is not None:
        versions = ", ".join(str(t.version) for t in store.templates(name))
        raise InputError(f"template {name} has no version {version}; its versions are {versions}")
    raise InputError(f"there is no template {name}; `python -m sessions template list` shows the templates")


def save_subtree(
    store: EventStore,
    session_id: str,
    node_id: str,
    name: str,
    values: Mapping[str, str] | None = None,
    *,
    description: str = "",
    children_only: bool = False,
) -> Template:
    """Save the session's subtree at `node_id` (see `Template.from_subtree`) as `name`'s next version."""
    state = load_state(store, session_id)
    template = Template.from_subtree(
        state.tree, node_id, name, values, description=description, children_only=children_only
    )
    return store.save_template(template)


def newest(store: EventStore) -> dict[str, list[Template]]:
    """Every template by name, its versions oldest first (`EventStore.templates` lists them so): the
    last of each is the one a bare name means."""
    versions: dict[str, list[Template]] = {}
    for template in store.templates():
        versions.setdefault(template.name, []).append(template)
    return versions


def listing(store: EventStore) -> list[dict[str, Any]]:
    """One row per name: its newest version's description, params and size, and every version it has."""
    return [
        {
            "name": name,
            "versions": [t.version for t in kept],
            "version": kept[-1].version,
            "description": kept[-1].description,
            "params": kept[-1].params,
            "nodes": kept[-1].size,
        }
        for name, kept in newest(store).items()
    ]


def delete(store: EventStore, ref: str) -> int:
    """Delete `name@version`, or every version of `name`; returns how many were deleted."""
    name, version = parse_ref(ref)
    lookup(store, ref)  # says which versions there are when the one named is not
    return store.delete_templates(name, version)


def export_text(store: EventStore, names: list[str] | None = None, *, indent: int | None = 2) -> str:
    """Every version of the templates named (default: all) as a `TemplateFile`'s JSON."""
    chosen = [template for template in store.templates() if not names or template.name in names]
    missing = sorted(set(names or ()) - {template.name for template in chosen})
    if missing:
        raise InputError(f"there is no template {missing[0]}; `python -m sessions template list` shows the templates")
    if not chosen:
        raise InputError("there are no templates to export; save one first")
    return TemplateFile(templates=chosen).model_dump_json(indent=indent)


def import_text(store: EventStore, text: str) -> Imported:
    """Save every template of an exported file as its name's next version, skipping any whose content
    a version in the store already has. The whole file is checked before anything is saved."""
    data = parse_json(text)
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        raise InputError(f"it is not a template file: an exported file is a JSON object with format {FILE_FORMAT!r}")
    try:
        document = TemplateFile.model_validate(data)
    except ValidationError as error:
        raise InputError(f"it is not a usable template file: {describe_validation_error(error)}") from None
    saved: list[Template] = []
    unchanged: list[Template] = []
    for template in document.templates:
        held = [stored.body() for stored in store.templates(template.name)]
        if template.body() in held:
            unchanged.append(template)
        else:
            saved.append(store.save_template(template))
    return Imported(saved, unchanged)


def with_template(store: EventStore, command: dict[str, Any]) -> dict[str, Any]:
    """An inject command whose `template` names a stored one (`name` or `name@version`) with that
    template in its place, checked against the command's `params` so that an unknown or missing
    parameter is refused before anything is queued. Any other command is returned as it is."""
    ref = command.get("template")
    if command.get("kind") != "inject" or not isinstance(ref, str):
        return command
    template = lookup(store, ref)
    template.fill(command.get("params") or {})
    return {**command, "template": template.model_dump(mode="json")}


def describe(template: Template) -> str:
    """A template as the console lists it: "name v2 (brand, max_price): 5 nodes"."""
    params = f" ({', '.join(template.params)})" if template.params else ""
    return f"{shown(template.name, 80)} v{template.version}{params}: {template.size} nodes"


class TemplateLibrary:
    """The store's templates as a client uses them: this module's functions, bound to one store."""

    def __init__(self, store: EventStore) -> None:
        self._store = store

    def lookup(self, ref: str) -> Template:
        return lookup(self._store, ref)

    def save_subtree(
        self,
        session_id: str,
        node_id: str,
        name: str,
        values: Mapping[str, str] | None = None,
        *,
        description: str = "",
        children_only: bool = False,
    ) -> Template:
        return save_subtree(
            self._store, session_id, node_id, name, values, description=description, children_only=children_only
        )

    def newest(self) -> dict[str, list[Template]]:
        return newest(self._store)

    def listing(self) -> list[dict[str, Any]]:
        return listing(self._store)

    def delete(self, ref: str) -> int:
        return delete(self._store, ref)

    def export_text(self, names: list[str] | None = None, *, indent: int | None = 2) -> str:
        return export_text(self._store, names, indent=indent)

    def import_text(self, text: str) -> Imported:
        return import_text(self._store, text)

    def with_template(self, command: dict[str, Any]) -> dict[str, Any]:
        return with_template(self._store, command)
