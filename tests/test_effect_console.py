"""The console's side of the effect fence, headless (AppTest) on a stored session: the approval box names
what the page sent (method, address, what sent it, its fields, page text escaped) and offers "always
allow", which queues an approve command carrying it; Task & answer lists the session's request rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from console_helpers import approval_box
from test_console_app import show_tab

from planner.config import EngineConfig
from planner.effects import RequestRule, SentRequest
from planner.events import Kind
from planner.state import Recorder, SessionState
from sessions.client.markdown import md_line
from sessions.store.sql import open_store

HELD = SentRequest(
    method="POST",
    url="http://shop.test/order?via=*bold*",
    kind="form",
    fields=(("item", "3 <b>x</b>"), ("password", "••••")),
)


@pytest.fixture
def db(app_db: str) -> Path:
    return Path(app_db)


def _stored(db: Path) -> None:
    """A session whose "Continue" (click [4]) is held by the effect fence: its page posted an order."""
    state = SessionState()
    rec = Recorder(state)
    config = EngineConfig(request_rules=(RequestRule.parse("allow POST shop.test/consent"),))
    rec.record(
        Kind.SESSION_CREATED,
        task="continue",
        start_url="http://shop.test/",
        model="demo",
        config=config.model_dump(mode="json"),
    )
    rec.record(Kind.NODE_EXPANDED, "0", type="ACTION", action="click [4]")
    rec.record(
        Kind.APPROVAL_REQUESTED,
        "0",
        action="click [4]",
        rule="the page sent POST /order on shop.test, which could change state on the server",
        role="button",
        name="Continue",
        requests=[HELD.model_dump(mode="json")],
    )
    store = open_store(db)
    store.create_session("s1", state.task, "demo", rec.take(), status=state.status.value)
    store.close()


def test_the_approval_box_names_the_held_request_with_its_fields_escaped(db: Path) -> None:
    _stored(db)
    at = approval_box("s1")
    said = [m.value for m in at.markdown]
    assert "**The page sent** (held, 1): approving lets it through once" in said
    assert f"`POST` {md_line(HELD.url)} (form)" in said
    assert "\\*bold\\*" in md_line(HELD.url), "page text stays characters"
    assert "- item: 3 \\<b\\>x\\</b\\>\n- password: ••••" in said
    labels = {button.label for button in at.button}
    assert "Approve and always allow POST shop.test/order" in labels


def test_always_allow_queues_an_approval_that_carries_it(db: Path) -> None:
    _stored(db)
    at = approval_box("s1")
    next(b for b in at.button if b.label == "Approve and always allow POST shop.test/order").click().run()
    store = open_store(db)
    try:
        queued = [command.payload for command in store.pending("s1")]
        answered = [
            e.data["command"] for e in store.load("s1") if e.kind in (Kind.COMMAND_APPLIED, Kind.COMMAND_REJECTED)
        ]
    finally:
        store.close()
    sent = [(c["kind"], c.get("always"), c.get("node")) for c in [*queued, *answered]]
    assert sent == [("approve", True, "0")], "one approval, carrying 'always', queued or already answered"


def test_task_and_answer_lists_the_sessions_request_rules(db: Path) -> None:
    _stored(db)
    at = approval_box("s1")
    show_tab(at, "Task & answer")
    said = [m.value for m in at.markdown]
    assert "**Request rules (1)**" in said
    assert "- `allow POST shop.test/consent`" in said
