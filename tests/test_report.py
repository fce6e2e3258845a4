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
from conftest import BROWNIE_TASK, SCRIPTS

from planner.config import EngineConfig
from sessions.client.creation import create_session
from sessions.client.diagnose import diagnose_session
from sessions.client.report import report_command, write_report
from sessions.errors import SessionInputError
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
