"""Nobody walks around the guard or the fence, in real Chromium.

A "shop" on 127.0.0.1 and another server on 127.0.0.2 that counts every connection it accepts.
For each URL spelling of tests/test_guard.py: (a) the guard trips on what the environment reports,
(b) with the guard bypassed (calling `execute` directly) the fence refuses and the other server
hears nothing, (c) the same action approved by an operator does reach it, so the fence is not just
broken. The same for links carrying the spellings (the browser resolves those itself), for every
kind of request a page can make, and for the guarded names on real elements.
"""

from __future__ import annotations

import html
import re
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Request, Response
from test_guard import HARMLESS_NAMES, NO_OP_SCRIPT_LINKS, OUTSIDE_URLS, RISKY_NAMES, SAME_HOST_URLS, spell
from waiting import wait_until

from planner.browser.chromium import find_chromium
from planner.browser.environment import BrowserEnvironment
from planner.effects import RequestRule
from planner.guard import GuardRules, is_web_url, make_guard, url_host
from planner.protocols import ActionResult

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed"),
]

OTHER_HOST = "127.0.0.2"
DEADLINE_S = 60.0


class _Other(BaseHTTPRequestHandler):
    server: _CountingServer

    def log_message(self, format: str, *args: object) -> None:
        return None

    def handle(self) -> None:
        if self.connection.recv(1, socket.MSG_PEEK):  # blocks until bytes arrive or the peer closes
            self.server.contacts += 1
        super().handle()

    def do_GET(self) -> None:
        self.server.requests += 1
        body = b"<!doctype html><title>Other host</title><p>You reached the other host.</p>"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_POST = do_GET


class _CountingServer(ThreadingHTTPServer):
    """`requests` counts HTTP requests, what the fence must never let through. `contacts` counts
    connections that sent any bytes (a TLS hello too: an approved https URL reaches this plain
    server only that far), `connections` every connection, silent ones included.

    Chromium opens connections to a page's origin as a navigation starts, before any route sees
    the request (TCP, plus a TLS hello for https), so a refused link or script navigation may still
    show up here as a connection or a contact, never as a request. A refused goto never starts.
    """

    daemon_threads = True
    requests = contacts = connections = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections += 1
        super().process_request(request, client_address)

    def reset(self) -> None:
        self.requests = self.contacts = self.connections = 0


class _Shop(BaseHTTPRequestHandler):
    """Any path is a small page; /redirect?to=U answers 302 to U; /links shows OUTSIDE_URLS as
    links; /kinds has one element per kind of request; /names the guarded names."""

    other = ""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if url.path == "/links":
            hrefs = (spell(template, other=self.other, shop=self.headers["Host"]) for template in OUTSIDE_URLS)
            body = "".join(f'<p><a href="{html.escape(href)}">Out {i}</a></p>' for i, href in enumerate(hrefs))
        elif url.path == "/refresh":
            body = f'<meta http-equiv="refresh" content="0; url=http://{self.other}/refreshed">'
        elif url.path == "/kinds":
            body = _kinds_page(f"http://{self.other}")
        elif url.path == "/names":
            body = _names_page()
        elif url.path == "/harmless":
            body = "".join(f"<button>{html.escape(name)}</button>" for name in HARMLESS_NAMES if name)
            body += "".join(f'<p><a href="{html.escape(href)}">Show more</a></p>' for href in NO_OP_SCRIPT_LINKS)
        else:
            body = f"<h1>Shop</h1><p>{html.escape(self.path)}</p>"
        data = f"<!doctype html><html><head><meta charset=utf-8><title>Shop</title></head><body>{body}</body></html>"
        self._send(data.encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.do_GET()

    def _send(self, data: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


KINDS: dict[str, tuple[str, bool]] = {
    # name: (element html with {o} = the other origin, is a navigation an approval can be checked on)
    "link": ('<a href="{o}/link">link</a>', True),
    "new tab": ('<a href="{o}/tab" target="_blank">new tab</a>', True),
    "form post": ('<form method="post" action="{o}/post"><button>form post</button></form>', True),
    "redirect": ('<a href="/redirect?to={o}/redirected">redirect</a>', True),
    "redirect chain": ('<a href="/redirect?to=/redirect%3Fto%3D{o}/chained">redirect chain</a>', True),
    "form post redirect": (
        '<form method="post" action="/redirect?to={o}/pr"><button>form post redirect</button></form>',
        True,
    ),
    "script navigation": ("<button onclick=\"location.href='{o}/js'\">script navigation</button>", True),
    "window.open": ("<button onclick=\"window.open('{o}/open')\">window.open</button>", True),
    "fetch": ("<button onclick=\"fetch('{o}/fetch').catch(() => 0)\">fetch</button>", False),
    "image": ("<button onclick=\"new Image().src='{o}/img'\">image</button>", False),
    "iframe": (
        (
            "<button onclick=\"document.body.insertAdjacentHTML('beforeend', '<iframe src={o}/frame></iframe>')\">"
            "iframe</button>"
        ),
        False,
    ),
    "beacon": ("<button onclick=\"navigator.sendBeacon('{o}/beacon', 'x')\">beacon</button>", False),
    "web socket": (
        (
            "<button onclick=\"const s = new WebSocket('{ws}/ws'); s.onclose = () => document.title = 'ws closed'\">"
            "web socket</button>"
        ),
        False,
    ),
    "meta refresh": ('<a href="/refresh">meta refresh</a>', False),
}


def _kinds_page(origin: str) -> str:
    ws = origin.replace("http:", "ws:")
    return "".join(f"<p>{markup.format(o=origin, ws=ws)}</p>" for markup, _ in KINDS.values())


NAME_FORMS = [
    "<button>{}</button>",
    '<input type="submit" value="{}">',
    '<button aria-label="{}">&rarr;</button>',
    '<button aria-label="Continue">{}</button>',
]
"""Each risky name appears in one of these: as text, as a submit's value only, as an icon
button's label only, or as visible text behind an innocent label."""


def _names_page() -> str:
    buttons = "".join(
        f"<form>{NAME_FORMS[i % len(NAME_FORMS)].format(html.escape(name))}</form>"
        for i, (name, _) in enumerate(RISKY_NAMES)
    )
    gift = '<form><label>Gift message <input name="gift"></label><input type="submit" value="Place&nbsp;order"></form>'
    return buttons + gift


def _serve(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def other() -> Iterator[_CountingServer]:
    server = _CountingServer((OTHER_HOST, 0), _Other)
    _serve(server)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shop(other: _CountingServer) -> Iterator[str]:
    _Shop.other = f"{OTHER_HOST}:{other.server_address[1]}"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Shop)
    server.daemon_threads = True
    _serve(server)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def env(shop: str) -> Iterator[BrowserEnvironment]:
    with BrowserEnvironment(f"{shop}/shop/index.html", allowed_domains=[]) as environment:
        environment.start()
        yield environment


@pytest.fixture(scope="module")
def guard(shop: str) -> Callable[..., str | None]:
    return make_guard(GuardRules(), f"{shop}/shop/index.html")


def at(env: BrowserEnvironment, url: str) -> None:
    """Open `url` unless the page is already there (a refused navigation leaves it in place)."""
    if env._require_page().url != url:
        result = env.goto(url)
        assert result.ok, result.error


def wait_for_contact(other: _CountingServer, what: str) -> None:
    wait_until(lambda: other.contacts > 0, f"{what} to reach {OTHER_HOST}", timeout=DEADLINE_S)


def browser_resolves(env: BrowserEnvironment, url: str) -> str:
    """What Chromium itself makes of `url` on the current page ("" when it cannot parse it)."""
    script = "u => { try { return new URL(u, location.href).href } catch (e) { return '' } }"
    return env._require_page().evaluate(script, url)  # no public API needs it; this test does


def spelled(template: str, shop: str, other: _CountingServer) -> str:
    return spell(template, other=f"{OTHER_HOST}:{other.server_address[1]}", shop=urlsplit(shop).netloc)


def reaches_other(url: str | None) -> bool:
    return url is not None and is_web_url(url) and url_host(url) == OTHER_HOST


def refused(result: ActionResult) -> bool:
    return not result.ok and result.error is not None and result.error.startswith(("blocked: ", "cannot open "))


@pytest.fixture(scope="module")
def approved_urls() -> set[str]:
    """Resolved URLs an approved action has been seen to reach; spellings of the same URL share it."""
    return set()


# -- goto spellings ------------------------------------------------------------------------------


@pytest.mark.parametrize("template", OUTSIDE_URLS)
def test_goto_spellings_trip_the_guard_and_the_fence(
    env: BrowserEnvironment,
    shop: str,
    other: _CountingServer,
    guard: Callable[..., str | None],
    approved_urls: set[str],
    template: str,
) -> None:
    at(env, f"{shop}/shop/index.html")
    other.reset()
    url = spelled(template, shop, other)
    action = f"goto [{url}]"
    target = env.target(action)
    assert target is not None
    if not url.lower().startswith("www."):  # our one convenience on top of the standard
        assert url_host(target.url) == url_host(browser_resolves(env, url)), "the guard and Chromium disagree"
    assert guard(action, target) is not None, f"{url!r} -> {target.url!r} passed the guard"  # (a)
    result = env.execute(action)  # (b) the guard bypassed
    assert refused(result), result.error
    assert other.connections == 0, f"{url!r} reached {OTHER_HOST} through the fence"
    if reaches_other(target.url) and target.url not in approved_urls:  # (c) an operator approved it
        env.execute(action, approved=True)
        wait_for_contact(other, f"the approved {action}")
        approved_urls.add(target.url)


@pytest.mark.parametrize("template", SAME_HOST_URLS)
def test_spellings_of_the_shop_run_unattended_and_stay_home(
    env: BrowserEnvironment, shop: str, other: _CountingServer, guard: Callable[..., str | None], template: str
) -> None:
    at(env, f"{shop}/shop/index.html")
    other.reset()
    url = spelled(template, shop, other)
    action = f"goto [{url}]"
    target = env.target(action)
    assert target is not None and url_host(target.url) == url_host(browser_resolves(env, url)) == "127.0.0.1"
    assert guard(action, target) is None
    result = env.execute(action)
    assert result.ok, result.error
    assert result.page is not None and url_host(result.page.url) == "127.0.0.1"
    assert other.connections == 0


# -- the same spellings in links, resolved by the browser ----------------------------------------


@pytest.mark.parametrize("index", range(len(OUTSIDE_URLS)), ids=OUTSIDE_URLS)
def test_links_with_the_spellings_are_fenced(
    env: BrowserEnvironment, shop: str, other: _CountingServer, guard: Callable[..., str | None], index: int
) -> None:
    at(env, f"{shop}/links")
    other.reset()
    page = env.observe()
    match = re.search(rf"\[(\d+)\] link \"Out {index}\"", page.text)
    assert match, page.text
    action = f"click [{match[1]}]"
    target = env.target(action)
    assert target is not None
    if reaches_other(target.url) or not (is_web_url(target.url) or target.url.startswith("blob:")):
        assert guard(action, target) is not None, f"a link to {target.url!r} passed the guard"
    if not (is_web_url(target.url) or target.url.startswith("javascript:")):
        return  # Chromium refuses the rest itself or hands them to another program (ftp:); no request to fence
    result = env.execute(action)
    assert other.requests == 0, f"a link to {target.url!r} reached {OTHER_HOST} through the fence"
    if reaches_other(target.url):
        assert refused(result), result.error
        assert result.page is not None and result.page.url == f"{shop}/links", "a refused click left the page"


# -- every kind of request a page can make --------------------------------------------------------


@pytest.fixture(scope="module")
def refusals(env: BrowserEnvironment) -> Iterator[list[str]]:
    """Requests to the other host that the fence refused: failed ones, and navigations it answered
    with "204 No Content" (which leave the page where it was)."""
    urls: list[str] = []

    def failed(request: Request) -> None:
        if url_host(request.url) == OTHER_HOST:
            urls.append(request.url)

    def answered(response: Response) -> None:
        if response.status == 204 and url_host(response.url) == OTHER_HOST:
            urls.append(response.url)

    context = env._require_page().context
    context.on("requestfailed", failed)
    context.on("response", answered)
    yield urls
    context.remove_listener("requestfailed", failed)
    context.remove_listener("response", answered)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_request_is_fenced(
    env: BrowserEnvironment, shop: str, other: _CountingServer, refusals: list[str], kind: str
) -> None:
    kinds = f"{shop}/kinds"
    at(env, kinds)
    refusals.clear()
    other.reset()
    page = env.observe()
    match = re.search(r"\[(\d+)\] \w+ \"" + re.escape(kind) + '"', page.text)
    assert match, f"{kind!r} not in\n{page.text}"
    action = f"click [{match[1]}]"
    # The shop's own form posts are allowed here: what is under test is the host fence, which must refuse a
    # redirect hop to the other host even where the effect fence lets the post itself through.
    result = env.execute(action, rules=[RequestRule.parse("allow POST 127.0.0.1/*")])
    browser = env._require_page()
    if KINDS[kind][1]:
        assert refused(result), result.error
        assert result.page is not None and result.page.url == kinds, "a refused navigation left the page"
    elif kind == "web socket":
        wait_until(
            lambda: browser.title() == "ws closed",
            "the refused web socket to close",
            timeout=DEADLINE_S,
            pump=browser.wait_for_timeout,
        )
    else:
        wait_until(
            lambda: bool(refusals),
            f"the fence to refuse the {kind}",
            timeout=DEADLINE_S,
            pump=lambda: browser.wait_for_timeout(50),
        )
    assert other.requests == 0, f"the {kind} reached {OTHER_HOST} through the fence"
    if KINDS[kind][1]:
        at(env, kinds)
        env.execute(action, approved=True)
        wait_for_contact(other, f"the approved {kind}")


# -- names ----------------------------------------------------------------------------------------


def test_every_guarded_name_trips_on_the_real_element(
    env: BrowserEnvironment, shop: str, guard: Callable[..., str | None]
) -> None:
    at(env, f"{shop}/names")
    page = env.observe()
    ids = re.findall(r"\[(\d+)\] button", page.text)
    assert len(ids) == len(RISKY_NAMES) + 1, page.text  # and the gift form's submit
    passed = [target for i in ids if guard(f"click [{i}]", target := env.target(f"click [{i}]")) is None]
    assert passed == [], "these elements passed the guard"
    field = re.search(r"\[(\d+)\] textbox \"Gift message\"", page.text)
    assert field, page.text
    assert guard(f"type [{field[1]}] [Happy birthday] [1]", env.target(f"type [{field[1]}] [x]")) is not None
    assert guard(f"type [{field[1]}] [Happy birthday] [0]", env.target(f"type [{field[1]}] [x]")) is None


def test_harmless_names_run_unattended(env: BrowserEnvironment, shop: str, guard: Callable[..., str | None]) -> None:
    at(env, f"{shop}/harmless")
    text = env.observe().text
    ids = re.findall(r"\[(\d+)\] button", text)
    assert len(ids) == len([name for name in HARMLESS_NAMES if name])
    assert [i for i in ids if guard(f"click [{i}]", env.target(f"click [{i}]")) is not None] == []
    links = re.findall(r"\[(\d+)\] link \"Show more\"", text)
    assert len(links) == len(NO_OP_SCRIPT_LINKS), text
    held = [target for i in links if guard(f"click [{i}]", target := env.target(f"click [{i}]")) is not None]
    assert held == [], "these links that run no script were held"


def test_the_corpus_is_big_enough() -> None:
    assert len(OUTSIDE_URLS) + len(SAME_HOST_URLS) >= 40 and len(RISKY_NAMES) >= 20
