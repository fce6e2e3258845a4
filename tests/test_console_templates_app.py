"""The console's template library, headless (streamlit.testing AppTest): each template listed once with
its versions, Delete removes every version of one, Export serves every version as one JSON file, and
Import brings such a file back (or says in one line why it cannot)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import app as closed_app
from console_helpers import console_app
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from planner.templates import Template, TemplateGoal
from sessions.client.creation import create_session
from sessions.client.templates import export_text
from sessions.store import EventStore
from sessions.store.sql import open_store


@pytest.fixture
def db(app_db: str) -> str:
    """A console on a store of its own that holds a paused dry session (its Edit plan tab shows the library)."""
    create_session(
        open_store(app_db), BROWNIE_TASK, f"script:{SCRIPTS / 'brownie.json'}", start_url="dry://start", paused=True
    )
    return app_db


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], Any]]:
    """What each download button would serve, by file name: Streamlit keeps a deferred download's data
    function in the run's media file manager, which AppTest drops after the run, so it is caught on the way in."""
    caught: dict[str, Callable[[], Any]] = {}
    register = MediaFileManager.add_deferred

    def add_deferred(self: MediaFileManager, data: Callable[[], Any], *args: Any, **kwargs: Any) -> str:
        caught[kwargs.get("file_name") or args[2]] = data
        return register(self, data, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return caught


def _goals(*descriptions: str) -> list[TemplateGoal]:
    return [TemplateGoal(description=text) for text in descriptions]


def _save_three(store: EventStore) -> None:
    """find_cheapest in two versions and sign_in in one."""
    store.save_template(Template(name="find_cheapest", params=["product"], goals=_goals("search for {product}")))
    store.save_template(
        Template(
            name="find_cheapest",
            description="sorted",
            params=["product"],
            goals=_goals("search for {product}", "sort by price low to high"),
        )
    )
    store.save_template(Template(name="sign_in", goals=_goals("type the email into Email", "click Sign in")))


def app() -> AppTest:
    """The console with the template library open (a closed one builds nothing inside)."""
    at = console_app()
    at.session_state["template_library"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_closed_library_draws_no_rows(db: str) -> None:
    _save_three(open_store(db))
    closed = closed_app()
    assert rows(closed) == [] and not [b for b in closed.button if b.key and b.key.startswith("template_delete")]
    closed.session_state["template_library"] = True
    closed.run()
    assert len(rows(closed)) == 2, "opened, it lists every template name"


def rows(at: AppTest) -> list[str]:
    """The library's lines, one per template name."""
    return [m.value for m in at.markdown if re.match(r"\*\*[\w.-]+\*\* v\d+ ", m.value)]


def note(at: AppTest) -> str:
    """The library's one-line answer to the last delete or import."""
    [answer] = [m.value for m in [*at.success, *at.error]]
    return answer


def uploader(at: AppTest):  # type: ignore[no-untyped-def]
    [widget] = [f for f in at.file_uploader if (f.key or "").startswith("tpl_upload-")]
    return widget


def import_file(at: AppTest, name: str, content: bytes) -> None:
    uploader(at).set_value((name, content, "application/json"))
    at.run()
    at.button(key="template_import_submit").click()
    at.run()
    assert not at.exception, at.exception


def test_delete_removes_every_version_of_one_template_and_says_so(db: str) -> None:
    store = open_store(db)
    _save_three(store)
    at = app()
    assert rows(at) == [
        "**find_cheapest** v2 (product) · 2 nodes · versions 1, 2 · sorted",
        "**sign_in** v1 · 2 nodes",
    ]
    at.button(key="template_delete_find_cheapest").click()
    at.run()
    assert note(at) == "deleted find_cheapest (2 versions)"
    assert [t.name for t in store.templates()] == ["sign_in"]
    assert rows(at) == ["**sign_in** v1 · 2 nodes"]
    assert not [b for b in at.button if b.key == "template_delete_find_cheapest"], "its row and button are gone"
    at.button(key="template_delete_sign_in").click()
    at.run()
    assert note(at) == "deleted sign_in (1 version)" and store.templates() == []
    assert any(c.value.startswith("No templates yet") for c in at.caption)
    assert not at.download_button, "nothing to export"


def test_export_serves_every_version_and_import_brings_them_back(db: str, served: dict[str, Any]) -> None:
    store = open_store(db)
    _save_three(store)
    at = app()
    assert at.download_button(key="template_export").label == "Export all as JSON"
    exported = served["templates.json"]()
    assert exported == export_text(store)
    document = json.loads(exported)
    assert document["format"] == "andor-templates"
    assert [(t["name"], t["version"]) for t in document["templates"]] == [
        ("find_cheapest", 1),
        ("find_cheapest", 2),
        ("sign_in", 1),
    ]
    bodies = [t.body() for t in store.templates()]
    for name in ("find_cheapest", "sign_in"):
        at.button(key=f"template_delete_{name}").click()
        at.run()
    assert store.templates() == []
    import_file(at, "templates.json", exported.encode())
    assert note(at) == "imported find_cheapest v1, find_cheapest v2, sign_in v1"
    assert [t.body() for t in store.templates()] == bodies, "the same templates, every version, in order"
    assert len(rows(at)) == 2
    at.button(key="template_import_submit").click()
    at.run()
    assert note(at) == "imported nothing new; 3 already here"
    assert len(store.templates()) == 3


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        (None, b"", "Choose a JSON file of templates first."),
        (
            "latin.json",
            '{"café": 1}'.encode("latin-1"),
            "latin.json is not UTF-8 text; choose a JSON file exported here.",
        ),
        ("broken.json", b"{not json", "broken.json: "),
        ("other.json", b'{"tasks": []}', "other.json: it is not a template file: an exported file is a JSON object"),
        (
            "bad.json",
            b'{"format": "andor-templates", "templates": [{"name": "x y", "goals": [{"description": "a"}]}]}',
            "bad.json: it is not a usable template file: ",
        ),
    ],
)
def test_import_refuses_a_file_it_cannot_use_in_one_line(db: str, name: str | None, content: bytes, says: str) -> None:
    store = open_store(db)
    _save_three(store)
    at = app()
    if name is None:
        at.button(key="template_import_submit").click()
        at.run()
    else:
        import_file(at, name, content)
    answer = note(at)
    assert answer.startswith(says) and "\n" not in answer, answer
    assert not at.success, "nothing was imported"
    assert len(store.templates()) == 3, "the store is as it was"
