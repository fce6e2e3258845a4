"""Bundled tasks: what an application that ships tasks gives a session started on one of them.

Sessions ship no tasks. An application that does (the demo) offers a `Catalogue`, and whoever creates a
session passes the entry for its task (`create_session(bundled=...)`): the secrets the task declares,
the request rules its site needs, the offline model's playbook for it, and the strings a right answer
contains. The entry points people use (the CLI, the console) load the catalogue `ANDOR_CATALOGUE`
names, `module:attribute`; by default the demo's, when it is there.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from planner.effects import RequestRule
from planner.inputs import shown
from planner.models.offline import Playbook
from sessions.errors import SessionInputError

__all__ = ["CATALOGUE_VARIABLE", "DEFAULT_CATALOGUE", "Bundled", "Catalogue", "Listed", "NoCatalogue", "configured"]

CATALOGUE_VARIABLE = "ANDOR_CATALOGUE"
DEFAULT_CATALOGUE = "demo.tasks:CATALOGUE"
"""The bundled demo's tasks; an empty `ANDOR_CATALOGUE` means none."""


@dataclass(frozen=True)
class Bundled:
    """What a catalogue knows of one task."""

    secrets: Mapping[str, str] = field(default_factory=dict)
    request_rules: tuple[RequestRule, ...] = ()
    playbook: Playbook | None = None
    expectations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Listed:
    """A bundled task as a picker offers it."""

    label: str
    task: str
    start_path: str
    """Where on its site it starts ("/search?q=..."), joined to the site's address by the front end."""


class Catalogue(Protocol):
    def tasks(self) -> Sequence[Listed]:
        """Every task the catalogue bundles, in the order a picker shows them."""
        ...

    def bundled(self, task: str, start_url: str | None) -> Bundled | None:
        """The entry for `task` started at `start_url`, or None when the catalogue does not have it."""
        ...


class NoCatalogue:
    """No bundled tasks: every task is the operator's own."""

    def tasks(self) -> Sequence[Listed]:
        return ()

    def bundled(self, task: str, start_url: str | None) -> Bundled | None:
        return None


def configured() -> Catalogue:
    """The catalogue `ANDOR_CATALOGUE` names (default: the demo's, if it can be imported; else none).

    A name that is set but cannot be loaded is refused in one sentence rather than ignored: sessions
    started without their playbooks and secrets would fail later, and further from the cause."""
    spec = os.environ.get(CATALOGUE_VARIABLE)
    name, _, attribute = (DEFAULT_CATALOGUE if spec is None else spec).partition(":")
    if not name:
        return NoCatalogue()
    try:
        module = importlib.import_module(name)
    except ImportError:
        if spec is None:
            return NoCatalogue()
        raise SessionInputError(f"{CATALOGUE_VARIABLE} names module '{shown(name, 80)}', which cannot be imported")
    catalogue = getattr(module, attribute or "CATALOGUE", None)
    if catalogue is None or not callable(getattr(catalogue, "bundled", None)):
        raise SessionInputError(
            f"{CATALOGUE_VARIABLE}: '{shown(name, 80)}' has no catalogue '{shown(attribute or 'CATALOGUE', 80)}'"
        )
    return catalogue
