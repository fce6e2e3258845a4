"""A console behind a sign-in proxy, in Chromium: the operator's name comes from the request header the
proxy sets (here Playwright's `extra_http_headers`, which a proxy's would be), with the proxy's shared
secret, shows on the page and signs the commands pressed there; a request without the header, or with
it but without the secret (a client that reached the console directly), gets only the refusal."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from conftest import SCRIPTS
from console_helpers import store_of
from playwright.sync_api import Browser, expect
from waiting import wait_until

from planner.events import CommandApplied
from sessions.client.creation import create_session
from ui.access import PROXY_SECRET_HEADER
from ui.server import ConsoleProcess, start_console

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"
HEADER = "X-Forwarded-User"
SECRET = "5f1e0d9c8b7a69584736251403f2e1d0"
SHOWN = re.compile("^Operator: alice\u2060?@x\\.org · watch, edit, approve$")
"""The sidebar's line (an address is drawn with a word joiner after its first part, so it is never made a link)."""


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    env = {
        "ANDOR_AUTH_HEADER": HEADER,
        "ANDOR_AUTH_PROXY_SECRET": SECRET,
        "ANDOR_ROLES": "alice@x.org=edit+approve,*=watch",
    }
    running = start_console(tmp_path_factory.mktemp("console") / "console.db", env=env)
    yield running
    running.stop()


def test_the_proxys_operator_is_shown_and_signs_the_command(browser: Browser, console: ConsoleProcess) -> None:
    store = store_of(console)
    session_id = create_session(store, "Find a vegan brownie", BROWNIE, start_url="dry://start", paused=True)
    context = browser.new_context(
        extra_http_headers={HEADER: "alice@x.org", PROXY_SECRET_HEADER: SECRET},
        viewport={"width": 1500, "height": 1000},
    )
    try:
        page = context.new_page()
        page.goto(f"{console.url}/?session={session_id}")
        expect(page.get_by_text(SHOWN), "the signed-in operator").to_be_visible(timeout=30_000)
        start = page.locator(".st-key-ctl_resume button")
        expect(start, "the Start control, enabled for an editor").to_be_enabled(timeout=30_000)
        start.click()

        def resumed_by() -> list[str | None]:
            return [
                e.payload.by
                for e in store.load(session_id)
                if isinstance(e.payload, CommandApplied) and e.payload.command.get("kind") == "resume"
            ]

        wait_until(lambda: bool(resumed_by()), "the runner to apply the Start pressed in Chromium", timeout=60)
        assert resumed_by() == ["alice@x.org"], "the command carries the proxy's operator"
    finally:
        context.close()


@pytest.mark.parametrize(
    ("sent", "refusal"),
    [
        (
            {PROXY_SECRET_HEADER: SECRET},
            f"This console is behind a sign-in proxy and this request has no {HEADER} header.",
        ),
        (
            {HEADER: "alice@x.org"},
            f"This request did not come through the sign-in proxy (no valid {PROXY_SECRET_HEADER} header), so it is refused.",
        ),
    ],
    ids=["no operator header", "a forged operator header"],
)
def test_a_request_without_the_header_or_the_proxys_secret_gets_only_the_refusal(
    browser: Browser, console: ConsoleProcess, sent: dict[str, str], refusal: str
) -> None:
    context = browser.new_context(extra_http_headers=sent)
    try:
        page = context.new_page()
        page.goto(console.url)
        expect(page.get_by_text(refusal), "the one-sentence refusal").to_be_visible(timeout=30_000)
        assert page.get_by_text("New session").count() == 0, "nothing else is drawn"
        assert page.locator("[data-testid='stSidebar']").count() == 0, "not even the sidebar"
    finally:
        context.close()
