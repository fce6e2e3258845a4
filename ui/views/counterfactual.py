"""Re-ask a node's recorded model call (`sessions.client.counterfactual`): with an instruction, another model or
other settings, the new answer beside the original as two small trees with the differences marked,
and an Adopt button that sends it as an ordinary operator edit.

The re-ask runs the model in the press's callback and keeps the answer in this tab's state only:
nothing reaches the session's log until the operator adopts it (the module docstring of
`sessions.client.counterfactual` says why). Adopting goes through `ui.forms.submit`, so its answer (queued,
then applied or refused and why) shows under the form like any edit's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from planner.commands import Command
from planner.errors import PlannerError
from planner.events import CommandApplied, ModelCalled
from sessions.client import SessionView
from sessions.client.counterfactual import REASKABLE, Counterfactual, Mark, Plan, adoption
from sessions.client.errors import SessionsError
from sessions.client.markdown import md, md_line, short
from ui.commands import new_command_id
from ui.context import Console
from ui.forms import FormProblem, Scope, scope, show_result, submit
from ui.views.live import follower

__all__ = ["render_reask"]

_ANSWERS = "_counterfactuals"
"""Tab state: the latest re-ask (a `Counterfactual`) or its refusal (a sentence), per form scope."""
_ADOPTED = "_counterfactual_adoptions"
"""Tab state: how many commands the latest adoption sent, per form scope (one result line each)."""
_SHOWN = 160
"""A description or value in the comparison is cut here; the node and the call show all of it."""
_SIGN = {"same": " ", "changed": "~", "added": "+", "removed": "−"}


def render_reask(ctx: Console, view: SessionView, node_id: str) -> None:
    """Where the node's adopted edits came from ("counterfactual of call #12"), then the "Re-ask" form for its
    expansion, repair and observation calls and the latest comparison."""
    calls = {
        event.seq: event.payload
        for event in view.by_node.get(node_id, [])
        if isinstance(event.payload, ModelCalled) and event.payload.question in REASKABLE
    }
    for event in view.by_node.get(node_id, []):
        applied = event.payload
        if isinstance(applied, CommandApplied) and applied.command.get("provenance"):
            kind = str(applied.command.get("kind", "edit")).replace("_", " ")
            st.caption(f"✎ {md_line(kind)} at event {event.seq}: {md_line(applied.command['provenance'], 200)}")
    if not calls:
        return
    where = scope(view.session_id, node_id, "reask")
    with st.container(border=True, key="reask"):
        st.markdown("**Re-ask a model call**: the same inputs, with your instruction, another model or settings")
        st.selectbox(
            "Call",
            list(calls),
            index=len(calls) - 1,
            format_func=lambda seq: f"#{seq} {calls[seq].question.value} (attempt {calls[seq].attempt})",
            key=where.key("reask_call"),
        )
        st.text_area("Instruction", key=where.key("reask_instruction"), height=68)
        left, right = st.columns(2)
        left.text_input(
            "Model",
            key=where.key("reask_model"),
            placeholder="the session's",
            help=f"Empty: the session's own model, {md_line(short(view.state.model, 40))}",
        )
        right.text_input("Settings", key=where.key("reask_settings"), placeholder="lookahead=0, max_children=5")
        st.button("Re-ask", key="reask_submit", on_click=_reask, args=(ctx, where))
        answer = st.session_state.get(_ANSWERS, {}).get(where)
        if isinstance(answer, str):
            st.error(md(answer))
        elif isinstance(answer, Counterfactual):
            _comparison(answer)
            _adopt(ctx, view, where, answer)


def _reask(ctx: Console, where: Scope) -> None:
    """Ask the chosen call again (the press's callback); the answer or the refusal stays with the form."""
    answers = st.session_state.setdefault(_ANSWERS, {})
    values: dict[str, Any] = {
        name: st.session_state.get(where.key(f"reask_{name}")) for name in ("call", "instruction", "model")
    }
    try:
        settings = _settings(st.session_state.get(where.key("reask_settings")) or "")
        with st.spinner("Asking the model again…"):
            answers[where] = ctx.client.reask(
                where.session_id,
                int(values["call"]),
                instruction=(values["instruction"] or "").strip() or None,
                model=(values["model"] or "").strip() or None,
                settings=settings,
            )
    except (PlannerError, SessionsError, ValueError) as error:
        answers[where] = str(error)
    st.session_state.get(_ADOPTED, {}).pop(where, None)


def _settings(text: str) -> dict[str, Any]:
    """ "lookahead=0, or_alternatives=false" as engine settings (each value read as JSON, else as text)."""
    settings: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, equals, value = part.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"write each setting as NAME=VALUE (e.g. lookahead=0), not '{short(part, 40)}'")
        try:
            settings[name.strip()] = json.loads(value)
        except ValueError:
            settings[name.strip()] = value.strip()
    return settings


def _comparison(cf: Counterfactual) -> None:
    asked = f"{cf.model}" + (f', instruction "{short(cf.instruction, 80)}"' if cf.instruction else "")
    if cf.settings:
        asked += ", " + ", ".join(f"{key}={value}" for key, value in cf.settings.items())
    st.caption(f"Call #{cf.call} asked again: {md_line(asked, 300)}")
    # One above the other, lines wrapped: the form sits in the inspector's column beside the tree, where
    # two side by side were about 20 characters wide each and scrolled sideways.
    st.markdown(f"**Original** (#{cf.call})")
    st.code(
        _tree(cf.before, cf.children, "before") if cf.before else _answer(cf.original), language=None, wrap_lines=True
    )
    st.markdown("**New**")
    st.code(_tree(cf.after, cf.children, "after") if cf.after else _answer(cf.new), language=None, wrap_lines=True)
    for change in cf.fields:
        before, after = (short(json.dumps(v, ensure_ascii=False), _SHOWN) for v in (change.before, change.after))
        st.markdown(f"~ {md_line(change.field)}: {md_line(before)} → {md_line(after)}")
    if not cf.fields and all(mark.mark == "same" for mark in cf.children):
        st.caption("The new answer is the same as the original.")


def _tree(plan: Plan, marks: list[Mark], side: str) -> str:
    """A plan as a small indented tree: the node, then each child with its mark (+ added, − removed, ~ changed)."""
    head = f"{plan.node} {plan.type} · {short(plan.description, _SHOWN)}"
    if plan.action:
        head += f" → {short(plan.action, _SHOWN)}"
    lines = [head]
    for mark in marks:
        child = mark.before if side == "before" else mark.after
        if child is None:
            continue
        text = short(child.description, _SHOWN)
        extra = (f" (score {child.score:g})" if child.score is not None else "") + (
            f" → {short(child.action, 60)}" if child.action else ""
        )
        lines.append(f"  {_SIGN[mark.mark]} {child.id + ' ' if child.id else ''}{text}{extra}")
    return "\n".join(lines)


def _answer(output: dict[str, Any] | None) -> str:
    return json.dumps(output, indent=2, ensure_ascii=False) if output is not None else "(no answer was recorded)"


def _adopt(ctx: Console, view: SessionView, where: Scope, cf: Counterfactual) -> None:
    ended = view.state.finished
    st.button(
        "Adopt",
        key="reask_adopt",
        type="primary",
        disabled=ended,
        help="This session has ended; fork it to adopt there." if ended else f"Send it as an edit: {cf.provenance}.",
        on_click=_send_adoption,
        args=(ctx, where, cf, new_command_id()),
    )
    for index in range(st.session_state.get(_ADOPTED, {}).get(where, 0)):
        show_result(view, where, f"adopt {index}")


def _send_adoption(ctx: Console, where: Scope, cf: Counterfactual, command_id: str) -> None:
    """Send the commands that adopt the answer in the session as it is now; a refusal shows as the form's
    error. The commands' ids derive from the press's, so a replayed press adopts once."""
    try:
        adopted = adoption(follower(ctx, where.session_id).refresh(), cf)
        builds: list[Callable[[], Command]] = [partial(_given, command) for command in adopted]
    except (PlannerError, SessionsError) as error:
        builds = [partial(_refuse, f"{error}")]
    st.session_state.setdefault(_ADOPTED, {})[where] = len(builds)
    for index, build in enumerate(builds):
        submit(ctx, where, f"adopt {index}", build, (), f"{command_id}-{index}")


def _given(command: Command) -> Command:
    return command


def _refuse(problem: str) -> Command:
    raise FormProblem(problem)
