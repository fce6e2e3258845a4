"""Typing into the real editors: CodeMirror 5 and 6, Monaco, ProseMirror, TipTap, Quill and a plain
`contenteditable`, built from their npm packages (`tests/foreign/editors`, `make foreign`).

`type` replaces what an editor holds, never adds to it: each editor starts with text of its own, and
the test reads every editor back through the editor's own API (`bench.foreign_editors.READ_BACK_JS`,
which uses the instances the page keeps for tests, not the way the agent reached them). The
observation shows each editor as one textbox whose value is the editor's whole text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bench.browser import shown_elements
from bench.foreign_editors import EDITOR_KINDS, READ_BACK_JS, serve_editors
from planner.browser.environment import BrowserEnvironment

pytestmark = pytest.mark.browser

LABELS = {
    "codemirror5": "SQL query (CodeMirror 5)",
    "codemirror6": "SQL query (CodeMirror 6)",
    "monaco": "SQL query (Monaco)",
    "prosemirror": "Release notes (ProseMirror)",
    "tiptap": "Meeting notes (TipTap)",
    "quill": "Comment (Quill)",
    "contenteditable": "Notes (contenteditable)",
}
TYPED = "select name, size from packages\nwhere size > 10"


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnvironment]:
    with serve_editors() as url, BrowserEnvironment(url) as environment:
        environment.start()
        environment._require_page().wait_for_function("window.__ready === true", timeout=30_000)
        yield environment


def test_every_editor_kind_is_one_textbox_showing_its_whole_text(env: BrowserEnvironment) -> None:
    page = env.observe()
    held = env._require_page().evaluate(READ_BACK_JS)
    textboxes = {shown.name: shown for shown in shown_elements(page.text) if shown.role == "textbox"}
    assert sorted(textboxes) == sorted(LABELS.values()), f"not one textbox per editor:\n{page.text}"
    for kind in EDITOR_KINDS:
        shown, _ = json.JSONDecoder().raw_decode(textboxes[LABELS[kind]].rest.split("value=", 1)[1])
        assert " ".join(shown.split()) == " ".join(held[kind].split()), f"{kind} shows {shown!r}"


def test_type_replaces_the_text_of_every_editor_kind(env: BrowserEnvironment) -> None:
    page = env.observe()
    ids = {shown.name: shown.id for shown in shown_elements(page.text) if shown.role == "textbox"}
    failures = {}
    for kind in EDITOR_KINDS:
        result = env.execute(f"type [{ids[LABELS[kind]]}] [{TYPED}] [0]")
        if not result.ok:
            failures[kind] = result.error
    assert failures == {}
    held = env._require_page().evaluate(READ_BACK_JS)
    assert {kind: held[kind].replace("\u00a0", " ") for kind in EDITOR_KINDS} == dict.fromkeys(EDITOR_KINDS, TYPED)
