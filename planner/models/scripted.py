"""A model that answers from a script: for rehearsals, tests and benchmarks.

The script is JSON (see `Script`). Its answers depend only on the script and the tree, never on
hidden counters, so a session resumed after a crash gets the same answers it would have had.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.actions import leading_actions
from planner.errors import ModelOutputError, ScriptError
from planner.frames import upcoming
from planner.inputs import InputError, describe_validation_error, parse_json, read_text_file, shown
from planner.latency import Latency
from planner.questions import (
    ChildSpec,
    Completion,
    Constraints,
    Expansion,
    FinalAnswer,
    Observation,
    Proposal,
    Question,
    Repair,
    Reply,
    View,
)
from planner.status import CLOSED
from planner.tree import Node, Tree

__all__ = ["NodeScript", "RepairScript", "Script", "ScriptedModel", "UpdateScript", "load_script"]


class _Strict(BaseModel):
    """A misspelt key in a script is an error, not a silently ignored entry."""

    model_config = ConfigDict(extra="forbid")


class NodeScript(_Strict):
    type: Literal["AND", "OR", "ACTION"]
    children: list[str | ChildSpec] = Field(default_factory=list)
    action: str | None = None


class RepairScript(_Strict):
    prune: list[str] = Field(default_factory=list)
    add: list[str | ChildSpec] = Field(default_factory=list)


class UpdateScript(_Strict):
    prune: list[str] = Field(default_factory=list)
    rewrite: dict[str, str] = Field(default_factory=dict)


class Script(_Strict):
    """What the scripted model answers, keyed by node description or action text.

    `repairs` takes one repair or a list, the n-th used for the node's n-th revision; `incomplete`
    lists descriptions whose completion check fails, once per listing. Observations plan ahead the
    scripted actions of upcoming nodes, as far as the first one that is not a note. `instructions`
    maps an operator's instruction (a counterfactual re-ask, `sessions.client.counterfactual`) to the
    answers that replace these while it is given: its `nodes`, `repairs`, `updates` and `notes`
    entries override the same keys here. `latency` makes every answer (and, in the dry environment,
    every action) take as long as a real one would (`planner.latency`).
    """

    constraints: list[str] = Field(default_factory=list)
    nodes: dict[str, NodeScript] = Field(default_factory=dict)
    fail_actions: list[str] = Field(default_factory=list)
    repairs: dict[str, RepairScript | list[RepairScript]] = Field(default_factory=dict)
    incomplete: list[str] = Field(default_factory=list)
    updates: dict[str, UpdateScript] = Field(default_factory=dict)
    notes: dict[str, list[str]] = Field(default_factory=dict)
    final_answer: str | None = None
    instructions: dict[str, Script] = Field(default_factory=dict)
    latency: Latency | None = None

    def instructed(self, instruction: str) -> Script:
        """The script as answered under `instruction`; `ScriptError` when it scripts no such instruction."""
        overlay = self.instructions.get(instruction.strip())
        if overlay is None:
            known = ", ".join(repr(text) for text in self.instructions) or "none"
            raise ScriptError(
                f"the script has no answers for the instruction '{shown(instruction, 80)}' (it scripts {shown(known, 200)}); "
                'add them under "instructions"'
            )
        return self.model_copy(
            update={
                "nodes": {**self.nodes, **overlay.nodes},
                "repairs": {**self.repairs, **overlay.repairs},
                "updates": {**self.updates, **overlay.updates},
                "notes": {**self.notes, **overlay.notes},
                "instructions": {},
            }
        )

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a script file (see `load_script` for what is refused)."""
        return _validated(f"script file {shown(path)}", lambda: read_text_file(path, SCRIPT_LIMIT))


def _child(spec: str | ChildSpec) -> ChildSpec:
    return ChildSpec(description=spec) if isinstance(spec, str) else spec


def _open_by_description(tree: Tree, description: str, among: list[Node] | None = None) -> Node:
    for node in among if among is not None else tree.walk():
        if node.description == description and node.status not in CLOSED:
            return node
    raise ModelOutputError(f"the script names {description!r}, which is not an open node")


class ScriptedModel:
    """Implements `planner.protocols.Model` from a `Script`."""

    def __init__(self, script: Script, name: str = "script") -> None:
        self.script = script
        self.name = name

    def instructed(self, instruction: str) -> ScriptedModel:
        """This model answering as its script does under an operator's instruction (`Script.instructed`)."""
        return ScriptedModel(self.script.instructed(instruction), name=self.name)

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        self._wait(Question.CONSTRAINTS, view)
        return Reply(Constraints(task=self.script.constraints))

    def expand(self, view: View) -> Reply[Expansion]:
        self._wait(Question.EXPAND, view)
        entry = self.script.nodes.get(view.node.description)
        if entry is None:
            raise ModelOutputError(f"the script has no expansion for {view.node.description!r}")
        try:
            expansion = Expansion(type=entry.type, children=[_child(c) for c in entry.children], action=entry.action)
        except ValidationError as error:
            raise ModelOutputError(f"scripted expansion is invalid: {error.errors()[0]['msg']}") from None
        return Reply(expansion)

    def repair(self, view: View, reason: str) -> Reply[Repair]:
        self._wait(Question.REPAIR, view)
        entry = self.script.repairs.get(view.node.description)
        if isinstance(entry, list):
            entry = entry[view.node.revisions] if view.node.revisions < len(entry) else None
        if entry is None:
            return Reply(Repair(reasoning=f"the script has no repair for {view.node.description!r}"))
        children = view.tree.children(view.node)
        prune = [_open_by_description(view.tree, d, children).id for d in entry.prune]
        return Reply(Repair(prune=prune, add=[_child(c) for c in entry.add], reasoning="scripted repair"))

    def check_completion(self, view: View) -> Reply[Completion]:
        self._wait(Question.COMPLETE, view)
        listed = self.script.incomplete.count(view.node.description)
        if listed > view.node.revisions:
            return Reply(Completion(complete=False, reason="the script marks this incomplete"))
        answer = self._answer(view) if view.node.parent is None else None
        return Reply(Completion(complete=True, reason="all sub-goals succeeded", answer=answer))

    def observe(self, view: View, action: str) -> Reply[Observation]:
        self._wait(Question.OBSERVE, view)
        notes = self.script.notes.get(action, [])
        entry = self.script.updates.get(action)
        observation = Observation(summary=f"page after {action}", notes=notes, ahead=self._ahead(view))
        if entry is None:
            return Reply(observation)
        tree = view.tree
        prune = [_open_by_description(tree, d).id for d in entry.prune]
        rewrite = {_open_by_description(tree, d).id: new for d, new in entry.rewrite.items()}
        ahead = [p for p in observation.ahead if p.node not in prune and p.node not in rewrite]
        return Reply(observation.model_copy(update={"prune": prune, "rewrite": rewrite, "ahead": ahead}))

    def _wait(self, question: Question, view: View) -> None:
        """Take as long as the script's `latency` says a real model would."""
        if self.script.latency is not None:
            time.sleep(self.script.latency.model_delay(question.value, view.node.id))

    def _ahead(self, view: View) -> list[Proposal]:
        def scripted_action(node: Node) -> str | None:
            entry = self.script.nodes.get(node.description)
            return entry.action if entry is not None and entry.type == "ACTION" else None

        planned = leading_actions(upcoming(view.tree, view.node, view.lookahead), scripted_action)
        return [Proposal(node=node.id, action=action) for node, action in planned]

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        self._wait(Question.FINAL_ANSWER, view)
        return Reply(FinalAnswer(answer=self._answer(view)))

    def _answer(self, view: View) -> str:
        if self.script.final_answer is not None:
            return self.script.final_answer
        return "; ".join(view.notes) if view.notes else "no notes were taken"


SCRIPT_LIMIT = 2_000_000
"""Bytes a script may have; the largest bundled one is under 2 KB."""


def load_script(text_or_path: str) -> Script:
    """Accept a path to a JSON file or inline JSON (useful from the CLI).

    Anything that is not a script of the documented shape raises `ScriptError` with one sentence
    that says why (a directory, a FIFO, an empty or huge file, invalid JSON, a misspelt field).
    """
    if text_or_path.lstrip().startswith("{"):
        if len(text_or_path) > SCRIPT_LIMIT:
            raise ScriptError(f"the inline script is {len(text_or_path):,} characters; put it in a file under 2 MB")
        return _validated("the inline script", lambda: text_or_path)
    if not text_or_path.strip():
        raise ScriptError("give the script's path after `script:`, e.g. script:tests/scripts/brownie.json")
    return Script.load(text_or_path)


def _validated(source: str, read: Callable[[], str]) -> Script:
    try:
        return Script.model_validate(parse_json(read()))
    except InputError as error:
        raise ScriptError(f"cannot use {source}: {error}") from None
    except ValidationError as error:
        raise ScriptError(
            f"{source} is not a script of the documented shape: {describe_validation_error(error)}"
        ) from None
