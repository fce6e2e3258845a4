"""Scoping of the console's forms: what the operator types and what the engine answered belong to one
(session, node, request) and never show under another.

Every widget key and every result message carries a scope: `scope(session_id, node_id)` for a node's
forms, `scope(session_id)` for the session's own settings, and the approval request's identity for
the approval box. A form for another node (or session) has other keys, so a prune reason typed for
0.4 never appears in 0.3's prune field, and the answer to a command shows only next to the form, in
the scope, that sent it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from pydantic import ValidationError

from planner.commands import Command, command_problem
from sessions.client import Outcome, OutcomeKind, SessionView
from sessions.client.markdown import md
from ui.commands import alert, faded, first_drawn, new_command_id, send
from ui.context import Console

__all__ = ["FormProblem", "Scope", "not_text", "scope", "sending", "settle_results", "show_result", "submit"]

_RESULTS = "_form_results"
"""Session state: {(scope, form): (outcome, the widgets to empty once it is applied, when its answer was
first drawn)}."""
_EMPTIED = "_form_emptied"
"""Session state: {(scope, widget name): times emptied}. A widget is emptied by giving it a new key, not
by setting its value: the live panel's tick may leave the browser before the redraw that empties the
field, carrying the old text, and Streamlit would put that text back. A request for the old key cannot
reach a new widget."""
_MESSAGE_CHARS = 600
"""A refusal quotes node text: past this it is clamped (the node itself shows the whole text)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The (session, node, request) a form belongs to; `key` names its widgets."""

    session_id: str
    parts: tuple[str, ...]

    def key(self, name: str) -> str:
        """A widget key unique to this scope; a short digest keeps it usable as a CSS class (`st-key-...`).
        A widget emptied after a successful command (`submit`) is a new widget from then on: its key
        carries how many times it was emptied."""
        digest = hashlib.sha1("\x1f".join((self.session_id, *self.parts)).encode()).hexdigest()[:10]
        emptied = st.session_state.get(_EMPTIED, {}).get((self, name), 0)
        return f"{name}-{digest}" + (f"-{emptied}" if emptied else "")


def scope(session_id: str, *parts: str) -> Scope:
    return Scope(session_id, tuple(parts))


def not_text(values: object) -> str | None:
    """One sentence when a value a form gathered (any string in it, at any depth) cannot be stored as
    UTF-8 text (a lone surrogate), else None: every form is checked here before its input is used."""
    if isinstance(values, str):
        try:
            values.encode("utf-8")
        except UnicodeEncodeError:
            return "A field holds characters that are not text (they cannot be stored as UTF-8); retype them."
        return None
    if isinstance(values, dict):
        values = [*values.keys(), *values.values()]
    if isinstance(values, list | tuple):
        return next((problem for value in values if (problem := not_text(value)) is not None), None)
    return None


class FormProblem(Exception):
    """What a form's input cannot make a command of, in one sentence (raised by a form's `build`)."""


def sending(
    ctx: Console, where: Scope, form: str, build: Callable[[], Command], clear: tuple[str, ...] = ()
) -> tuple[Any, ...]:
    """The arguments of `submit` for a control drawn now: they carry the id of the command it sends
    (`ui.commands.new_command_id`), so a replayed press sends the same command."""
    return (ctx, where, form, build, clear, new_command_id())


def submit(
    ctx: Console,
    where: Scope,
    form: str,
    build: Callable[[], Command],
    clear: tuple[str, ...] = (),
    command_id: str = "",
) -> None:
    """Send the command `build()` makes of the form's widgets (the submit button's callback, run before
    the page is drawn again, so the widgets can still be reset); give it `sending(...)` as its arguments.

    Input that cannot make a command (`build` raises `FormProblem`, or the command's own validation
    refuses it, or it is not text: `not_text`) shows as the form's error in one sentence and nothing the
    operator typed is lost. The widgets named in `clear` are emptied at the redraw that finds the
    command applied (`show_result`); a refused command leaves them as the operator typed them."""
    try:
        command = build()
        problem = not_text(command.model_dump(mode="json"))
    except FormProblem as error:
        problem = str(error)
    except ValidationError as error:
        problem = command_problem(error, tagged=False)
        problem = problem[:1].upper() + problem[1:]
    outcome = (
        Outcome.refused(problem) if problem else send(ctx, where.session_id, command, command_id or new_command_id())
    )
    st.session_state.setdefault(_RESULTS, {})[(where, form)] = (outcome, clear, None)


def _empty(where: Scope, names: tuple[str, ...]) -> None:
    emptied = st.session_state.setdefault(_EMPTIED, {})
    for name in names:
        emptied[(where, name)] = emptied.get((where, name), 0) + 1


def settle_results(view: SessionView) -> None:
    """Settle every form answer of the session against `view`, before any form is drawn: a command the
    view finds applied empties its form's fields in this very redraw (a still page may not be drawn
    again until the operator does something)."""
    results = st.session_state.get(_RESULTS, {})
    for (where, form), (was, clear, shown) in list(results.items()):
        if where.session_id != view.session_id:
            continue
        outcome = was.settled(view.handled)
        if was.kind is OutcomeKind.QUEUED and outcome.kind is OutcomeKind.APPLIED:
            _empty(where, clear)
        results[(where, form)] = (outcome, clear, shown)


def show_result(view: SessionView, where: Scope, form: str) -> None:
    """The engine's answer to this form in this scope, if any: "queued" until the view finds the command
    handled, then its answer, with the engine's warning when it gave one ("prune applied — already ran
    in the browser: …"); escaped, since a refusal quotes text. A plain "applied" goes after a few
    seconds (`ui.commands.faded`), at the next redraw."""
    results = st.session_state.get(_RESULTS, {})
    if (where, form) not in results:
        return
    was, clear, shown = results[(where, form)]
    outcome = was.settled(view.handled)
    if faded(outcome, shown):
        del results[(where, form)]
        return
    results[(where, form)] = (outcome, clear, first_drawn(outcome, shown))
    if was.kind is OutcomeKind.QUEUED and outcome.kind is OutcomeKind.APPLIED:
        _empty(where, clear)  # settled after the form was drawn: its fields go at the next redraw
    message = outcome.text
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    alert(outcome)(md(message))
