"""A declared secret in real Chromium: the page gets its value, the model's view and the screenshots never do."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
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
        if url.path == "/hello":
            code = parse_qs(url.query).get("code", [""])[0]
            self.received.append(code)
            body = f"<!doctype html><title>Hello {html.escape(code)}</title><p>Welcome, member {html.escape(code)}</p>"
        else:
            body = _FORM
        data = body.encode()
        self.send_response(200)
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


@browser_test
def test_without_secrets_a_screenshot_masks_nothing(site: str, tmp_path: Path) -> None:
    with BrowserEnvironment(f"{site}/", tmp_path) as env:
        page = env.observe()
        field = element_id(page, 'textbox "Member code"')
        typed = env.execute(f"type [{field}] [plain text] [0]")
        box = env._require_page().locator("input").bounding_box()
        assert typed.screenshot is not None and box is not None
        assert _pink_share(typed.screenshot, box) < 0.1
