"""Reusable plans in the console: save the selected node's subtree as a template, inject a saved
template under, before or after a node with a value for each of its parameters, and keep the
templates (list, delete, export and import as JSON) under Run settings.

Injecting is an ordinary inject command (its answer shows as every form's does, `ui.forms`); saving,
deleting and importing write the store's templates at once and say what they did in one line. What a
template keeps and how its placeholders work is `planner.templates`; the store side is
`sessions.client.templates`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from planner.commands import Inject
from planner.errors import PlannerError
from planner.templates import parse_values
from planner.tree import Node, NodeType
from sessions.client import SessionView
from sessions.client.errors import SessionsError
from sessions.client.markdown import md
from sessions.client.templates import describe
from ui.access import locked, refused_now
from ui.context import Console
from ui.forms import FormProblem, Scope, scope, sending, show_result, submit
from ui.views.unplanned import ask_meaning, meaning

__all__ = ["render_template_inject", "render_template_library", "render_template_save"]

_NOTES = "_template_notes"
"""Session state: the one-line answer to the last save, delete or import, by the scope that asked."""
_UNDER, _BEFORE, _AFTER = "under", "before", "after"


def _note(where: Scope, form: str, ok: bool, message: str) -> None:
    st.session_state.setdefault(_NOTES, {})[(where, form)] = (ok, message)


def _show_note(where: Scope, form: str) -> None:
    found = st.session_state.get(_NOTES, {}).get((where, form))
    if found is not None:
        ok, message = found
        (st.success if ok else st.error)(md(message))


def render_template_inject(ctx: Console, view: SessionView, node: Node) -> None:
    """Pick a template, fill its parameters (one field each) and inject it under, before or after `node`."""
    state = view.state
    if state.finished:
        return
    templates = [versions[-1] for versions in ctx.client.templates.newest().values()]
    where = scope(view.session_id, node.id)
    parent = state.tree.parent(node)
    places = ([_UNDER] if node.type is not NodeType.ACTION else []) + ([_BEFORE, _AFTER] if parent else [])
    if not places:
        return
    with st.container(border=True, key="template_inject"):
        if not templates:
            st.caption("Inject from a template: none saved yet (save a subtree below, then reuse it here).")
            return
        by_name = {template.name: template for template in templates}
        name = st.selectbox(
            "Inject from a template",
            list(by_name),
            format_func=lambda name: describe(by_name[name]),
            key=where.key("template_choice"),
        )
        chosen = by_name[name]
        place = st.radio(
            "Where", places, format_func=lambda p: f"{p} {node.id}", horizontal=True, key=where.key("template_where")
        )
        if node.type is NodeType.UNKNOWN and place == _UNDER:
            ask_meaning(where, "tpl_meaning")
        for param in chosen.params:
            st.text_input(f"{{{param}}}", key=where.key(f"template_param_{chosen.name}_{param}"))

        def build() -> Inject:
            picked = by_name[st.session_state[where.key("template_choice")]]
            values = {
                p: st.session_state.get(where.key(f"template_param_{picked.name}_{p}")) or "" for p in picked.params
            }
            built: dict[str, Any] = {"kind": "inject", "template": f"{picked.name}@{picked.version}", "params": values}
            chosen_place = st.session_state.get(where.key("template_where")) or places[0]
            if chosen_place == _UNDER:
                built["parent"] = node.id
                if node.type is NodeType.UNKNOWN:
                    built |= meaning(where, "tpl_meaning")
            else:
                assert parent is not None  # before and after are offered only below the root
                index = parent.children.index(node.id)
                built["parent"], built["position"] = parent.id, index + (chosen_place == _AFTER)
            try:
                return Inject.model_validate(ctx.client.templates.with_template(built))
            except (PlannerError, SessionsError) as error:
                raise FormProblem(f"{error}.") from None

        st.button(
            "Inject template",
            key="template_inject_submit",
            on_click=submit,
            args=sending(ctx, where, "template", build),
            **locked("inject"),
        )
        show_result(view, where, "template")


def render_template_save(ctx: Console, view: SessionView, node: Node | None) -> None:
    """Save the selected node's subtree (or only its sub-goals) as a template, the values named made placeholders."""
    if node is None:
        return
    session_id = view.session_id
    where = scope(session_id, node.id)
    with st.expander("Save this subtree as a template", key="template_save"):
        with st.form(where.key("template_save_form")):
            st.text_input("Template name (saving a name again makes its next version)", key=where.key("tpl_name"))
            st.text_area(
                "Parameters, one name=value per line: that text becomes {name} (e.g. brand=Northwind)",
                key=where.key("tpl_params"),
                height=70,
            )
            st.text_input("Description (optional)", key=where.key("tpl_description"))
            st.checkbox(f"Only the sub-goals of {node.id}, not {node.id} itself", key=where.key("tpl_children"))
            st.form_submit_button(
                "Save template",
                key="template_save_submit",
                on_click=_save,
                args=(ctx, where, session_id, node.id),
                **locked("templates"),
            )
        _show_note(where, "save")


def _save(ctx: Console, where: Scope, session_id: str, node_id: str) -> None:
    """Save, then empty the form; a refusal keeps what was typed and says why in one sentence."""
    if refused := refused_now("templates"):
        _note(where, "save", False, f"{refused}.")
        return
    name = (st.session_state.get(where.key("tpl_name")) or "").strip()
    if not name:
        _note(where, "save", False, "Give the template a name before saving.")
        return
    try:
        values = parse_values((st.session_state.get(where.key("tpl_params")) or "").splitlines())
        saved = ctx.client.templates.save_subtree(
            session_id,
            node_id,
            name,
            values,
            description=(st.session_state.get(where.key("tpl_description")) or "").strip(),
            children_only=bool(st.session_state.get(where.key("tpl_children"))),
        )
    except (PlannerError, SessionsError) as error:
        _note(where, "save", False, f"{error}.")
        return
    _note(where, "save", True, f"saved as {describe(saved)}")
    for field in ("tpl_name", "tpl_params", "tpl_description"):
        st.session_state[where.key(field)] = ""


def render_template_library(ctx: Console, session_id: str) -> None:
    """Every template (its newest version, and how many there are), each with a delete button; export
    all as one JSON file, and import such a file (every template in it becomes a new version)."""
    where = scope(session_id)
    # Built only while open (its open state kept on the server, as the model calls' are): the live
    # panel redraws every 0.75 s, and a closed library read the whole templates table each time.
    with st.expander("Templates", key="template_library", on_change="rerun") as library:
        if not library.open:
            return
        rows = ctx.client.templates.listing()
        if not rows:
            st.caption("No templates yet: save a subtree from the Edit plan tab.")
        for row in rows:
            params = f" ({', '.join(row['params'])})" if row["params"] else ""
            text = f"**{md(row['name'])}** v{row['version']}{md(params)} · {row['nodes']} nodes"
            versions = f" · versions {', '.join(map(str, row['versions']))}" if len(row["versions"]) > 1 else ""
            with st.container(horizontal=True, vertical_alignment="center"):
                st.markdown(text + versions + (f" · {md(row['description'])}" if row["description"] else ""))
                st.button(
                    "Delete",
                    key=f"template_delete_{row['name']}",
                    icon=":material/delete:",
                    on_click=_delete,
                    args=(ctx, where, row["name"]),
                    **locked("templates"),
                )
        if rows:
            st.download_button(
                "Export all as JSON",
                lambda: ctx.client.templates.export_text(),
                "templates.json",
                "application/json",
                on_click="ignore",
                key="template_export",
            )
        st.file_uploader("Import templates (a JSON file exported here)", type=["json"], key=where.key("tpl_upload"))
        st.button("Import", key="template_import_submit", on_click=_import, args=(ctx, where), **locked("templates"))
        _show_note(where, "library")


def _delete(ctx: Console, where: Scope, name: str) -> None:
    if refused := refused_now("templates"):
        _note(where, "library", False, f"{refused}.")
        return
    try:
        count = ctx.client.templates.delete(name)
    except (PlannerError, SessionsError) as error:
        _note(where, "library", False, f"{error}.")
        return
    _note(where, "library", True, f"deleted {name} ({count} version{'s' if count != 1 else ''})")


def _import(ctx: Console, where: Scope) -> None:
    if refused := refused_now("templates"):
        _note(where, "library", False, f"{refused}.")
        return
    uploaded = st.session_state.get(where.key("tpl_upload"))
    if uploaded is None:
        _note(where, "library", False, "Choose a JSON file of templates first.")
        return
    try:
        text = uploaded.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        _note(where, "library", False, f"{uploaded.name} is not UTF-8 text; choose a JSON file exported here.")
        return
    try:
        done = ctx.client.templates.import_text(text)
    except (PlannerError, SessionsError) as error:
        _note(where, "library", False, f"{uploaded.name}: {error}.")
        return
    saved = ", ".join(f"{t.name} v{t.version}" for t in done.saved) or "nothing new"
    kept = f"; {len(done.unchanged)} already here" if done.unchanged else ""
    _note(where, "library", True, f"imported {saved}{kept}")
