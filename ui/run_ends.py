"""Every finished run of the page reaches the browser, so the browser always clears what it left.

The browser removes the elements a run of the page no longer drew only when that run's "finished"
message reaches it. Streamlit 1.67 loses that message when a run ends while a timer's request
(the live panel's, the watchers') is on its way: the session starts a new script runner for the
request, and then ignores every event of the old one as "from a non-current ScriptRunner", the
old run's end included. The browser then keeps the previous drawing's elements beside the new
ones, not marked stale, until a later whole run ends unraced: a second session picker naming the
previous session, a second Resume button, the previous tree's root in the node selector. On a
loaded 2-core machine it happened about once a minute (`tests/test_run_ends.py`).

`deliver_lost_run_ends` makes the session pass on the end of a run that finished normally even
when its runner is no longer the current one. Nothing of the new runner can be ahead of it: the
old runner queued its end before it stopped, and the new runner exists only because it had.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from streamlit.logger import get_logger
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import ScriptRunnerEvent

__all__ = ["deliver_lost_run_ends"]

_STATUS = {
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS: ForwardMsg.FINISHED_SUCCESSFULLY,
    ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS: ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}
"""The ends the browser cleans up after, as the message the session sends for each."""
_MARK = "_andor_delivers_lost_run_ends"
_log = get_logger(__name__)  # Streamlit's own logging: `--logger.level=debug` shows each end passed on


def deliver_lost_run_ends() -> None:
    """Make every Streamlit session send the end of a normally finished run whatever runner is
    current (idempotent; the console calls it at each run of the page)."""
    handle = AppSession._handle_scriptrunner_event_on_event_loop
    if getattr(handle, _MARK, False):
        return
    signature = inspect.signature(handle)  # the session passes the run's description by position

    @functools.wraps(handle)
    def handling(session: AppSession, sender: Any, event: ScriptRunnerEvent, *args: Any, **kwargs: Any) -> None:
        if sender is not None and sender is not session._scriptrunner and event in _STATUS:
            run = signature.bind(session, sender, event, *args, **kwargs).arguments.get("run_descriptor")
            session._enqueue_forward_msg(session._create_script_finished_message(_STATUS[event], run))
            _log.debug("Passed on the end of a run whose runner was replaced: %s", event)
            return
        handle(session, sender, event, *args, **kwargs)

    setattr(handling, _MARK, True)
    # On the class, so it holds for the sessions already open too.
    AppSession._handle_scriptrunner_event_on_event_loop = handling  # type: ignore[method-assign, assignment]
