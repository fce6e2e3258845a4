"""Plain-language status of a session: what the agent is doing right now, for the status line."""

from __future__ import annotations

from planner.browser.dry import is_dry
from planner.events import Cause
from planner.frames import Frame, next_position
from planner.state import RunStatus, SessionState
from planner.tree import NodeType
from sessions.client.verdict import standing

__all__ = ["outcome", "status_line", "worker_name"]

_ICONS = {
    "running": ":material/play_circle:",
    "paused": ":material/pause_circle:",
    "awaiting_approval": ":material/front_hand:",
    "stopped": ":material/stop_circle:",
    "failed": ":material/cancel:",
}
"""Streamlit Material icons, for Markdown."""

_ANSWER_ICONS = {
    Cause.ANSWER_CHECKED.value: ":material/check_circle:",
    Cause.ANSWER_ACCEPTED.value: ":material/check_circle:",
    Cause.ANSWER_MISSED.value: ":material/rule:",
    Cause.ANSWER_REJECTED.value: ":material/cancel:",
}
"""A succeeded run's icon by what is known of its answer: ✓ only where a check or a person confirmed it;
any other succeeded run gets `_BELIEVED`."""
_BELIEVED = ":material/help:"


def outcome(status: str, cause: str | None) -> tuple[str, str]:
    """A session's status in words (`sessions.client.verdict.standing`), with its icon."""
    if status == RunStatus.SUCCEEDED:
        return standing(status, cause), _ANSWER_ICONS.get(cause or "", _BELIEVED)
    return standing(status, cause), _ICONS.get(status, "")


def _doing(state: SessionState) -> str:
    position = next_position(state.tree)
    if state.awaits_constraints:
        return "reading the task's constraints"
    if position is None:
        return "writing the final answer"
    node = position.node
    if position.frame is Frame.ENTERING:
        if node.type is NodeType.ACTION:
            return f"executing {node.action} at {node.id}"
        return f"expanding {node.id}"
    if position.frame is Frame.EXITING:
        return f"checking whether {node.id} is done"
    return f"recovering {node.id} ({node.reason or 'failed'})"


def status_line(state: SessionState, runner_alive: bool = True) -> str:
    """One sentence: "executing click [41] at 0.3", "paused by operator", "waiting for approval: ..."."""
    status = state.status
    if status is RunStatus.SUCCEEDED:
        return f"done in {state.steps} steps; the answer is under Task & answer"
    if status is RunStatus.FAILED:
        return f"failed: {state.reason}" if state.reason else "failed"
    if status is RunStatus.AWAITING_APPROVAL and state.approval is not None:
        approval = state.approval
        return f"waiting for approval: {approval.action} at {approval.node_id} ({approval.rule})"
    if status is RunStatus.STOPPED:
        return state.reason or "stopped"
    if status is RunStatus.PAUSED:
        return state.reason or "paused"
    if not runner_alive:
        return "interrupted (no runner is active); resume to continue"
    if _browser_starting(state):
        return f"starting Chromium and opening {state.start_url}, then {_doing(state)}"
    return _doing(state)


def worker_name(lease_owner: str | None) -> str:
    """The runner holding a lease as `host:pid`, from its owner token ("host:pid:tag"); "" for none."""
    if not lease_owner:
        return ""
    host, _, rest = lease_owner.partition(":")
    return f"{host}:{rest.partition(':')[0]}" if rest else host


def _browser_starting(state: SessionState) -> bool:
    """The step under way starts the browser: the engine reads the page before its first step that
    needs one, and Chromium starts on that first read, which can take seconds (the log has no page yet).
    Reading the task's constraints comes first and needs no page."""
    return not state.page_text and not state.awaits_constraints and not is_dry(state.start_url)
