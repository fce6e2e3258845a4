"""A declared secret in real Chromium: the page gets its value, the model's view and the screenshots never do."""

from __future__ import annotations

import html
import json
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest
from PIL import Image
from test_browser import browser_test, element_id

from planner.browser.environment import BrowserEnvironment

PASSWORD = "s3cret-Value-42"

_FORM = """<!doctype html><title>Sign in</title>
<form action="/hello" method="get">
  <label>Member code <input name="code" style="width: 400px; height: 40px; font-size: 24px"></label>
  <button>Sign in</button>
</form>"""


class _Server(BaseHTTPRequestHandler):
    """The form, and /hello, which greets whatever code it was sent (and keeps it, for the test)."""

    received: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        status = 200
        if url.path == "/hello":
            code = parse_qs(url.query).get("code", [""])[0]
            self.received.append(code)
            body = f"<!doctype html><title>Hello {html.escape(code)}</title><p>Welcome, member {html.escape(code)}</p>"
        elif url.path == "/broken":
            status, body = 500, "<!doctype html><title>Broken</title><p>try again</p>"
        else:
            body = _FORM
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def site() -> Iterator[str]:
    _Server.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _pink_share(shot: str, box: dict[str, float]) -> float:
    """How much of `box` in the screenshot is Playwright's mask colour (#FF00FF), JPEG noise allowed."""
    image = Image.open(shot).convert("RGB")
    inner = (int(box["x"]) + 4, int(box["y"]) + 4, int(box["x"] + box["width"]) - 4, int(box["y"] + box["height"]) - 4)
    pixels = list(image.crop(inner).get_flattened_data())
    pink = [p for p in pixels if p[0] > 200 and p[1] < 60 and p[2] > 200]
    return len(pink) / len(pixels)


@browser_test
def test_a_declared_secret_reaches_the_page_but_not_the_observation_or_the_screenshot(
    site: str, tmp_path: Path
) -> None:
    with BrowserEnvironment(f"{site}/", tmp_path, secrets={"CODE": PASSWORD}) as env:
        page = env.observe()
        field = element_id(page, 'textbox "Member code"')
        typed = env.execute(f"type [{field}] [{{{{CODE}}}}] [0]")
        assert typed.ok, typed.error
        browser = env._require_page()  # the page itself, which the model never sees
        assert browser.locator("input").input_value() == PASSWORD, "the browser typed the value"
        assert typed.page is not None and PASSWORD not in typed.page.text and "{{CODE}}" in typed.page.text
        box = browser.locator("input").bounding_box()
        assert box is not None and typed.screenshot is not None
        assert _pink_share(typed.screenshot, box) > 0.9, "the field holding the secret is masked"
        button = element_id(typed.page, 'button "Sign in"')
        sent = env.execute(f"click [{button}]")
        assert sent.ok, sent.error
        assert _Server.received == [PASSWORD], "the server received the value"
        assert sent.page is not None
        for seen in (sent.page.url, sent.page.title, sent.page.text):
            assert PASSWORD not in seen, seen
        assert "{{CODE}}" in sent.page.url and "Welcome, member {{CODE}}" in sent.page.text
        assert sent.page.title == "Hello {{CODE}}"
        again = env.goto(sent.page.url)  # a resume returns to the page the log says it was on
        assert again.ok and _Server.received == [PASSWORD, PASSWORD], "the URL was filled to open it"
        broken = env.goto(f"{site}/broken?code={PASSWORD}")  # an error quoting the URL
        assert broken.error == f"HTTP 500 at {site}/broken?code={{{{CODE}}}}: Broken", broken.error


@browser_test
def test_without_secrets_a_screenshot_masks_nothing(site: str, tmp_path: Path) -> None:
    with BrowserEnvironment(f"{site}/", tmp_path) as env:
        page = env.observe()
        field = element_id(page, 'textbox "Member code"')
        typed = env.execute(f"type [{field}] [plain text] [0]")
        box = env._require_page().locator("input").bounding_box()
        assert typed.screenshot is not None and box is not None
        assert _pink_share(typed.screenshot, box) < 0.1


@browser_test
@pytest.mark.parametrize("written", ["declared", "in plain text"])
def test_the_checkout_tasks_password_is_in_no_export_and_not_in_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """The attacker's case, both ways a task can give a password: the bundled French-press task declares it
    (`{{ACCOUNT_PASSWORD}}`, never shown at all), and the same task written with the password in plain
    text, which every export and the listing mask once the agent is about to type it into the password
    field."""
    from demo.shop import start_shop
    from demo.suite import run_task
    from demo.tasks import DemoTask, load_tasks
    from planner.secrets import MASK
    from sessions.client.report import FORMATS, write_report
    from sessions.store.sql import SqlStore, database_url

    password = "demo-pass-123"
    task = next(t for t in load_tasks() if t.id == "checkout-french-press")
    assert task.secrets == {"ACCOUNT_PASSWORD": password} and "{{ACCOUNT_PASSWORD}}" in task.task
    if written == "in plain text":
        plain = json.loads(task.model_dump_json().replace("{{ACCOUNT_PASSWORD}}", password))
        task = DemoTask.model_validate({**plain, "secrets": {}})
        assert password in task.task
        monkeypatch.setattr("demo.tasks.load_tasks", lambda path=None: [task])  # its playbook, as a bundled one
    store = SqlStore(database_url(tmp_path / "s.db"))
    try:
        with start_shop() as shop:
            row = run_task(store, task, shop.url, artifacts=tmp_path / "artifacts")
        assert row.success, row
        held = {}
        for suffix in FORMATS:
            if suffix == ".svg" and shutil.which("dot") is None:
                continue
            held[suffix] = (
                write_report(store, row.session_id, tmp_path / f"r{suffix}").read_bytes().count(password.encode())
            )
        assert held == dict.fromkeys(held, 0), held
        info = store.session(row.session_id)
        assert info.task == task.task.replace(password, MASK) and password not in (info.reason or "")
        assert row.answer is not None and "29.99" in row.answer
    finally:
        store.close()


CLAUDE_TASK = "Sign in with the member code {{CODE}} and tell me the greeting"


def _type_the_code(body: dict[str, Any]) -> dict[str, Any]:
    """A model that reads the page it is sent and types the code, as the task writes it, into its field."""
    page = body["messages"][0]["content"][-1]["text"].split("## Current page", 1)[1]
    match = re.search(r"\[(\d+)\] textbox \"Member code\"", page)
    assert match, page
    return {"type": "ACTION", "action": f"type [{match[1]}] [{{{{CODE}}}}] [1]"}


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    page = body["messages"][0]["content"][-1]["text"].split("## Current page", 1)[1]
    greeting = re.search(r"Welcome, member \S+", page)
    return {"complete": True, "reason": "greeted", "answer": greeting[0] if greeting else "no greeting"}


@browser_test
def test_no_request_to_the_model_holds_a_declared_secret(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Claude session (against the fake Messages API) types the code into the page, and the page then
    shows it; no request body the API receives ever holds the value."""
    from fake_anthropic import FakeAnthropic

    from planner.config import EngineConfig
    from planner.state import RunStatus
    from sessions.client.creation import create_session
    from sessions.store.sql import SqlStore, database_url
    from sessions.worker.runner import Runner

    script = {
        ("extract_constraints", CLAUDE_TASK): {"items": [], "task": ["the greeting"]},
        ("expand_node", CLAUDE_TASK): {
            "type": "AND",
            "children": [{"description": "enter the member code"}, {"description": "read the greeting"}],
            "reasoning": "sign in, then read",
        },
        ("expand_node", "enter the member code"): _type_the_code,
        ("expand_node", "read the greeting"): {"type": "ACTION", "action": "note [greeted]"},
        ("observe_page", "*"): {
            "summary": "the page",
            "progress": "signing in",
            "notes": [],
            "prune": [],
            "rewrite": {},
        },
        ("check_completion", CLAUDE_TASK): _answer,
    }
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-fake")
    store = SqlStore(database_url(tmp_path / "s.db"))
    try:
        with FakeAnthropic(script) as fake:  # type: ignore[arg-type]
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            session_id = create_session(
                store,
                CLAUDE_TASK,
                "claude",
                start_url=f"{site}/",
                config=EngineConfig(lookahead=0),
                secrets={"CODE": PASSWORD},
            )
            state = Runner(store, session_id, artifacts=tmp_path / "artifacts").run(
                should_stop=lambda: len(fake.requests) > 30
            )
            bodies = [json.dumps(body, ensure_ascii=False) for body in fake.requests]
    finally:
        store.close()
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert _Server.received == [PASSWORD], "the browser typed the value and the page received it"
    assert state.final_answer == "Welcome, member {{CODE}}", "the model read the page, the value hidden"
    assert len(bodies) >= 5 and all(PASSWORD not in body for body in bodies)
    assert any("{{CODE}}" in body for body in bodies)
