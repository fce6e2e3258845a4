"""The end of every normally finished run reaches the browser (`ui.run_ends`).

Without it, on a loaded machine about once a minute a run's end was lost when a timer's request
arrived as the run finished, and the page kept the previous drawing's elements unmarked beside the
new ones: two session pickers, two Resume buttons, the previous tree's root in the node selector
(`tests/test_console_e2e.py` failed 2 of 4 times beside `stress-ng --cpu 4`; the console's debug log
said "Ignoring event from non-current ScriptRunner: SCRIPT_STOPPED_WITH_SUCCESS" 5 times in 2 min).
Here a session meets the race exactly: the run's end arrives after a new runner took over.
"""

from __future__ import annotations

import asyncio
import functools

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner_utils.run_descriptor import RunDescriptor

from ui.run_ends import deliver_lost_run_ends


class _Session:
    """What the handling of a runner's event reads of a session whose current runner is a new one."""

    def __init__(self, sent: list[ForwardMsg]) -> None:
        self._event_loop = asyncio.get_running_loop()
        self._scriptrunner = "the runner started for the timer's request"
        self._enqueue_forward_msg = sent.append
        self._create_script_finished_message = functools.partial(
            AppSession._create_script_finished_message,
            self,  # type: ignore[arg-type]
        )


def _sent_for(sender: object, event: ScriptRunnerEvent, fragments: list[str] | None = None) -> list[ForwardMsg]:
    """What a session whose current runner is a new one sends the browser for `sender`'s `event`."""
    sent: list[ForwardMsg] = []
    run = RunDescriptor.create(fragments)

    async def handle() -> None:
        session = _Session(sent)
        AppSession._handle_scriptrunner_event_on_event_loop(
            session,  # type: ignore[arg-type]
            sender,  # type: ignore[arg-type]
            event,
            None,
            None,
            None,
            None,
            fragments,
            None,
            run,
        )

    asyncio.run(handle())
    for message in sent:
        assert message.metadata.run.script_run_id == run.script_run_id, "the end names the run it ends"
    return sent


@pytest.mark.parametrize(
    ("event", "fragments", "status"),
    [
        (ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS, None, ForwardMsg.FINISHED_SUCCESSFULLY),
        (ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS, ["panel"], ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY),
    ],
)
def test_a_run_that_ends_after_a_new_runner_took_over_still_tells_the_browser(
    event: ScriptRunnerEvent, fragments: list[str] | None, status: ForwardMsg.ScriptFinishedStatus.ValueType
) -> None:
    deliver_lost_run_ends()
    sent = _sent_for("the runner that drew the page", event, fragments)
    assert [message.script_finished for message in sent] == [status]


def test_an_old_runners_other_events_stay_ignored() -> None:
    deliver_lost_run_ends()
    deliver_lost_run_ends()  # once is enough, twice changes nothing
    assert _sent_for("the runner that drew the page", ScriptRunnerEvent.SCRIPT_STOPPED_FOR_RERUN) == []
    assert _sent_for("the runner that drew the page", ScriptRunnerEvent.SHUTDOWN) == []
