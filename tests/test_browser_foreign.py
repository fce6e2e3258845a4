"""The browser on applications nobody here wrote: the foreign gallery (bench/foreign.py) in real Chromium.

One page of each app where the gallery found trouble: the admin's change list (its filter sidebar on
the screen after a 100-row table), Datasette's sorted table and its SQL editor, Flask-Admin's list of
icon row actions, and a JupyterLab notebook (drawn by scripts after the page loads; its cells are
CodeMirror 6 editors). The same measures as `python -m bench.browser --part foreign`, on fewer ids:
every control on the first screen has an id, each id tried acts on the element it names (its trusted
event lands there, the app's own handlers kept from acting by the bench's trap), the observation is far
smaller than the page, and typing into an app's editor replaces its text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from bench.browser import ForeignFigures, measure_foreign_page, shown_elements
from bench.foreign import ForeignApp, start_app
from planner.browser.environment import BrowserEnvironment

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = {
    "django-admin": "/admin/shop/order/?status__exact=shipped&o=-5&p=2",
    "datasette": "/index/packages?_sort_desc=downloads&_facet=license_id",
    "flask-admin": "/admin/ticket/",
    "jupyterlab": "/lab/tree/demo.ipynb",
}
SAMPLE = 10
"""Ids tried per page: forty over the four apps (the bench tries 24 on each of 21 pages)."""


@pytest.fixture(scope="module")
def apps() -> Iterator[dict[str, ForeignApp]]:
    with ExitStack() as stack:
        yield {name: stack.enter_context(start_app(name)) for name in PAGES}


@pytest.fixture(scope="module")
def measured(apps: dict[str, ForeignApp]) -> Iterator[dict[str, ForeignFigures]]:
    figures = {}
    for name, path in PAGES.items():
        app = apps[name]
        with BrowserEnvironment(app.url + path, storage_path=app.storage_state) as env:  # logged in where needed
            task = next(task for task in app.pages if task.path == path)
            figures[name] = measure_foreign_page(env, name, app.url, task, SAMPLE, app.storage_state, reach=False)
    yield figures


@pytest.mark.parametrize("name", list(PAGES))
def test_every_control_on_the_first_screen_gets_an_id(measured: dict[str, ForeignFigures], name: str) -> None:
    figures = measured[name]
    assert figures.on_screen >= 10, f"{name}: the page did not draw ({figures.on_screen} controls on screen)"
    missing = [miss for miss in figures.misses if miss.startswith("no id on screen")]
    assert figures.first_screen == figures.on_screen, f"{name}: {missing}"


@pytest.mark.parametrize("name", list(PAGES))
def test_each_id_acts_on_the_element_it_names(measured: dict[str, ForeignFigures], name: str) -> None:
    figures = measured[name]
    assert figures.actions >= SAMPLE // 2, f"{name}: only {figures.actions} ids tried"
    failed = [miss for miss in figures.misses if not miss.startswith("no id on screen")]
    assert figures.round_trips == figures.actions, f"{name}: {failed}"


@pytest.mark.parametrize("name", list(PAGES))
def test_the_observation_is_far_smaller_than_the_page(measured: dict[str, ForeignFigures], name: str) -> None:
    figures = measured[name]
    assert figures.observation_chars <= 6000
    assert figures.html_chars >= 8 * figures.observation_chars, (
        f"{name}: {figures.html_chars} vs {figures.observation_chars}"
    )


@pytest.mark.parametrize(
    ("name", "path", "label"),
    [("datasette", "/index", ""), ("jupyterlab", "/lab/tree/demo.ipynb", "[ ]:")],
)
def test_typing_into_an_apps_code_editor_replaces_its_text(
    apps: dict[str, ForeignApp], name: str, path: str, label: str
) -> None:
    """Datasette's SQL editor and a notebook's code cell (CodeMirror 6): the text typed is what the editor
    holds after, not added to what it held (the issue's `hk13xselect * from packages`)."""
    app = apps[name]
    typed = "select name, downloads from packages\nwhere downloads > 1000"
    with BrowserEnvironment(app.url + path) as env:
        env.observe()
        task = next((task for task in app.pages if task.path == path), None)
        if task is not None and task.ready:  # the notebook's cells are drawn after the lab itself
            env._require_page().wait_for_function(task.ready, timeout=60_000)
        page = env.observe()
        editors = [s for s in shown_elements(page.text) if s.role == "textbox" and "value=" in s.rest]
        editor = next(s for s in editors if s.name == label) if label else editors[0]
        before, _ = json.JSONDecoder().raw_decode(editor.rest.split("value=", 1)[1])
        assert before.strip(), f"the editor showed no text to replace:\n{page.text}"
        result = env.execute(f"type [{editor.id}] [{typed}] [0]")
        assert result.ok and result.page is not None, result.error
        after = next(s for s in shown_elements(result.page.text) if s.id == editor.id)
        held, _ = json.JSONDecoder().raw_decode(after.rest.split("value=", 1)[1])
        assert held == typed
