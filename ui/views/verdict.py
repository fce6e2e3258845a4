"""The final answer, what is known of it, and the operator's word on it: the head of the Task & answer tab.

A finished run's answer is only the planner's belief until the task's check or a person confirms it
(`sessions.client.verdict`); here a person with the approve role accepts or rejects it, with a reason,
and every list, the inbox, the exports and the report then say so.
"""

from __future__ import annotations

import streamlit as st

from planner.events import RunStatus
from sessions.client import SessionView
from sessions.client.errors import SessionsError
from sessions.client.markdown import md, md_line
from sessions.client.verdict import judged_line
from ui.access import current, refusal
from ui.context import Console
from ui.forms import Scope, scope
from ui.status import outcome
from ui.views.whole import show_text

__all__ = ["render_verdict"]

_SHOWN_CHARS = 600
_REFUSED = "_verdict_refused"
"""Session state: (session id, the sentence saying why the last press recorded nothing). A recorded
word needs no message: the line under the answer ("Accepted by …") is its answer, and stays true."""


def render_verdict(ctx: Console, view: SessionView) -> None:
    """The answer (once there is one, or the run has ended), what is known of it, the latest word on
    it, and for an ended run with an answer the form that records the operator's."""
    state = view.state
    if state.final_answer is None and not state.finished:
        return
    words, icon = outcome(state.status.value, state.cause.value if state.cause else None)
    st.markdown(f"**Final answer** · {icon} {md(words)}")
    show_text(state.final_answer or "(none)", _SHOWN_CHARS, "final answer")
    judged = state.answer_verdict
    if judged is not None:
        st.caption(md_line(judged_line(judged), _SHOWN_CHARS))
    if state.final_answer is None or state.status not in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return
    why_not = refusal("verdict")
    where = scope(view.session_id, "verdict")
    with st.form(where.key("verdict"), border=False):
        st.text_input("Why (recorded with your word)", key=where.key("verdict_reason"))
        with st.container(horizontal=True, gap="small"):
            for label, accepted in (("Accept answer", True), ("Reject answer", False)):
                st.form_submit_button(
                    label,
                    key=f"verdict_{'accept' if accepted else 'reject'}",
                    disabled=why_not is not None,
                    help=md(why_not) if why_not else None,
                    on_click=_judge,
                    args=(ctx, where, accepted),
                )
    refused = st.session_state.get(_REFUSED)
    if refused is not None and refused[0] == view.session_id:
        st.error(md(refused[1]))


def _judge(ctx: Console, where: Scope, accepted: bool) -> None:
    """A press's callback: record the word, or keep the sentence saying why not."""
    session_id = where.session_id
    reason = st.session_state.get(where.key("verdict_reason")) or ""
    st.session_state.pop(_REFUSED, None)
    try:
        ctx.client.judge(session_id, accepted=accepted, reason=reason, by=current().name)
    except SessionsError as error:
        st.session_state[_REFUSED] = (session_id, str(error))
