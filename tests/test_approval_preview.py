"""`approval_requested` version 2: a held action comes with the element it would touch and a screenshot
with that element's box, recorded by the engine from the environment's `preview`, kept by the fold in
`state.approval`, and drawn by the console with the element outlined. A version 1 request (action and
rule only) still loads and folds, with nothing to show.

The console's approval box itself is driven headless (AppTest) on stored sessions: the picture, the
one line where there is none, and the escaped element name.
"""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, drive, new_state
from console_helpers import approval_box
from PIL import Image
from streamlit.testing.v1 import AppTest

from planner.browser.dry import DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import SCHEMA_VERSIONS, ApprovalRequested, Box, Event, Kind, upgrade
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ElementInfo, Environment, Preview
from planner.state import Recorder, RunStatus, SessionState, replay
from sessions.store.sql import SqlStore, database_url, open_store
from ui.views.edit import APPROVAL_PICTURE_ALT
from ui.views.outline import BAND, RIM, outline, outlined_url

BUY = Script.model_validate(
    {
        "nodes": {
            BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
            "buy": {"type": "ACTION", "action": "click [9]"},
        }
    }
)
BOX = Box(x=40, y=30, width=100, height=50)


class _Shop(DryEnvironment):
    """A page whose element [9] is an "Add to cart" button, pictured in `shot`."""

    def __init__(self, shot: str) -> None:
        super().__init__()
        self.shot = shot
        self.previewed: list[str] = []

    def target(self, action: str) -> ElementInfo | None:
        return ElementInfo(role="button", name="Add to cart") if action == "click [9]" else None

    def preview(self, action: str) -> Preview | None:
        self.previewed.append(action)
        return Preview(self.shot, BOX)


def _held(env: DryEnvironment) -> tuple[SessionState, list[Event]]:
    state, log = new_state(BROWNIE_TASK, EngineConfig(constraints=False))
    engine = Engine(state, ScriptedModel(BUY), env, guard=lambda action, target: "add to cart" if target else None)
    drive(engine, log, 20)
    assert state.status is RunStatus.AWAITING_APPROVAL, state.reason
    return state, log


def _white(path: Path, size: tuple[int, int] = (300, 200)) -> str:
    Image.new("RGB", size, (255, 255, 255)).save(path)
    return str(path)


# -- the event, its upgrade and the fold -------------------------------------------------------------


def test_approval_requested_is_at_version_2() -> None:
    assert SCHEMA_VERSIONS[Kind.APPROVAL_REQUESTED] == ApprovalRequested.VERSION == 2


def test_the_engine_records_the_element_and_the_preview_and_the_fold_keeps_them(tmp_path: Path) -> None:
    env = _Shop(_white(tmp_path / "0003-approval.png"))
    state, log = _held(env)
    assert env.previewed == ["click [9]"], "the preview is taken once, for the held action only"
    asked = log[-1]
    assert asked.kind is Kind.APPROVAL_REQUESTED and asked.version == 2
    assert asked.data == {
        "action": "click [9]",
        "rule": "add to cart",
        "role": "button",
        "name": "Add to cart",
        "screenshot": env.shot,
        "box": {"x": 40.0, "y": 30.0, "width": 100.0, "height": 50.0},
        "requests": [],
    }
    approval = state.approval
    assert approval is not None
    assert (approval.role, approval.name, approval.screenshot, approval.box) == ("button", "Add to cart", env.shot, BOX)
    assert replay(log).approval == approval, "a rebuild folds to the same pending approval"


def test_a_dry_run_records_no_picture() -> None:
    class _Named(DryEnvironment):
        def target(self, action: str) -> ElementInfo | None:
            return ElementInfo(role="button", name="Buy")

    state, log = _held(_Named())
    assert isinstance(_Named(), Environment)
    assert log[-1].data["screenshot"] is None and log[-1].data["box"] is None
    assert state.approval is not None and (state.approval.name, state.approval.screenshot) == ("Buy", None)


def test_the_upcaster_gives_a_version_1_request_no_element_and_no_picture() -> None:
    old = {"action": "click [9]", "rule": "add to cart"}
    assert upgrade("approval_requested", 1, old) == {**old, "role": "", "name": "", "screenshot": None, "box": None}
    assert upgrade("approval_requested", 2, {**old, "name": "x"}) == {**old, "name": "x"}


def test_an_old_log_in_the_store_folds_to_an_approval_without_a_picture(tmp_path: Path) -> None:
    _state, log = _held(_Shop(_white(tmp_path / "shot.png")))
    asked = log[-1]
    db = tmp_path / "old.db"
    store = SqlStore(database_url(db))
    store.create_session("s1", BROWNIE_TASK, "script", log, status="awaiting_approval")
    store.close()
    with sqlite3.connect(db) as conn:  # the row as the code before version 2 wrote it
        conn.execute(
            "UPDATE events SET version = 1, data = ? WHERE seq = ?",
            (json.dumps({"action": "click [9]", "rule": "add to cart"}), asked.seq),
        )
    store = SqlStore(database_url(db))
    try:
        loaded = store.load("s1")
    finally:
        store.close()
    assert loaded[-1].version == 2
    rebuilt = replay(loaded)
    assert rebuilt.status is RunStatus.AWAITING_APPROVAL and rebuilt.approval is not None
    assert (rebuilt.approval.action, rebuilt.approval.rule) == ("click [9]", "add to cart")
    assert (rebuilt.approval.name, rebuilt.approval.screenshot, rebuilt.approval.box) == ("", None, None)


# -- the outline ----------------------------------------------------------------------------------------


def test_the_outline_rings_the_box_on_a_copy() -> None:
    """The band lies in the 5 pixels just outside the box, the rim in the 2 outside that; the element
    inside and the page beyond are untouched, and so is the image given."""
    page = Image.new("RGB", (300, 200), (255, 255, 255))
    drawn = outline(page, BOX)  # x 40..139, y 30..79
    assert page.getpixel((37, 50)) == (255, 255, 255), "the caller's image is not drawn on"
    for inside in ((40, 30), (90, 55), (139, 79)):
        assert drawn.getpixel(inside) == (255, 255, 255), f"the element at {inside} is covered"
    for band in ((39, 50), (35, 50), (140, 50), (144, 50), (90, 29), (90, 25), (90, 80), (90, 84), (35, 25)):
        assert drawn.getpixel(band) == BAND, f"no band at {band}"
    for rim in ((34, 50), (33, 50), (145, 50), (90, 23), (90, 86)):
        assert drawn.getpixel(rim) == RIM, f"no rim at {rim}"
    for beyond in ((32, 50), (147, 50), (90, 22), (90, 87), (10, 10)):
        assert drawn.getpixel(beyond) == (255, 255, 255), f"the page at {beyond} is drawn on"


def test_a_viewport_screenshot_gets_a_band_thick_enough_to_see_when_shown_small() -> None:
    """A 1280 px screenshot is shown about 400 px wide: its band is 10 px, its rim 3."""
    drawn = outline(Image.new("RGB", (1280, 800), (255, 255, 255)), Box(x=600, y=300, width=200, height=60))
    assert [drawn.getpixel((600 - d, 330)) for d in (1, 10, 11, 13, 14)] == [BAND, BAND, RIM, RIM, (255, 255, 255)]
    assert drawn.getpixel((600, 330)) == (255, 255, 255)


def test_an_outline_at_the_screens_edge_is_clipped_and_still_seen() -> None:
    drawn = outline(Image.new("RGB", (300, 200), (255, 255, 255)), Box(x=0, y=0, width=300, height=40))
    assert drawn.size == (300, 200)
    assert drawn.getpixel((150, 42)) == BAND and drawn.getpixel((150, 20)) == (255, 255, 255)


def test_the_outlined_url_is_the_screenshot_drawn_or_none_for_what_is_no_image(tmp_path: Path) -> None:
    shot = _white(tmp_path / "0001-approval.png")
    url = outlined_url(Path(shot).read_bytes(), BOX)
    assert url is not None and url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        assert image.size == (300, 200) and image.convert("RGB").getpixel((37, 50)) == BAND
    assert Image.open(shot).convert("RGB").getpixel((37, 50)) == (255, 255, 255), "the file is left as written"
    assert outlined_url(b"not an image", None) is None


# -- the console's approval box --------------------------------------------------------------------------


@pytest.fixture
def db(app_db: str) -> Path:
    return Path(app_db)


def _stored(db: Path, name: str, screenshot: str | None) -> None:
    """A session waiting for approval of `click [9]`, on an element named `name`, as the store keeps it."""
    state = SessionState()
    rec = Recorder(state)
    rec.record(Kind.SESSION_CREATED, task="buy a backpack", start_url="http://shop.test/", model="demo")
    rec.record(Kind.NODE_EXPANDED, "0", type="ACTION", action="click [9]")
    box = BOX if screenshot else None
    rec.record(
        Kind.APPROVAL_REQUESTED, "0", action="click [9]", rule="add to cart", role="button", name=name,
        screenshot=screenshot, box=box,
    )  # fmt: skip
    store = open_store(db)
    store.create_session("s1", state.task, "demo", rec.take(), status=state.status.value)
    store.close()


def _images(at: AppTest) -> list[str]:
    return [url for image in at.image for url in image.value]


def test_the_approval_box_shows_the_outlined_page_and_the_escaped_element(db: Path, tmp_path: Path) -> None:
    shot = _white(tmp_path / "0002-approval.png")
    _stored(db, "Add to *cart* <b>now</b>", shot)
    at = approval_box("s1")
    assert _images(at) == [outlined_url(Path(shot).read_bytes(), BOX)]
    assert [img.alt for image in at.image for img in image.proto.imgs] == [APPROVAL_PICTURE_ALT]
    element = next(m.value for m in at.markdown if m.value.startswith("**Element**"))
    assert element == "**Element**: button “Add to \\*cart\\* \\<b\\>now\\</b\\>”"
    buttons = {button.label for button in at.button}
    assert {"Approve", "Run edited action", "Reject and let the planner recover", "Reject and pause"} <= buttons


def test_an_approval_without_a_screenshot_says_so_in_one_line(db: Path) -> None:
    _stored(db, "Add to cart", None)
    at = approval_box("s1")
    assert _images(at) == []
    said = [c.value for c in at.caption if "for this request" in c.value]
    assert said == ["No screenshot of the page for this request (a dry run, an older log, or the file is gone)."]
