"""The fences a fenced browser's requests pass, enforced with Playwright's routes.

The host fence refuses every request to a host outside the allowed ones (navigations, popups, frames,
form posts, fetches, web sockets, subresources, redirect hops) and every goto to a non-web URL; the
effect fence (`EffectFence`, its bookkeeping) refuses a request to an allowed host that could change
state there unless it was allowed. An action an operator approved passes both.

Playwright never shows a route the redirects that follow a navigation, so the fence fetches each
navigation itself, one hop at a time, and hands the browser the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Literal

from playwright.sync_api import APIResponse, BrowserContext, Error, Request, Route, WebSocketRoute
from playwright.sync_api import Page as PlaywrightPage
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from planner.browser.effect_fence import EffectFence
from planner.browser.navigation import frame_of, is_top_navigation
from planner.effects import WEBSOCKET, RequestRule, SentRequest, request_fields
from planner.guard import host_allowed, is_web_url, resolve_url, url_host

__all__ = ["Fence", "held_requests_error"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_REDIRECTS = 20
_KINDS = {"fetch": "fetch", "xhr": "xhr", "ping": "beacon", "document": "form", "websocket": "websocket"}


def held_requests_error(requests: Sequence[SentRequest]) -> str:
    """The failure of an action whose requests wait for an operator: what they are, first one first."""
    first = requests[0].describe()
    more = f" and {len(requests) - 1} more request{'s' if len(requests) > 2 else ''}" if len(requests) > 1 else ""
    return f"held for an operator's approval: the page sent {first}{more}, which could change state on the server"


class Fence:
    """The fences of one browser: `hosts` the allowed hosts (None: no fence at all), `rules` the request
    policy until an action brings its own; `report` receives a sentence for each request refused but not
    held for approval."""

    def __init__(
        self,
        hosts: tuple[str, ...] | None,
        rules: Sequence[RequestRule],
        report: Callable[[str], None],
        timeout_ms: int,
    ) -> None:
        self._hosts = hosts
        self._effects = EffectFence(rules, report)
        self._timeout_ms = timeout_ms
        self._blocked_host: str | None = None
        """The host outside the allowed ones this action's own navigation was refused for."""
        self._context: BrowserContext | None = None
        self._page: PlaywrightPage | None = None

    @property
    def service_workers(self) -> Literal["allow", "block"]:
        """A service worker's own requests bypass routes, so a fenced browser runs none."""
        return "allow" if self._hosts is None else "block"

    def install(self, context: BrowserContext) -> None:
        """Route every request and web socket of `context` through the fences (none when unfenced)."""
        if self._hosts is None:
            return
        self._context = context
        # The fence fetches each navigation and hands the answer over, which leaves the page no address
        # space: Chromium's local network access checks would then refuse its own loopback or intranet
        # host's WebSocket. The fence already decides where a page may go.
        try:
            context.grant_permissions(["local-network-access"])
        except Error:
            pass  # a Chromium without these checks
        context.route("**/*", self._route)
        context.route_web_socket(re.compile(""), self._route_web_socket)

    def attach(self, page: PlaywrightPage) -> None:
        """`page` is the agent's page: a navigation of its own that is refused leaves it where it was."""
        self._page = page

    def start(self, *, approved: bool, allow: Collection[str], rules: Sequence[RequestRule] | None) -> None:
        """An action begins (`EffectFence.start`): nothing refused yet."""
        self._blocked_host = None
        self._effects.start(approved=approved, allow=allow, rules=rules)

    def stop(self) -> None:
        """The action's page has been read: what the page sends now, it sends between actions."""
        self._effects.stop()

    @property
    def acting(self) -> bool:
        """An action runs: a request or a dialog now is its own, not the page's between actions."""
        return self._effects.acting

    @property
    def approved(self) -> bool:
        """An operator approved the action that runs: it may leave the allowed hosts and send what it sends."""
        return self._effects.approved

    @property
    def held(self) -> tuple[SentRequest, ...]:
        return self._effects.held

    @property
    def passed(self) -> tuple[SentRequest, ...]:
        return self._effects.passed

    @property
    def refusal(self) -> str | None:
        """Why this action's own navigation went nowhere, when the host fence refused it."""
        return self._outside(self._blocked_host) if self._blocked_host is not None else None

    @property
    def refused(self) -> bool:
        """A fence refused something this action sent: a tab it promised may never come."""
        return self._blocked_host is not None or bool(self._effects.held)

    def goto_problem(self, url: str) -> str | None:
        """Why a goto to `url` (absolute) may not even be sent; None when it may."""
        if self._hosts is None or self.approved:
            return None
        if not is_web_url(url):
            scheme = url.split(":", 1)[0] + ":"
            return f"blocked: {scheme} URLs are not web pages; an operator must approve opening one"
        host = url_host(url)
        return None if host_allowed(host, self._hosts) else self._outside(host)

    def _outside(self, host: str) -> str:
        allowed = ", ".join(self._hosts or ())
        return (
            f"blocked: {host} is outside the allowed domains ({allowed}); an operator must approve an action "
            "that leaves them"
        )

    def _may_reach(self, host: str) -> bool:
        """Hostless URLs (data:, blob:, about:) reach no server; an approved action reaches any."""
        return not host or self.approved or host_allowed(host, self._hosts or ())

    def _route(self, route: Route) -> None:
        """The fences: refuse every request to another host, and every request to an allowed one that
        could change state there unless the effect fence admits it; fetch navigations to allowed hosts
        hop by hop, since Playwright never shows a route the redirects that follow."""
        request = route.request
        host = url_host(request.url)
        try:
            if not self._may_reach(host):
                self._refuse(route, host)
            elif host and not self._effects.admits(request.method, request.url, lambda: _sent(request)):
                self._refuse(route)
            elif host and request.is_navigation_request() and not self.approved:
                self._fetch_navigation(route)
            else:
                route.fallback()
        except Error:
            pass  # the page or request went away while it was decided (a timeout, a closed popup)

    def _refuse(self, route: Route, host: str | None = None) -> None:
        """Refuse a request (`host`: the one outside the allowed domains it was for; None: refused by the
        effect fence). A navigation of this page is answered "204 No Content", which leaves the page
        where it was rather than on an error page; anything else (a popup's navigation, a fetch, a
        beacon) fails as blocked by the client."""
        request = route.request
        if host is not None and is_top_navigation(request):
            self._blocked_host = host
        frame = frame_of(request)
        if request.is_navigation_request() and frame is not None and frame.page is self._page:
            route.fulfill(status=204)
        else:
            route.abort("blockedbyclient")

    def _give_up(self, route: Route) -> None:
        """A navigation the fence fetched too slowly: this page's own stays where it was (the action
        has already failed as timed out), as a refused one does; any other fails as timed out."""
        frame = frame_of(route.request)
        if frame is not None and frame.page is self._page:
            route.fulfill(status=204)
        else:
            route.abort("timedout")

    def _fetch_navigation(self, route: Route) -> None:
        """Fetch a navigation here, one redirect hop at a time, so no hop reaches another host.

        The browser follows redirects past any route, so the fence follows them first, through the
        context's own request client (which shares the browser's cookies): a hop outside the
        allowed hosts blocks the navigation. Otherwise the browser gets the answer directly, or,
        after redirects, a redirect straight to the last URL (which it then requests once more).
        """
        request = route.request
        try:
            response = route.fetch(max_redirects=0, timeout=self._timeout_ms)
        except PlaywrightTimeout:
            self._give_up(route)
            return
        except Error:
            route.abort("failed")
            return
        url, method = request.url, request.method
        for _ in range(_MAX_REDIRECTS):
            target = _redirect_target(response, url)
            if target is None:
                break
            if not is_web_url(target):
                route.abort("failed")  # the browser refuses such redirects too (ERR_UNSAFE_REDIRECT)
                return
            if not self._may_reach(url_host(target)):
                self._refuse(route, url_host(target))
                return
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method = "GET"
            if not self._effects.admits(method, target, partial(_sent, request, method, target)):
                self._refuse(route)  # a 307 or 308 sends the body again, to another address: a request of its own
                return
            url = target
            response = self._next_hop(request, url, method)
        else:
            route.abort("failed")  # a redirect loop; the browser gives up the same way
            return
        if url == request.url:
            route.fulfill(response=response)
        elif method == "GET":
            route.fulfill(status=303, headers={"location": url})
        else:
            route.fulfill(response=response)  # a 307/308 chain kept its body; sending it twice could repeat an order

    def _next_hop(self, request: Request, url: str, method: str) -> APIResponse:
        assert self._context is not None, "routes run only in a context the fence was installed in"
        keep_body = method == request.method and method != "GET"
        headers = {k: v for k, v in request.headers.items() if keep_body or k.lower() != "content-type"}
        return self._context.request.fetch(
            url,
            method=method,
            headers=headers,
            data=request.post_data_buffer if keep_body else None,
            max_redirects=0,
            timeout=self._timeout_ms,
        )

    def _route_web_socket(self, socket: WebSocketRoute) -> None:
        """Connect a page's WebSocket on an allowed host, and pass each message the page sends through
        the effect fence (a message the fence refuses is dropped; what the server sends always arrives)."""
        if not self._may_reach(url_host(socket.url)):
            socket.close(code=1008, reason="outside the allowed domains")
            return
        server = socket.connect_to_server()

        def send(message: str | bytes) -> None:
            sent = SentRequest(
                method=WEBSOCKET, url=socket.url, kind="websocket", fields=(("message", _excerpt(message)),)
            )
            if self._effects.admits(WEBSOCKET, socket.url, lambda: sent):
                try:
                    server.send(message)
                except Error:
                    pass  # the server went away; the page learns it from its socket's close

        socket.on_message(send)


def _sent(request: Request, method: str | None = None, url: str | None = None) -> SentRequest:
    """A request as an operator judges it (`method` and `url`: a redirect hop's, when it goes elsewhere)."""
    kind = _KINDS.get(request.resource_type, request.resource_type or "other")
    if kind == "form" and request.method in ("GET", "HEAD"):
        kind = "navigation"
    try:
        body = request.post_data_buffer
    except Error:
        body = None
    fields = request_fields(request.headers.get("content-type", ""), body)
    return SentRequest(method=(method or request.method).upper(), url=url or request.url, kind=kind, fields=fields)


def _excerpt(message: str | bytes) -> str:
    text = message if isinstance(message, str) else f"({len(message):,} bytes of binary data)"
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"


def _redirect_target(response: APIResponse, url: str) -> str | None:
    """Where a redirect answer points, absolute; None when the answer is not a redirect."""
    location = response.headers.get("location")
    if response.status not in _REDIRECTS or not location:
        return None
    return resolve_url(location, url) or ""
