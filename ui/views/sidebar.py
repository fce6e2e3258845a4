"""Sessions: pick one, start a new one (demo task or your own), and the table of all of them (click a
row to open it).

The sidebar is redrawn only when the operator interacts, so it shows nothing that goes stale while a
run goes on: no statuses in the picker, and the sessions table (`render_sessions`) lives in the
page's live panel. The attention inbox above the picker is the page's to draw (`ui.views.inbox`),
again whenever it falls behind the store; the sidebar only reserves its place.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from planner.config import Breakpoint, EngineConfig
from planner.errors import PlannerError
from planner.state import RunStatus
from sessions.client import MODEL_HELP, SessionInfo, default_model
from sessions.client.errors import SessionsError
from sessions.client.markdown import md, short
from ui.access import current, locked
from ui.commands import drawn_press, made_by_press, remember_made
from ui.context import Console
from ui.forms import not_text
from ui.status import outcome, worker_name
from ui.url import SESSION_KEY, SESSIONS_TABLE, open_session, picker_key, session_on_screen, shown_session

__all__ = [
    "BREAKPOINT_LABELS",
    "RATE_WINDOW",
    "START_OPTIONS",
    "Sidebar",
    "render_sessions",
    "render_sidebar",
    "select_session",
]

_CUSTOM = "Your own task…"
RATE_WINDOW = 300.0
"""Seconds of actions the sessions table's step rate counts (a younger session: its whole life)."""
_WAITING = frozenset({RunStatus.PAUSED.value, RunStatus.AWAITING_APPROVAL.value})
"""Statuses in which a session waits for a person (an approval, a breakpoint, a pause)."""
BREAKPOINT_LABELS = {
    Breakpoint.AFTER_EXPANSION: "after every expansion (plan review)",
    Breakpoint.BEFORE_ACTION: "before every browser action",
    Breakpoint.ON_FAILURE: "when a node fails",
    Breakpoint.ON_REPAIR: "after a repair",
}


class Sidebar(NamedTuple):
    session_id: str | None
    """The chosen session (None: there is none yet)."""
    sessions: list[SessionInfo]
    """The listing the sidebar was drawn from, read fresh (a session just started is in it)."""
    inbox: DeltaGenerator
    """The attention inbox's place, above the picker, for the page to fill (`ui.views.inbox.render_inbox`)."""


def select_session(session_id: str) -> None:
    """Show another session from a new run on (the sidebar is already drawn in this one); that run
    moves the URL with it."""
    open_session(session_id)
    st.rerun()


def _label(info: SessionInfo) -> str:
    """Task and id, and for a fork where it comes from, so a fork never reads as its parent."""
    fork = f" · fork of {info.parent_id} at event {info.forked_at}" if info.parent_id else ""
    return f"{short(info.task, 48)} · {info.id}{fork}"


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def _new_session_form(ctx: Console) -> None:
    tasks = {t.label: t for t in ctx.client.bundled_tasks()}
    with st.form("new_session", clear_on_submit=False):
        st.markdown("**New session**")
        choice = st.selectbox("Demo task", [*tasks, _CUSTOM], key="new_task_choice")
        custom = st.text_area("Task text (for your own task)", key="new_task_text", height=68)
        # What most starts leave as they are folds away, so that Start is on screen on a laptop.
        default_url = ctx.shop_url + "/" if ctx.shop_url else ""
        with st.expander(START_OPTIONS):
            start_url = st.text_input("Start URL (empty: dry run, no browser)", value=default_url, key="new_start_url")
            model = st.text_input("Model", value=default_model(), key="new_model", help=MODEL_HELP)
            secrets = _secrets_fields()
        with st.expander("Run settings"):
            cols = st.columns(3)
            max_steps = cols[0].number_input("Max steps", 1, 100_000, EngineConfig().max_steps, key="new_max_steps")
            revisions = cols[1].number_input("Revisions", 0, 20, EngineConfig().max_revisions, key="new_revisions")
            retries = cols[2].number_input("Retries", 0, 10, EngineConfig().expansion_retries, key="new_retries")
            repair = st.toggle("Repair failed nodes", value=True, key="new_repair")
            alternatives = st.toggle("OR alternatives", value=True, key="new_or")
            lookahead = st.toggle(
                "Plan ahead",
                value=True,
                key="new_lookahead",
                help="Let the model give the next actions while it reads a page (fewer model calls).",
            )
            constraints = st.toggle("Extract the task's constraints first", value=True, key="new_constraints")
            cap = st.number_input(
                "Cost cap, USD (0: none)",
                min_value=0.0,
                max_value=10_000.0,
                value=0.0,
                step=0.5,
                key="new_max_cost",
                help="The run pauses once its model calls' estimated cost reaches this; raise it to go on.",
            )
            points = st.multiselect(
                "Breakpoints",
                list(BREAKPOINT_LABELS),
                format_func=lambda b: BREAKPOINT_LABELS[b],
                key="new_breakpoints",
            )
        if st.session_state.pop(_STARTED, False):  # each session is started paused only when asked for it
            st.session_state[_PAUSED_KEY] = False
        paused = st.toggle(
            "Start paused (review the first plan)",
            value=False,
            key=_PAUSED_KEY,
            help="The agent plans the task, then pauses before any browser action so you can edit the plan "
            "as a whole (reorder, delete, add sub-goals) and start it.",
        )
        pressed = st.form_submit_button(
            "Start session", type="primary", key="start_session", **drawn_press("start"), **locked("start")
        )
        if not pressed:
            return
    if (started := made_by_press("start")) is not None:  # Streamlit applied the press again (`ui.commands`)
        select_session(started)
    task = tasks.get(choice)
    text = custom.strip() if choice == _CUSTOM else task.task if task else ""
    url = start_url.strip()
    problem = not_text([text, url, model, *secrets, *secrets.values()]) or _unnamed(secrets)
    if problem is not None:
        st.error(f"Not started: {md(problem)}")
        return
    if task is not None and url == default_url and ctx.shop_url:
        url = ctx.shop_url + task.start_path
    try:
        config = EngineConfig(
            repair=repair,
            or_alternatives=alternatives,
            max_steps=int(max_steps),
            max_revisions=int(revisions),
            expansion_retries=int(retries),
            lookahead=EngineConfig().lookahead if lookahead else 0,
            constraints=constraints,
            max_cost_usd=cap or None,
            breakpoints=frozenset(points),
            review_first_plan=paused,
        )
        session_id = ctx.client.create(
            text,
            model.strip(),
            start_url=url or None,
            config=config,
            by=current().name,
            secrets={name: value for name, value in secrets.items() if name},
        )
    except (ValueError, SessionsError, PlannerError) as error:
        st.error(f"Not started: {md(error)}")
        return
    st.session_state[_STARTED] = True
    select_session(remember_made("start", session_id))


START_OPTIONS = "URL, model, secrets"
"""The new-session form's fold for where the run starts, its model and its secrets."""
_PAUSED_KEY = "new_paused"
_STARTED = "_new_session_started"
"""Session state: a session was just started from the form, so its next drawing turns "Start paused" off."""

_SECRET_ROWS = 3
"""Secrets the new-session form takes: a task needs a password or two, rarely more."""


def _secrets_fields() -> dict[str, str]:
    """The form's secrets, name -> value: what the task writes as {{NAME}}, typed only by the browser
    (`planner.secrets`); each value in a password field, so the form never shows it either."""
    secrets: dict[str, str] = {}
    st.caption("Secrets: the task writes each as {{NAME}}; never shown")
    for row in range(_SECRET_ROWS):
        left, right = st.columns(2)
        name = left.text_input("Name", key=f"new_secret_name_{row}", placeholder="PASSWORD").strip()
        value = right.text_input("Value", key=f"new_secret_value_{row}", type="password")
        if name or value:
            secrets[name] = value
    return secrets


def _unnamed(secrets: dict[str, str]) -> str | None:
    """A secret given a value but no name cannot be written in the task."""
    return "give each secret a name, as the task writes it ({{NAME}})" if "" in secrets else None


def render_sidebar(ctx: Console) -> Sidebar:
    """Draw the sidebar; return the chosen session id and the inbox's place.

    Without a choice, the session the URL names (`ui.url.linked`: a reload or a shared link), else the
    newest; the page's run then moves the URL to whatever session this returns (`ui.url.write_url`).
    """
    with st.sidebar:
        st.title("AND/OR console")
        inbox = st.container()
        sessions = ctx.client.listing(fresh=True)
        by_id = {info.id: info for info in sessions}
        ids = list(by_id)
        shown = shown_session(ids)
        if shown is not None:
            key = picker_key(SESSION_KEY, shown)
            with st.container(key=SESSION_KEY):
                st.selectbox(
                    "Session",
                    ids,
                    index=ids.index(shown),
                    format_func=lambda session_id: _label(by_id[session_id]),
                    key=key,
                )
        else:
            st.caption("No sessions yet: start one below.")
        _new_session_form(ctx)
    return Sidebar(shown, sessions, inbox)


_TABLE_ROWS = "_sessions_table_rows"
"""Session state: {table key: the session ids of its rows, in order, as last drawn}. A click names a
row by its place in the table the browser shows, which is the one drawn last; the listing read for
this run may have a new session at the top since."""


def render_sessions(sessions: list[SessionInfo], recent_actions: Mapping[str, int]) -> None:
    """Every session (the store's listing, newest first) with its live status, what it is doing, which
    worker runs it, its step rate (`recent_actions`: actions per session in the last `RATE_WINDOW`
    seconds), its spend and how long it has waited for a person; click a row to open that session.
    All of it comes from the listing and one count, never from a session's log, so the table costs
    the same for a hundred sessions as for one.

    The table is a picker of sessions like the sidebar's, keyed by the session on screen (`ui.url`),
    so a row chosen for one session never chooses again once another is open. A row is read here,
    in the run the click makes (the live panel's own), and opens its session the way every picker
    does (`select_session`): the whole page then moves to it, the URL with it."""
    shown = session_on_screen()
    key = picker_key(SESSIONS_TABLE, shown)
    drawn = st.session_state.setdefault(_TABLE_ROWS, {})
    clicked_in = drawn.get(key) or [info.id for info in sessions]
    drawn.clear()  # only the table on screen: one list, not one per session ever shown
    drawn[key] = [info.id for info in sessions]
    now = time.time()
    table = pd.DataFrame(
        [
            {
                "status": outcome(info.status, info.cause)[0],
                "why": short(info.reason or "", 80),
                "task": short(info.task, 60),
                "worker": worker_name(info.lease_owner) or "—",
                "actions/min": _rate(recent_actions.get(info.id, 0), now - info.created_at),
                "spend": f"${info.cost_usd:.4f}" if info.cost_usd is not None else "—",
                "waiting": _waiting(info, now),
                "steps": info.steps,
                "age": _age(now - info.created_at),
                "last change": _age(now - info.updated_at) + " ago",
                "model": info.model,
                "fork of": f"{info.parent_id} at event {info.forked_at}" if info.parent_id else "",
                "id": info.id,
            }
            for info in sessions
        ]
    )
    # A click on any cell opens the row's session, as a click on its row marker does (the marker
    # column is narrow, and a person clicks the task they read).
    picked = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        key=key,
        on_select="rerun",
        selection_mode=["single-row", "single-cell"],
    )
    rows = [*picked.selection.rows, *(cell[0] for cell in picked.selection.cells)]
    if rows and rows[0] < len(clicked_in) and clicked_in[rows[0]] != shown:
        select_session(clicked_in[rows[0]])


def _rate(actions: int, age: float) -> float:
    """Actions per minute over the last `RATE_WINDOW` seconds, or the session's life if shorter (at
    least ten seconds, so a session's first action is not a burst of hundreds a minute)."""
    return round(actions * 60.0 / max(10.0, min(RATE_WINDOW, age)), 1)


def _waiting(info: SessionInfo, now: float) -> str:
    """How long a session has waited for a person (paused or awaiting approval); "" while it does not."""
    if info.status not in _WAITING:
        return ""
    return _age(now - (info.status_since if info.status_since is not None else info.updated_at))
