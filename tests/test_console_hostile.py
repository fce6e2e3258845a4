"""Model, page and operator text never becomes Markdown or HTML in the real console (issue 9 item 4).

A session whose every text field carries Markdown image/link/HTML payloads pointing at a local
"attacker" HTTP server is written straight into a store; the real console (`streamlit run app.py`)
shows it in headless Chromium while the test visits every tab, the inspector of every node, the
tree's tooltips, the timeline and the exports. The attacker must see no request, the page must hold
no element pointing at it, and the payloads must be on screen as characters.

Without a browser: the escaping rule (`sessions.client.markdown`) on every payload and on random text, the Markdown
report and the DOT/SVG export of the same sessions.
"""

from __future__ import annotations

import re
import shutil
import string
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from console_helpers import NODE_PICKER
from hypothesis import given
from hypothesis import strategies as st
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from planner.config import EngineConfig
from planner.events import ActionExecuted, Event, Kind
from planner.state import Recorder, SessionState
from sessions.client.export import markdown_report, tree_dot, tree_svg
from sessions.client.markdown import md, md_line, short
from sessions.store import EventStore
from sessions.store.sql import open_store
from ui.server import ConsoleProcess, start_console

WJ = "\u2060"
"""The invisible word joiner the escaping rule puts into URLs so no renderer links them."""


class Attacker:
    """A stdlib HTTP server on 127.0.0.1 that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_HEAD = do_GET

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def payloads(host: str) -> list[str]:
    """Every way we know for text to become a request, an element or a link in Markdown or HTML."""
    return [
        f"![b](http://{host}/md-img.png)",
        f"[l](http://{host}/md-link)",
        f'<img src="http://{host}/html-img.png">',
        f"<script>fetch('http://{host}/js')</script>",
        f"<http://{host}/autolink>",
        f"![r][x]\n\n[x]: http://{host}/ref.png",
        f'<iframe src="http://{host}/iframe"></iframe>',
        f'<a href="http://{host}/a">a</a>',
        f"<svg onload=\"fetch('http://{host}/svg')\"></svg>",
        "<<b>x</b>>",
        f"bare http://{host}/bare www.example.com/www mail@example.com",
        "$x^2$ :material/home: :red[red] :help[tip] &lt;b&gt; **bold** `code` ~~gone~~",
    ]


def hostile(tag: str, host: str) -> str:
    """`tag` (to find the field on screen) followed by every payload."""
    return f"{tag} " + "\n".join(payloads(host))


def first_line(tag: str, host: str) -> str:
    """What the field's first line must read as, character for character."""
    return f"{tag} ![b](http://{host}/md-img.png)"


LIVE, DONE = "hostile-live", "hostile-done"


def hostile_sessions(host: str) -> dict[str, tuple[SessionState, list[Event]]]:
    """Two sessions, every text field hostile: `LIVE` waits for approval mid-run (plan editing, the
    approval box), `DONE` failed with a final answer. Each with its final state and its events."""

    def p(tag: str) -> str:
        return hostile(tag, host)

    config = EngineConfig(max_cost_usd=5.0).model_dump(mode="json")
    usage = {"input_tokens": 120, "output_tokens": 30, "cost_usd": 0.0012, p("usage-key"): p("usage-value")}

    state = SessionState()
    rec = Recorder(state)
    rec.record(
        Kind.SESSION_CREATED,
        task=p("task"),
        start_url=f"http://{host}/start",
        model=p("model"),
        config=config,
        status="running",
    )
    rec.record(Kind.CONSTRAINTS_SET, constraints=[p("constraint-one"), p("constraint-two")])
    rec.record(Kind.STEP, "0", frame="entering", work="expand")  # typed: the schema refuses other work
    rec.record(
        Kind.MODEL_CALL,
        "0",
        question="expand",  # typed: the schema refuses an unknown question or a textual attempt
        attempt=1,
        ok=False,
        error=p("model-error"),
        output=None,
        prompt=p("prompt"),
        raw=p("raw"),
        usage=usage,
        latency_ms=12.5,
    )
    rec.record(
        Kind.MODEL_CALL,
        "0",
        question="expand",
        attempt=2,
        ok=True,
        error=None,
        output={"plan": p("output")},
        prompt=p("prompt-two"),
        raw=p("raw-two"),
        usage=usage,
        latency_ms=30.0,
    )
    rec.record(
        Kind.NODE_EXPANDED,
        "0",
        type="AND",
        note=p("expansion-note"),
        children=[
            {"id": "0.1", "description": p("desc-or")},
            {"id": "0.2", "description": p("desc-unknown"), "action": p("planned")},
        ],
    )
    rec.record(Kind.STEP, "0.1", frame="entering", work="expand")
    rec.record(
        Kind.NODE_EXPANDED,
        "0.1",
        type="OR",
        note=p("or-note"),
        children=[
            {"id": "0.1.1", "description": p("desc-alt-one"), "score": 0.8},
            {"id": "0.1.2", "description": p("desc-alt-two"), "score": 0.4},
        ],
    )
    rec.record(Kind.NODE_EXPANDED, "0.1.1", type="ACTION", action=p("action"))
    rec.record(
        Kind.ACTION_EXECUTED,
        "0.1.1",
        url=f"http://{host}/page-url",
        title=p("title"),
        observation=p("page-text"),
        obs_chars=200,
        html_chars=4000,
        action=p("action"),
        ok=False,
        error=p("action-error"),
        screenshot=f"http://{host}/shot.png",
        duration_ms=3.0,
    )
    rec.record(
        Kind.OBSERVED,
        "0.1.1",
        summary=p("summary"),
        progress=p("progress"),
        feedback=p("feedback"),
        notes=[p("observed-note")],
        proposals=[{"node": "0.2", "action": p("ahead")}],
        candidates=[
            {"name": p("candidate"), "fields": {p("field"): p("value")}, "unmet": [p("unmet")], "verdict": p("verdict")}
        ],
    )
    rec.record(Kind.NOTE_ADDED, "0.1.1", text=p("note"))
    rec.record(Kind.UPDATE_REFUSED, "0.1", reason=p("refusal"))
    rec.record(
        Kind.NODES_ADDED,
        "0",
        origin="operator",
        position=None,
        nodes=[{"id": "0.3", "description": p("desc-operator")}, {"id": "0.4", "description": p("desc-pruned")}],
    )
    rec.record(
        Kind.COMMAND_APPLIED,
        "0",
        command_id="c1",
        command={"kind": "inject", "command_id": "c1", "parent": "0", "goals": [p("goal")]},
    )
    rec.record(Kind.STATUS_CHANGED, "0.4", status="PRUNED", reason=p("prune-reason"))
    rec.record(
        Kind.COMMAND_APPLIED,
        "0.4",
        command_id="c2",
        command={"kind": "prune", "command_id": "c2", "node": "0.4", "reason": p("prune-reason")},
    )
    rec.record(
        Kind.COMMAND_REJECTED,
        "0",
        command_id="c3",
        reason=p("rejection"),
        command={"kind": p("command-kind"), "command_id": "c3", "node": "0", "child": p("child")},
    )
    rec.record(Kind.NODE_REWRITTEN, "0.3", description=p("desc-rewritten"), by="operator")
    rec.record(Kind.SESSION_STATUS, status="paused", reason=p("pause-reason"))
    rec.record(
        Kind.APPROVAL_REQUESTED,
        "0.1.2",
        action=p("guarded-action"),
        rule=p("rule"),
        role=p("element-role"),
        name=p("element-name"),
    )
    live_events = rec.take()

    done = SessionState()
    rec = Recorder(done)
    rec.record(
        Kind.SESSION_CREATED,
        task=p("task-done"),
        start_url=f"http://{host}/start",
        model=p("model"),
        config=config,
        status="running",
    )
    rec.record(Kind.CONSTRAINTS_SET, constraints=[])
    rec.record(Kind.STEP, "0", frame="entering", work="expand")
    rec.record(Kind.NODE_EXPANDED, "0", type="AND", children=[{"id": "0.1", "description": p("desc-done")}])
    rec.record(Kind.NODE_EXPANDED, "0.1", type="ACTION", action=p("done-action"))
    rec.record(
        Kind.ACTION_EXECUTED,
        "0.1",
        url=f"http://{host}/done-url",
        title=p("title"),
        observation=p("page-text"),
        obs_chars=10,
        html_chars=10,
        action=p("done-action"),
        ok=True,
        error=None,
        screenshot=None,
        duration_ms=1.0,
    )
    rec.record(Kind.STATUS_CHANGED, "0", status="FAIL", reason=p("root-reason"))
    rec.record(Kind.SESSION_FINISHED, status="failed", reason=p("finish-reason"), final_answer=p("final-answer"))
    return {LIVE: (state, live_events), DONE: (done, rec.take())}


def store_sessions(store: EventStore, host: str) -> None:
    """The hostile sessions in a store, plus a queued command whose kind is hostile too."""
    for session_id, (state, events) in hostile_sessions(host).items():
        store.create_session(
            session_id,
            state.task,
            state.model,
            events,
            status=state.status.value,
            reason=state.reason,
            steps=state.steps,
        )
    store.enqueue(LIVE, "q1", {"kind": hostile("queued-kind", host), "command_id": "q1"})


# -- the rule and the exports, without a browser ---------------------------------------------------

HOST = "127.0.0.1:9"
"""Nothing listens there, and these tests never fetch: the host only has to look real."""

RAW = [
    "![b](", "[l](", "<img", "<script", "<http", "<iframe", "<a href", "<svg", "<<b>", "]: http", "http://",
    "www.example", "mail@", ":material/home", ":red[", ":help[", "$x^2$", "**bold**", "`code`", "~~gone~~",
]  # fmt: skip
"""Pieces of the payloads that must never reach a Markdown renderer as they are."""

_ACTIVE = set("\\`*[]<>#|~$")
"""Characters that are markup wherever they stand; `(`, `)`, `!`, `{`, `}` are not once these are escaped."""
_ENTITY = re.compile(r"&(?=#|[A-Za-z0-9]+;)")
_WORD = re.compile(r"[^\W_]")


def _active_underscore(markdown: str, i: int) -> bool:
    """An underscore run that touches anything but a letter or digit (one inside a word is never emphasis)."""
    start, end = i, i
    while start > 0 and markdown[start - 1] == "_":
        start -= 1
    while end < len(markdown) and markdown[end] == "_":
        end += 1
    inside = start > 0 and end < len(markdown) and _WORD.match(markdown[start - 1]) and _WORD.match(markdown[end])
    return not inside


_BLOCK = re.compile(r"^\s*(?:[-+=]|\d+[.)](?=\s|$))")
_REWRITTEN = re.compile(r"(?i)https?://|www\.|[\w.+-]@|:[a-z_/]|(?<!\S)(?:<->|->|<-|--|>=|<=|~=)(?!\S)")
"""What GFM and Streamlit rewrite in the parsed text: literal links, directives and icons, arrows."""


def parsed(markdown: str, *, strict: bool = False) -> str:
    """The text a Markdown parser makes of `markdown` when nothing in it is markup: backslash escapes
    resolved, word joiners kept. `strict` fails on any active character left unescaped."""
    out, i = [], 0
    while i < len(markdown):
        char = markdown[i]
        if char == "\\" and i + 1 < len(markdown) and markdown[i + 1] in string.punctuation:
            out.append(markdown[i + 1])
            i += 2
            continue
        assert not (strict and char in _ACTIVE), f"{char!r} left active at {i} in {markdown!r}"
        here = _ENTITY.match(markdown, i) or (char == "_" and _active_underscore(markdown, i))
        assert not (strict and here), f"{char!r} left active at {i} in {markdown!r}"
        out.append(char)
        i += 1
    return "".join(out)


def live_markup(markdown: str) -> list[str]:
    """The pieces of `RAW` that a Markdown renderer would still see in `markdown` (escaped characters are
    masked first, so an escaped `\\<img` does not count)."""
    masked = re.sub(r"\\[!-/:-@\[-`{-~]", "\0", markdown)
    return [piece for piece in RAW if piece in masked]


def inert(markdown: str) -> str:
    """Check that the rule's output holds no markup at all and return what a reader sees."""
    for line in markdown.split("\n"):
        assert not _BLOCK.match(line), f"{line!r} opens a block"
    text = parsed(markdown, strict=True)
    assert not _REWRITTEN.search(text), f"{_REWRITTEN.search(text)} would still be rewritten in {text!r}"
    assert ":material/" not in markdown, "Streamlit rewrites :material/ in the raw source"
    return text.replace(WJ, "")


_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.*?)(?<!`)\1(?!`)")


def session_urls(state: SessionState, events: list[Event]) -> set[str]:
    """The URLs a report shows as such: the start URL and each page an action left the browser on."""
    pages = {e.payload.url for e in events if isinstance(e.payload, ActionExecuted) and e.payload.url}
    return pages | ({state.start_url} if state.start_url else set())


def without_urls(report: str, urls: set[str]) -> str:
    """`report` without its code spans, each of which must hold exactly one of `urls` (`md_url`):
    nothing inside one is markup, and no other text may use one."""

    def drop(found: re.Match[str]) -> str:
        content = found.group(2)
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        assert content in urls, f"a code span holds {content!r}, not a URL of the session"
        return ""

    return _CODE_SPAN.sub(drop, report)


EXTRA = [
    "a -> b <- c <-> d -- e >= f <= g ~= h",
    "  - indented item\n  3. numbered\n+ plus\n=====\n---",
    "12:30 see https://example.com/x?a=1&b=2 or WWW.Example.com, mail me: a.b+c@d.example.org",
    ":streamlit: :material_home: :smile: ::leaf[x]\n:::container\nx\n:::",
    "\\![b](x) \\\\<b> &amp; &#x3C; [^1]\n\n[^1]: note",
    "| a | b |\n|---|---|\n| c | d |",
]


@pytest.mark.parametrize("text", [*payloads(HOST), hostile("tag", HOST), *EXTRA])
def test_the_rule_leaves_every_payload_inert_and_readable(text: str) -> None:
    assert inert(md_line(text)) == short(text, 10_000)
    assert [inert(line) for line in md(text).split("  \n") if text.splitlines()] == text.splitlines()


@given(st.text())
def test_the_rule_on_any_text(text: str) -> None:
    text = text.replace(WJ, "")
    assert inert(md_line(text)) == short(text, 10_000)
    assert [inert(line) for line in md(text).split("  \n") if text.splitlines()] == text.splitlines()


def test_the_report_keeps_every_field_as_text() -> None:
    for session_id, (state, events) in hostile_sessions(HOST).items():
        report = without_urls(markdown_report(session_id, state, events), session_urls(state, events))
        assert live_markup(report) == [], f"payloads reached the report of {session_id} as they are"
        rewritten = _REWRITTEN.findall(parsed(report))
        assert rewritten == [], f"a renderer would turn {rewritten} in the report of {session_id} into links or icons"
        shown = parsed(report).replace(WJ, "")
        tags = ["task", "model", "constraint-one", "candidate", "note", "desc-or", "goal", "rejection", "pause-reason"]
        if session_id == DONE:
            tags = ["task-done", "final-answer", "finish-reason", "root-reason"]
        for tag in tags:
            assert first_line(tag, HOST) in shown, f"the {tag} field is missing from the report of {session_id}"


def test_dot_labels_stay_plain_strings() -> None:
    state = hostile_sessions(HOST)[LIVE][0]
    state.tree["0.2"].description = "<<b>x</b>>"
    dot = tree_dot(state)
    labels = re.findall(r"label=(.)", dot)
    assert len(labels) == len(state.tree) and set(labels) == {'"'}, "every label is a quoted string"
    assert "\\n<<b>x</b>>\\n" in dot, "an HTML-like label stays characters inside the quoted label"
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")
    svg = tree_svg(state).decode()
    assert "&lt;&lt;b&gt;x&lt;/b&gt;&gt;" in svg
    assert not re.search(r"<(?:img|script|iframe|a|b|foreignObject)\b", svg), "the SVG holds markup made from text"
    assert "<svg onload" not in svg and f'src="http://{HOST}' not in svg


# -- the browser side ------------------------------------------------------------------------------

_FORBIDDEN = """(host) => {
  const found = [];
  const where = (el) => {
    const owner = el.closest('[data-testid]:not([data-testid="stMarkdownContainer"])');
    return owner ? ` in ${owner.dataset.testid}: ${(owner.innerText || '').slice(0, 60).replace(/\\s+/g, ' ')}` : '';
  };
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      for (const attr of el.attributes) {
        const typed = attr.name === 'value' && ['input', 'textarea', 'option'].includes(tag);  // what a field holds
        if (!typed && attr.value.includes(host)) found.push(`<${tag} ${attr.name}="${attr.value.slice(0, 90)}">${where(el)}`);
      }
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  const markup = 'img, iframe, script, object, embed, video, audio, source, svg:not(a[href^="#"] svg), a:not([href^="#"])';
  for (const container of document.querySelectorAll('[data-testid="stMarkdownContainer"]')) {
    for (const el of container.querySelectorAll(markup)) {
      found.push(`<${el.tagName.toLowerCase()}> inside Markdown: ${el.outerHTML.slice(0, 100)}${where(el)}`);
    }
  }
  return found;
}"""


class Visit:
    """The page plus what every view left behind: forbidden elements and requests to the attacker."""

    def __init__(self, page: Page, attacker: Attacker) -> None:
        self.page = page
        self.host = attacker.host
        self.requests: list[str] = []
        page.on("request", lambda request: self._request(request.url))

    def _request(self, url: str) -> None:
        if self.host in url:
            self.requests.append(url)

    def text(self) -> str:
        """The page's visible text as a reader sees it (the invisible word joiners dropped)."""
        return self.page.locator("body").inner_text().replace(WJ, "")

    def wait_for_text(self, needle: str, what: str, timeout: float = 60.0) -> None:
        """Wait until `needle` is on screen, failing at once if the page meanwhile holds markup made from text."""
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            self.check(what)
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}: {needle!r} is not on the page")
            time.sleep(0.25)
        self.check(what)

    def check(self, where: str) -> None:
        """Fail at once on any element that points at the attacker or is markup made from text."""
        found = self.page.evaluate(_FORBIDDEN, self.host)
        assert not found, f"{where}: page text became markup:\n" + "\n".join(found)

    def expect_shown(self, tags: list[str], where: str) -> None:
        """Each tagged field's first line is on screen as characters (so the test is not vacuous), and
        nothing on the page is markup made from text."""
        for tag in tags:
            self.wait_for_text(first_line(tag, self.host), f"the {tag} field as text in {where}")

    def open_tab(self, name: str) -> None:
        self.page.get_by_role("tab", name=name, exact=True).click()

    def select_node(self, node_id: str) -> None:
        """Pick a node in the searchable selector, as an operator would."""
        picker = self.page.locator(NODE_PICKER)
        picker.click()
        picker.fill(node_id)
        self.page.get_by_role("option", name=re.compile(rf"^{re.escape(node_id)} · ")).first.click()
        expect(picker).to_have_value(re.compile(rf"^{re.escape(node_id)} · "), timeout=30_000)

    def show_options(self, key: str) -> None:
        """Open a selectbox's list (a click can land while the panel redraws, so try a few times)."""
        options = self.page.get_by_role("option")
        field = self.page.locator(f'[class*="st-key-{key}-"] input')  # form fields carry their scope
        # The form of the node selected before may linger for one redraw: wait until only this one is left.
        expect(field, f"one {key} field, the selected node's").to_have_count(1, timeout=30_000)
        for _ in range(6):
            field.click()
            try:
                expect(options.first).to_be_visible(timeout=10_000)
                return
            except AssertionError:
                self.page.keyboard.press("Escape")
        raise AssertionError(f"the options of {key} never opened")

    def download(self, button: Locator, name: str) -> str:
        """Click a download button and return the file's text (retrying a click lost to a redraw)."""
        for _ in range(4):
            try:
                with self.page.expect_download(timeout=20_000) as download:
                    button.click()
            except PlaywrightTimeoutError:
                continue
            return Path(download.value.path()).read_text()
        raise AssertionError(f"{name} never downloaded")

    def open_expanders(self) -> None:
        """Open every visible expander (the model calls, the legend) so their content is drawn."""
        closed = self.page.locator("[data-testid='stExpander'] details:not([open]) > summary").filter(visible=True)
        for _ in range(30):
            if not closed.count():
                return
            try:
                closed.first.click(timeout=5_000)
            except PlaywrightTimeoutError:
                continue  # a redraw replaced the one counted (or opened it): count again
        raise AssertionError(f"{closed.count()} expanders stayed closed after 30 clicks")

    def hover_node(self, node_id: str) -> None:
        """Rest the mouse on a node's symbol (its label sits just below it), once the chart stands still."""
        pattern = re.compile(rf"^(?:\S+ )*(?:AND|OR|ACT|\?) {re.escape(node_id)}(?: ·.*)?$")
        labels = self.page.locator("svg text")
        expect(labels.first).to_be_visible(timeout=30_000)
        box, previous = None, None
        for _ in range(40):
            texts = labels.all_text_contents()
            index = next((i for i, text in enumerate(texts) if pattern.match(text.strip())), None)
            assert index is not None, f"no label for node {node_id} in the chart: {texts[:12]}"
            # The inspector's opened expanders make the page long: the chart may be scrolled out of
            # the window, where a mouse move hovers nothing.
            labels.nth(index).scroll_into_view_if_needed()
            box = labels.nth(index).bounding_box()
            if box is not None and box == previous:
                break
            previous = box
            time.sleep(0.3)
        assert box is not None, f"the label of node {node_id} has no box"
        self.page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 7)

    def hover_until_tooltip(self, node_id: str, needle: str, timeout: float = 60.0) -> None:
        """Rest the mouse on a node until its tooltip shows `needle`, checking the page all along.

        The live session's chart redraws now and then, and a redraw drops a tooltip the mouse had
        opened; so the mouse leaves and rests on the node again every few seconds."""
        what = f"the tooltip of {node_id}"
        deadline = time.monotonic() + timeout
        while True:
            self.page.mouse.move(2, 2)
            self.hover_node(node_id)
            try:
                self.wait_for_text(needle, what, timeout=4.0)
                return
            except AssertionError as missing:
                if "timed out" not in str(missing):
                    raise
                if time.monotonic() > deadline:
                    raise AssertionError(f"timed out after {timeout:g} s hovering for {what}: {needle!r}") from missing


@pytest.fixture(scope="module")
def attacker() -> Iterator[Attacker]:
    server = Attacker()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hostile_console(tmp_path_factory: pytest.TempPathFactory, attacker: Attacker) -> Iterator[ConsoleProcess]:
    db = tmp_path_factory.mktemp("hostile") / "console.db"
    store = open_store(db)
    store_sessions(store, attacker.host)
    store.close()
    running = start_console(db)
    yield running
    running.stop()


def open_session(visit: Visit, console: ConsoleProcess, session_id: str, task_tag: str) -> None:
    visit.page.set_viewport_size({"width": 1500, "height": 1150})
    visit.page.goto(f"{console.url}/?session={session_id}")
    visit.expect_shown([task_tag], f"session {session_id}'s task heading")
    expect(visit.page.locator("svg text").first).to_be_visible(timeout=30_000)


INSPECTED = {
    "0": ["task", "expansion-note", "model-error", "usage-key", "prompt", "raw", "output"],
    "0.1": ["desc-or", "or-note"],
    "0.1.1": ["desc-alt-one", "action", "action-error", "summary", "progress"],
    "0.1.2": ["desc-alt-two"],
    "0.2": ["desc-unknown", "ahead"],
    "0.3": ["desc-rewritten"],
    "0.4": ["desc-pruned", "prune-reason"],
}
"""Each node, and the fields its inspector shows."""


@pytest.mark.browser
@pytest.mark.slow
def test_hostile_text_stays_text_in_every_view(
    page: Page, hostile_console: ConsoleProcess, attacker: Attacker, tmp_path: Path
) -> None:
    console = hostile_console
    visit = Visit(page, attacker)
    host = attacker.host
    open_session(visit, console, LIVE, "task")
    visit.expect_shown(
        ["guarded-action", "rule", "element-role", "element-name"], "the status line and the approval box"
    )
    visit.wait_for_text("Queued for the next step boundary: queued-kind", "the queued command")

    for node_id, tags in INSPECTED.items():
        visit.select_node(node_id)
        visit.open_expanders()
        visit.expect_shown(tags, f"the inspector of {node_id}")

    # The chart's HTML tooltips.
    visit.hover_until_tooltip("0.4", f"reason: {first_line('prune-reason', host)}")
    visit.hover_until_tooltip("0.1.1", f"action: {first_line('action', host)}")

    visit.open_tab("Task & answer")
    visit.expect_shown(
        ["constraint-one", "constraint-two", "observed-note", "note", "progress", "feedback"], "Task & answer"
    )
    visit.wait_for_text(f"http://{host}/page-url", "the current page")

    visit.select_node("0.1")  # then the tab: a node change redraws the whole page (see ui/url.py)
    visit.open_tab("Edit plan")
    visit.wait_for_text("Edit the plan at 0.1 (OR, VISITED)", "Edit plan at 0.1")
    described = visit.page.get_by_role("textbox", name="Description")
    expect(described).to_have_value(re.compile(re.escape(first_line("desc-or", host))), timeout=30_000)
    for key in ("inject_position", "force_child"):
        visit.show_options(key)
        visit.check(f"the {key} options")
        visit.page.keyboard.press("Escape")
    visit.select_node("0.4")
    visit.open_tab("Edit plan")
    expect(visit.page.get_by_role("button", name="Reopen 0.4")).to_be_visible(timeout=30_000)
    visit.check("Edit plan at 0.4")
    visit.open_tab("Run settings")
    visit.wait_for_text("Task constraints (one per line", "the run's settings")
    visit.check("Run settings")

    visit.open_tab("Timeline")
    slider = visit.page.get_by_role("slider")
    slider.focus()
    visit.page.keyboard.press("ArrowLeft")
    visit.wait_for_text("At event 20: step 2, paused", "the timeline at the pause")
    visit.expect_shown(["pause-reason"], "the timeline's status line")
    visit.wait_for_text("Since event 20:", "the plan as it was, drawn as a chart")
    visit.check("the timeline's chart of the plan as it was")

    if not visit.page.get_by_role("button", name="Trace JSON").is_visible():  # open_expanders may have opened it
        visit.page.get_by_text("Export: trace, tree, report").click()
    downloads: dict[str, str] = {}
    for name in ("Trace JSON", "Tree (DOT)", "Tree (SVG)", "Report (Markdown)"):
        button = visit.page.get_by_role("button", name=name)
        if name == "Tree (SVG)" and not button.count():
            continue  # no Graphviz here: the tab says how to get it
        downloads[name] = visit.download(button, name)
    visit.check("Export")
    urls = set().union(*(session_urls(*session) for session in hostile_sessions(host).values()))
    report = without_urls(downloads["Report (Markdown)"], urls)
    assert "![b](" not in report and f"http://{host}" not in report, "the report kept a live image or link"
    assert "label=<" not in downloads["Tree (DOT)"], "a DOT label became an HTML-like label"
    if "Tree (SVG)" in downloads:
        svg = tmp_path / "plan.svg"
        svg.write_text(downloads["Tree (SVG)"])
        viewer = page.context.new_page()
        viewer.goto(svg.as_uri())
        expect(viewer.locator("svg text").first).to_be_attached(timeout=30_000)
        assert not viewer.evaluate(_FORBIDDEN, host), "the SVG export holds markup made from text"
        viewer.close()

    visit.open_tab("All sessions")
    expect(visit.page.locator("[data-testid='stDataFrame']").last).to_be_visible(timeout=30_000)
    visit.check("All sessions")

    open_session(visit, console, DONE, "task-done")
    visit.expect_shown(["finish-reason"], "the status line of a failed session")
    visit.open_tab("Node")
    visit.select_node("0")
    visit.expect_shown(["root-reason"], "the inspector of a failed root")
    visit.open_tab("Task & answer")
    visit.expect_shown(["final-answer"], "the final answer")

    assert visit.requests == [], f"Chromium asked the attacker for {visit.requests}"
    assert attacker.requests == [], f"the attacker server was asked for {attacker.requests}"
