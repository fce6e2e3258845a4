"""A second approval never shows the first one's answer (issue 12), in a real console and Chromium: the
answer to a press lives in the browser tab's state, so only a page that lived through both requests
can show it. And what only ECharts shows of the plan's chart: every label of a wide row drawn, and
nothing faded while the pointer rests on a node (issue 27). (The timeline and forks, the rest of issue
12 here before, are checked headless in tests/test_console_views_app.py, where the chart's options are.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from console_helpers import open_console, start_demo, state_of, store_of
from playwright.sync_api import Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from waiting import wait_until

from planner.browser.dry import DRY_START
from planner.config import EngineConfig
from planner.events import Kind
from planner.state import RunStatus
from sessions.client.creation import create_session
from sessions.worker.runner import Runner
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNS = 4
"""How many runs of the page (whole, or a fragment's: the still page asks the store every 0.75 s) the
second box is watched for: the answer, were it kept, would come with a redraw after the box's first."""
_WATCH_ANSWERS = """() => {
  const seen = window.__answers = [];
  const look = () => {
    const found = document.body.textContent.match(/approval (applied|queued)[^\\n]{0,60}/);
    if (found) seen.push(found[0]);
  };
  look();
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
"""Record every time the page holds a press's answer, from now on: each change of the page is looked at."""


def _a_run_ended(payload: str | bytes) -> bool:
    """Whether a message from the console ends one of the page's runs."""
    if isinstance(payload, str):
        return False
    message = ForwardMsg()
    message.ParseFromString(payload)
    return message.WhichOneof("type") == "script_finished"


def test_a_second_approval_never_shows_the_first_ones_answer(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "checkout-french-press")
    box = page.locator("strong").filter(has_text="Approval required")

    def awaiting(count: int) -> bool:
        state = state_of(console, session_id)
        requests = sum(1 for e in store_of(console).load(session_id) if e.kind is Kind.APPROVAL_REQUESTED)
        return state.status is RunStatus.AWAITING_APPROVAL and requests == count

    # Nothing to watch until the first request (a live page costs the browser most of a core): the page
    # that answers it is opened then, and lives on through the second.
    url = page.url
    page.goto("about:blank")
    wait_until(lambda: awaiting(1), "the first approval request", timeout=90)
    with page.expect_websocket(lambda socket: socket.url.endswith("/_stcore/stream")) as opened:
        page.goto(url)
    stream = opened.value
    expect(box, "the first approval box").to_be_visible(timeout=30_000)
    first = state_of(console, session_id).approval
    assert first is not None
    # Pressed between two runs of the freshly opened page (see `console_helpers.step_once`).
    expect(page.locator('[data-testid="stApp"]'), "the page between two runs").to_have_attribute(
        "data-test-script-state", "notRunning", timeout=30_000
    )
    page.locator(".st-key-approve_submit button").click()
    # The press's answer ("approval queued" or "applied") belongs to the first request's box alone.
    wait_until(
        lambda: any(e.kind is Kind.APPROVAL_GRANTED for e in store_of(console).load(session_id)),
        "the first approval applied",
        timeout=60,
    )

    wait_until(lambda: awaiting(2), "the second approval request", timeout=90)
    second = state_of(console, session_id).approval
    assert second is not None and second.node_id != first.node_id
    expect(box, "the second approval box").to_be_visible(timeout=30_000)
    expect(page.get_by_text(second.action, exact=False).first).to_be_visible(timeout=30_000)
    page.evaluate(_WATCH_ANSWERS)
    for run in range(RUNS):
        stream.wait_for_event("framereceived", predicate=_a_run_ended, timeout=30_000)
        assert page.evaluate("() => window.__answers") == [], (
            f"the first approval's answer shows under the second box (within {run + 1} runs of the page)"
        )
    expect(box, "the second approval box, still on screen").to_be_visible()
    assert page.get_by_text(re.compile(r"approval (applied|queued)")).count() == 0, "and no answer under it"


ROW = 20
_FADED = """() => [...document.querySelectorAll('svg path, svg text')].filter(e =>
  ['opacity', 'fill-opacity', 'stroke-opacity'].some(name => Number(e.getAttribute(name) ?? 1) < 0.3)).length"""
"""How many of the page's drawn shapes and texts are faded (ECharts fades the others of a hovered node)."""


def test_a_wide_row_shows_every_label_and_a_hovered_node_fades_nothing(
    page: Page, console: ConsoleProcess, tmp_path: Path
) -> None:
    """Issue 27: in a row of 20 sub-goals ECharts hid two labels in three (labels that overlap are hidden,
    and the row was fitted to the chart), and the pointer resting on a node faded all but its neighbours
    for as long as it stayed there."""
    task = "Check every printer"
    steps = [f"Note printer {i}" for i in range(1, ROW + 1)]
    nodes = {task: {"type": "AND", "children": steps}} | {s: {"type": "ACTION", "action": f"note [{s}]"} for s in steps}
    script = tmp_path / "row.json"
    script.write_text(json.dumps({"nodes": nodes, "final_answer": "done"}))
    store = store_of(console)
    config = EngineConfig(constraints=False)
    session_id = create_session(store, task, f"script:{script}", start_url=DRY_START, config=config)
    Runner(store, session_id).run(on_idle=lambda state: False)
    assert state_of(console, session_id).finished

    open_console(page, console)
    page.goto(f"{console.url}/?session={session_id}")
    label = page.locator("text").filter(has_text=re.compile(r"^ACT 0\.\d+$"))
    labels = page.locator("svg").locator(label)
    expect(labels, f"every label of the row of {ROW}").to_have_count(ROW, timeout=30_000)

    assert page.evaluate(_FADED) == 0
    chart = page.locator("svg").filter(has=label).bounding_box()
    boxes = [box for box in (each.bounding_box() for each in labels.all()) if box is not None]
    assert chart is not None and boxes
    box = min(boxes, key=lambda b: abs(b["x"] + b["width"] / 2 - chart["x"] - chart["width"] / 2))
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 7)  # a node's symbol, just above its label
    expect(page.get_by_text(re.compile(r"ACT · SUCCESS")).first, "the hovered node's tooltip").to_be_visible()
    assert page.evaluate(_FADED) == 0, "the pointer on a node faded the rest of the tree"
