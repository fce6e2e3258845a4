"""`sessions.client.report`: every format by extension, escaping, and the HTML report opened in Chromium offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest
from conftest import BROWNIE_TASK, SCRIPTS, answered

from planner.config import EngineConfig
from planner.events import Event, Kind
from planner.state import Recorder, SessionState, replay
from planner.tree import Node
from sessions.client.creation import create_session
from sessions.client.diagnose import diagnose_session
from sessions.client.markdown import md_line, md_url
from sessions.client.report import FORMATS, report_command, write_report
from sessions.client.verdict import judge_answer
from sessions.errors import SessionInputError
from sessions.store.reading import load_events
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script> \u2028 & end"


def _session(tmp_path: Path, task: str = BROWNIE_TASK) -> tuple[SqlStore, str]:
    store = SqlStore(database_url(tmp_path / "sessions.db"))
    config = EngineConfig(repair=False, constraints=False)
    session_id = create_session(store, task, f"script:{SCRIPTS / 'brownie_fail.json'}", config=config)
    deadline = time.monotonic() + 60
    state = Runner(store, session_id).run(should_stop=lambda: time.monotonic() > deadline)
    assert state.finished, f"waited for the scripted session to finish: {state.status} {state.reason}"
    return store, session_id


def test_every_extension_writes_its_format(tmp_path: Path) -> None:
    store, session_id = _session(tmp_path)
    diagnose_session(store, session_id)

    page = write_report(store, session_id, tmp_path / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "navigation_error" in page
    trace = json.loads(write_report(store, session_id, tmp_path / "r.json").read_text())
    assert trace["metrics"]["analysis"]["repair_triggers"] == 2
    assert "## Diagnosis" in write_report(store, session_id, tmp_path / "r.md").read_text()
    assert "digraph" in write_report(store, session_id, tmp_path / "r.dot").read_text()
    graph = nx.read_graphml(write_report(store, session_id, tmp_path / "r.graphml"))
    assert graph.nodes["0.2.1"]["status"] == "PRUNED" and graph.has_edge("0.2", "0.2.1")
    line, code = report_command(store, session_id, str(tmp_path / "out" / "again.html"))
    assert code == 0 and json.loads(line)["bytes"] > 0
    with pytest.raises(SessionInputError, match=r"cannot write a report as '\.pdf'; use one of \.dot, \.graphml"):
        write_report(store, session_id, tmp_path / "r.pdf")


def test_the_html_report_carries_no_markup_from_the_session_and_loads_nothing(tmp_path: Path) -> None:
    store, session_id = _session(tmp_path, task=HOSTILE)
    page = write_report(store, session_id, tmp_path / "r.html").read_text()

    assert "<img src=x" not in page and "<script>alert" not in page
    assert page.count("<script") == 2  # the data and the report's own script
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page), "a reference to another host"
    data = page.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["frames"][0]["c"]["0"]["d"] == HOSTILE


WJ = "\u2060"
URLS = [
    "http://127.0.0.1:36323/",
    "https://shop.example/search?q=usb_c&min_price=10&max_price=100&sort=price_asc#results",
    "https://en.example.org/wiki/Kettle_(appliance)?a=*b*&c=~d~&e=$5",
    "http://127.0.0.1:8000/a`b``c?x=<y>",
    "`http://edge.example/[x](y)`",
]
"""Page URLs as a browser reports them: Markdown-active characters, backtick runs, a backtick at each end."""


def code_span(markdown: str) -> str:
    """What CommonMark shows of `markdown` when it is one code span (and fails when it is not)."""
    found = re.fullmatch(r"(`+)(?!`)(.*?)(?<!`)\1", markdown)
    assert found, f"{markdown!r} is not one code span"
    fence, content = found.groups()
    assert all(len(run) != len(fence) for run in re.findall(r"`+", content)), "a run inside closes the span early"
    if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
        content = content[1:-1]
    return content


@pytest.mark.parametrize("url", URLS)
def test_a_url_shows_as_a_code_span_that_copies_intact(url: str) -> None:
    """Escaped text carries a word joiner inside every URL, so a URL copied from a report was broken.
    In a code span Markdown links nothing and interprets nothing: the URL needs no escape at all."""
    shown = md_url(url)
    assert code_span(shown) == url and WJ not in shown


@pytest.mark.parametrize(
    "text",
    ["http://a.example/x|y", "http://a.example/x y", "http://a.example/\nnext", "see :material/home:", ""],
)
def test_what_a_code_span_cannot_hold_as_it_is_stays_escaped_text(text: str) -> None:
    """A `|` would end a table cell, a space or line break is no URL, and Streamlit rewrites
    `:material/` even inside code: such text is escaped like any other."""
    assert md_url(text) == md_line(text)


def _pages_session() -> tuple[SessionState, list[Event]]:
    """A finished session whose start URL and pages are `URLS`, beside hostile page text."""
    state = SessionState()
    rec = Recorder(state, clock=lambda: 0.0)
    rec.record(Kind.SESSION_CREATED, task="compare kettles at http://shop.example/", model="hand", start_url=URLS[0])
    rec.record(Kind.NODE_EXPANDED, "0", type="AND", children=[{"id": "0.1", "description": HOSTILE}])
    rec.record(Kind.NODE_EXPANDED, "0.1", type="ACTION", action="click [1]")
    for url in URLS[1:]:
        rec.record(Kind.ACTION_EXECUTED, "0.1", url=url, title=HOSTILE, action="click [1]", ok=True)
    rec.record(Kind.STATUS_CHANGED, "0", status="SUCCESS", answer="the kettle")
    return state, rec.events


def test_the_markdown_report_shows_every_url_of_the_session_intact() -> None:
    state, events = _pages_session()
    report = FORMATS[".md"]("pages", state, events)
    assert isinstance(report, str)
    spans = re.findall(r"(?<![`\\])(`+)(?!`)(.*?)(?<!`)\1(?!`)", report)
    assert sorted(code_span(fence + content + fence) for fence, content in spans) == sorted(URLS), (
        "every URL of the session is in the report once, in a code span, and nothing else is"
    )
    assert "\\<img src=x onerror=alert(1)\\>" in report, "page text stays escaped"
    assert "http:" + WJ + "//shop.example/" in report, "a URL inside the task is the task's text: escaped"


def test_both_reports_show_the_answer_check_and_the_operators_verdict(tmp_path: Path) -> None:
    store = SqlStore(database_url(tmp_path / "sessions.db"))
    wrong, _ = answered(store, "The Acme Daypack 20L at $49.99")
    judge_answer(store, wrong, accepted=False, reason="not the brand asked for", by="ana")

    page = write_report(store, wrong, tmp_path / "r.html").read_text()
    assert "<tr><th>answer check</th><td>not met</td></tr>" in page
    assert "<tr><th>answer verdict</th><td>rejected</td></tr>" in page
    assert "<tr><th>Status</th><td>answer rejected: " in page, "the status in words, as every list says it"
    assert "<tr><th>Answer judged</th><td>Rejected by ana: not the brand asked for</td></tr>" in page
    text = write_report(store, wrong, tmp_path / "r.md").read_text()
    assert "| answer check | not met |" in text and "| answer verdict | rejected |" in text


def _label_parts(node: Node) -> tuple[str, str, str]:
    """What a node's label in the HTML tree must show: its id, its status and its description's start."""
    return node.id, node.status.value, " ".join(node.description.split())[:12]


@pytest.mark.browser
def test_the_html_tree_labels_every_node_and_fits_the_window(tmp_path: Path, page: object) -> None:
    """The tree showed node ids only, in a box as wide as the tree that scrolled sideways. Each node's
    label now says its status and description, as text (the root's is hostile), and the tree fits the
    window at any width, growing down instead."""
    from playwright.sync_api import Dialog, Page

    assert isinstance(page, Page)
    store, session_id = _session(tmp_path, task=HOSTILE)
    state = replay(load_events(store, session_id))
    path = write_report(store, session_id, tmp_path / "r.html")
    alerts: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        alerts.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    for width in (1280, 700, 420):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(path.as_uri())
        page.locator("g.node").first.wait_for(timeout=30_000)
        assert page.locator("#tree").get_attribute("width") == "100%", "the tree is as wide as its box"
        chart, window, right = page.evaluate(
            """() => {
                const chart = document.getElementById("chart"), root = document.documentElement;
                return [chart.scrollWidth - chart.clientWidth, root.scrollWidth - root.clientWidth,
                        document.getElementById("tree").getBoundingClientRect().right];
            }"""
        )
        assert chart <= 0 and window <= 0, f"at {width} px the page scrolls sideways ({chart}, {window} px)"
        assert right <= width, f"at {width} px the tree reaches {right} px"
        labels = {
            node.get_attribute("data-id"): node.locator("text").text_content() or ""
            for node in page.locator("g.node").all()
        }
        assert set(labels) == {node.id for node in state.tree.walk()}
        for node in state.tree.walk():
            label = labels[node.id]
            assert label.startswith(node.id) and all(part in label for part in _label_parts(node)), (width, label)
        assert "<img src=x onerror=alert(1)>" in labels["0"], "the root's description stays text"
    assert page.locator("#chart img, #chart script, #chart foreignObject").count() == 0
    assert alerts == []


_DEMO_RUN = """
import sys
from pathlib import Path
from demo.shop import start_shop
from demo.suite import run_task
from demo.tasks import load_tasks, select_tasks
from sessions.store.sql import SqlStore, database_url
folder = Path(sys.argv[1])
(task,) = select_tasks(load_tasks(), ["top-rated-webcam"])
with start_shop() as shop:
    row = run_task(SqlStore(database_url(folder / "sessions.db")), task, shop.url, artifacts=folder / "artifacts")
print(row.session_id)
"""


def _demo_run(folder: Path) -> str:
    """The demo task in its own process: Playwright's sync API cannot start beside the test's `page`."""
    done = subprocess.run(
        [sys.executable, "-c", _DEMO_RUN, str(folder)],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"waited for the demo run to finish: {done.stderr[-2000:]}"
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.browser
def test_the_html_report_opens_offline_scrubs_and_shows_the_failed_node(tmp_path: Path, page: object) -> None:
    """A demo-shop run with a failure and a repair (top-rated-webcam), its screenshots inlined."""
    from playwright.sync_api import Page, Route

    assert isinstance(page, Page)
    session_id = _demo_run(tmp_path)
    store = SqlStore(database_url(tmp_path / "sessions.db"))
    diagnose_session(store, session_id)
    path = write_report(store, session_id, tmp_path / "report.html")
    size = path.stat().st_size
    assert size < 5_000_000, f"a demo run's report is {size:,} bytes"
    assert "data:image/jpeg;base64," in path.read_text(), "the screenshots are inlined"

    attempts: list[str] = []

    def refuse(route: Route) -> None:
        if not route.request.url.startswith("file:"):
            attempts.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    page.goto(path.as_uri())
    failed = page.locator('g.node[data-failed="1"]')
    failed.first.wait_for(timeout=60_000)
    failed_ids = [failed.nth(i).get_attribute("data-id") for i in range(failed.count())]
    assert failed_ids, "the final tree marks a failed node"

    slider = page.locator("#slider")
    events = int(slider.get_attribute("max") or 0)
    slider.fill("0")
    assert page.locator("g.node").count() == 1, "at the first event the tree is the root alone"
    first_fail = next(
        i
        for i in range(events + 1)
        if (slider.fill(str(i)) or True) and page.locator('g.node[data-status="FAIL"]').count()
    )
    assert 0 < first_fail < events, "scrubbing finds the event where a node failed"
    assert "FAIL" in (page.locator('g.node[data-status="FAIL"]').first.get_attribute("data-status") or "")

    slider.fill(str(events))
    culprit = next(node_id for node_id in failed_ids if node_id != "0")
    page.locator(f'g.node[data-id="{culprit}"]').click()
    detail = page.locator("#detail").inner_text()
    assert detail.startswith(f"{culprit} ·") and "FAILED during the run" in detail, detail
    assert attempts == [], f"the report tried to load {attempts}"
