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

from sessions.markdown import md
from ui.commands import Outcome, send
from ui.context import Console

__all__ = ["Scope", "scope", "show_result", "submit"]

_RESULTS = "_form_results"
_MESSAGE_CHARS = 600
"""A refusal quotes node text: past this it is clamped (the node itself shows the whole text)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The (session, node, request) a form belongs to; `key` names its widgets."""

    session_id: str
    parts: tuple[str, ...]

    def key(self, name: str) -> str:
        """A widget key unique to this scope; a short digest keeps it usable as a CSS class (`st-key-...`)."""
        digest = hashlib.sha1("\x1f".join((self.session_id, *self.parts)).encode()).hexdigest()[:10]
        return f"{name}-{digest}"


def scope(session_id: str, *parts: str) -> Scope:
    return Scope(session_id, tuple(parts))


def submit(
    ctx: Console,
    where: Scope,
    form: str,
    payload: Callable[[], dict[str, Any] | str],
    clear: tuple[str, ...] = (),
) -> None:
    """Send the command `payload()` builds from the form's widgets (run as the submit button's callback,
    before the page is drawn again, so the widgets can still be reset).

    `payload` returns a sentence instead when the input cannot make a command: it shows as the form's
    error and nothing the operator typed is lost. On success the widgets named in `clear` are emptied.
    """
    built = payload()
    outcome = Outcome("invalid", built) if isinstance(built, str) else send(ctx, where.session_id, built)
    st.session_state.setdefault(_RESULTS, {})[(where, form)] = (outcome.ok, outcome.message)
    if outcome.ok:
        for name in clear:
            st.session_state[where.key(name)] = ""


def show_result(where: Scope, form: str) -> None:
    """The engine's answer to this form in this scope, if any; escaped, since a refusal quotes text."""
    result = st.session_state.get(_RESULTS, {}).get((where, form))
    if result:
        ok, message = result
        if len(message) > _MESSAGE_CHARS:
            message = message[: _MESSAGE_CHARS - 1] + "…"
        (st.success if ok else st.error)(md(message))
