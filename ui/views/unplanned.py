"""What an inject under a node not expanded yet means, asked of the operator in one radio.

The node has no plan of its own yet, so the operator's lines are either the steps it starts with, the
planner planning the rest around them when the run reaches it (`Inject.plan_rest`, the useful one and
the default), or its only steps or alternatives, which the planner then never plans. The inject form
and the template inject form ask the same question in the same words.
"""

from __future__ import annotations

import streamlit as st

from ui.forms import Scope

__all__ = ["ask_meaning", "meaning"]

_MEANINGS: dict[str, dict[str, object]] = {
    "its first steps: the planner plans the rest": {"plan_rest": True},
    "its only steps (AND): the planner adds none": {"node_type": "AND"},
    "its only alternatives (OR): the planner adds none": {"node_type": "OR"},
}
_QUESTION = "Not planned yet: these are"


def ask_meaning(where: Scope, key: str) -> None:
    """The radio, under `where`'s `key`; the first choice (the planner plans the rest) is the default."""
    st.radio(_QUESTION, list(_MEANINGS), key=where.key(key))


def meaning(where: Scope, key: str) -> dict[str, object]:
    """The `Inject` fields the chosen meaning sets (`plan_rest`, or `node_type`)."""
    return _MEANINGS[st.session_state.get(where.key(key)) or next(iter(_MEANINGS))]
