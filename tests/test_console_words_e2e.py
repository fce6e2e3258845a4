"""What only a browser shows of the console's words, in the real console and headless Chromium: a URL
in the status line reads as it is (no backslash before `_` or `&`, and no link), and a click on a
row of the sessions table, where a person reads it, opens that session.

The rest of what the operator reads (a refused form's sentence, the engine's warning under the form,
"reopen it first", the answer check) is checked headless in tests/test_console_views_app.py and
tests/test_console_app.py. The sessions here are made straight in the console's store and run on the
dry environment in this process: no demo shop, no second Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK
from console_helpers import SESSION_PICKER, box_of, open_console, open_tab, store_of
from playwright.sync_api import Page, expect
from test_console_views_app import FILTER_URL, filtering_script

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import Breakpoint, EngineConfig
from planner.models.scripted import ScriptedModel, load_script
from planner.state import RunStatus
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store.reading import load_state
from sessions.worker.runner import Runner
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.console_env(ANDOR_SHOP="0")]

ROW = 35
"""The height of a row of Streamlit's table, its header included (the default `row_height`)."""


def test_the_status_line_quotes_a_url_as_it_is_and_a_table_row_opens_its_session(
    page: Page, console: ConsoleProcess, tmp_path: Path
) -> None:
    store = store_of(console)
    other_task = "a dry session to open from the sessions table"
    other = create_session(store, other_task, "demo", paused=True)
    # The newest session, which the console opens first: paused where its price filter's URL failed.
    path = filtering_script(tmp_path)
    config = EngineConfig(constraints=False, repair=False, breakpoints=frozenset({Breakpoint.ON_FAILURE}))
    session_id = create_session(store, BROWNIE_TASK, f"script:{path}", start_url=DRY_START, config=config)
    script = load_script(str(path))
    backend = Backend(ScriptedModel(script), DryEnvironment(script.fail_actions))
    Runner(store, session_id, backend=backend).run(on_idle=lambda state: False)
    state = load_state(store, session_id)
    assert state.status is RunStatus.PAUSED and FILTER_URL in (state.reason or ""), state.reason

    open_console(page, console)
    status = page.locator('[data-testid="stMarkdown"]').filter(has_text=re.compile(r"breakpoint: \S+ failed"))
    where = FILTER_URL.removeprefix("http://")  # a word joiner follows `http:`, so that no renderer links it
    expect(status.first, "the status line says where the run stopped").to_contain_text(where, timeout=30_000)
    shown = status.first.inner_text()
    assert "\\" not in shown, f"the status line shows escapes: {shown!r}"
    links = page.evaluate("() => [...document.querySelectorAll('a')].map(a => a.textContent)")
    assert not [text for text in links if "\\" in text or "price" in text], f"text made a link: {links}"

    open_tab(page, "All sessions")
    rows = [info.id for info in store.sessions()]
    assert rows == [session_id, other], "the table lists the newest first"
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid, "the sessions table").to_be_visible(timeout=30_000)
    grid.scroll_into_view_if_needed()
    box = box_of(grid, "the sessions table")
    assert box["height"] >= ROW * (len(rows) + 1) - 2, f"every row drawn: {box}"
    # A click on the row's task, where a person reads it (not only on the narrow row marker).
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + ROW * (rows.index(other) + 1) + ROW / 2)
    expect(page, "the URL names the session clicked").to_have_url(
        re.compile(rf"[?&]session={other}(&|$)"), timeout=30_000
    )
    expect(page.get_by_role("heading", name=other_task), "its heading").to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name=BROWNIE_TASK), "and no longer the other's").to_have_count(0)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.locator(SESSION_PICKER), "the sidebar's picker follows").to_have_value(
        re.compile(rf"{other}$"), timeout=30_000
    )
