"""A real browser behind `planner.protocols.Environment`: Playwright's sync API driving Chromium.

Every action ends the same way, succeed or fail: an optional screenshot, then a fresh observation,
so the engine always records what the page looked like after the action. Failures (unknown ids,
timeouts, HTTP errors, crashes) come back as `ActionResult(ok=False, error=...)`; the planner reacts
to them with OR fallbacks and repairs, so they must be data, not exceptions.

The browser starts lazily, on the first call that needs it (or on `start()`), and from then on the
environment must be used from that thread only (`planner.browser.driver`). This module composes the
parts, each with its own state: the `Fence` (what a request may reach), `PageEvents` (what the page
does on its own), `Navigation`, the `Observer` (what the page says and what its ids stand for),
`Controls` and `Screenshots`; `waiting` waits for what an action promised (`promises`) that comes late.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Self

from playwright.sync_api import Browser, BrowserContext, Error, ViewportSize
from playwright.sync_api import Page as PlaywrightPage
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from planner.actions import ActionSyntaxError, Click, GoBack, Goto, Hover, Note, Scroll, Select, Type, parse_action
from planner.browser import aim
from planner.browser.chromium import BrowserUnavailable
from planner.browser.controls import Controls
from planner.browser.driver import Driver
from planner.browser.failures import _ActionFailed, first_line, is_crash
from planner.browser.fence import Fence, held_requests_error
from planner.browser.marks import LISTENERS_JS
from planner.browser.navigation import SETTLE_MS, Navigation, stop_loading
from planner.browser.observer import ElementAction, Observer
from planner.browser.page_events import PageEvents, tab_report
from planner.browser.promises import PROMISES_JS, Promise, watch
from planner.browser.screenshots import Screenshots
from planner.browser.server import BrowserEndpoint
from planner.browser.storage import private_file, private_folder, write_state
from planner.browser.waiting import await_callbacks, await_download, await_popup
from planner.effects import RequestRule
from planner.guard import GuardRules, allowed_hosts, is_web_url, resolve_url
from planner.protocols import ActionResult, ElementInfo, Page, Preview
from planner.secrets import Secrets

__all__ = ["BrowserEnvironment"]


_BrowserAction = ElementAction | Scroll | GoBack | Goto
"""Every action but `note`, which never reaches the browser."""


class BrowserEnvironment:
    """Implements `planner.protocols.Environment` with one Chromium page.

    `allowed_domains`, when given, is a hard limit, the fence behind the action guard (which asks a
    person first): every request to another host (navigations, popups, frames, form posts, fetches,
    web sockets, subresources, redirect hops) is refused, and so is a goto to a non-web URL, except
    while an action an operator approved runs (`execute(..., approved=True)`). An empty list allows
    only the start URL's host; None means no fence.

    A fenced browser also guards what an action does on the allowed hosts (`EffectFence`): a request
    that could change state on a server (a method other than GET, HEAD and OPTIONS, a WebSocket
    message) is refused unless the session's request rules allow it, the action was approved or the
    request itself was (`execute(..., allow=...)`); the action then fails with `held_requests`, so
    the engine can ask an operator. `request_rules` is the policy until an action brings its own.

    `browser_endpoint` (a Playwright browser server's ws:// address, or a worker's `BrowserServer`)
    drives a Chromium running elsewhere, or shared by many sessions, instead of launching one here;
    cookies, screenshots and the page work the same.

    Every dialog a page opens is answered and reported (`planner.browser.dialogs`): a confirm or
    prompt whose message holds a risky term by `guard_rules` (the guard's own; default
    `GuardRules()`) is dismissed unless the action was approved, and the action fails with
    `held_dialog` set, so the engine can ask an operator. A dialog asked from a timer or a request the
    action started (`planner.browser.promises`) is still the action's: the action waits for them, and
    its approval lasts until the page it left is read.

    `secrets` (name -> value, `planner.secrets`) are what the task and the model write as `{{NAME}}`:
    a `type` action types the value (into a field, an editor or a slider), and nothing the model is
    sent holds one: an observation's text, URL and title show `{{NAME}}` instead, and a screenshot
    blacks out (Playwright's `mask`) every field whose value holds one.
    """

    def __init__(
        self,
        start_url: str,
        screenshot_dir: Path | None = None,
        *,
        storage_path: Path | None = None,
        allowed_domains: Sequence[str] | None = None,
        observation_budget: int = 6000,
        timeout_ms: int = 10000,
        viewport: tuple[int, int] = (1280, 800),
        headless: bool = True,
        browser_endpoint: BrowserEndpoint | None = None,
        guard_rules: GuardRules | None = None,
        request_rules: Sequence[RequestRule] = (),
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        self.start_url = start_url
        self._secrets = Secrets(secrets)
        self.browser_endpoint = browser_endpoint
        self.screenshot_dir = Path(screenshot_dir) if screenshot_dir is not None else None
        self.storage_path = Path(storage_path) if storage_path is not None else None
        self.observation_budget = observation_budget
        self.timeout_ms = timeout_ms
        self.viewport = viewport
        self.headless = headless
        self._last_good_url = start_url
        self._driver = Driver()
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: PlaywrightPage | None = None
        self._reports: list[str] = []
        """What the page did since the last observation that the agent should know (dialogs, downloads)."""
        hosts = allowed_hosts(allowed_domains, start_url) if allowed_domains is not None else None
        self._fence = Fence(hosts, request_rules, self._reports.append, timeout_ms)
        rules = guard_rules if guard_rules is not None else GuardRules()
        self._events = PageEvents(self._fence, rules, self._reports.append, self.screenshot_dir, timeout_ms)
        self._navigation = Navigation(timeout_ms)
        self._observer = Observer(self._secrets, observation_budget, viewport, timeout_ms, self._events.note_crash)
        self._controls = Controls(self._observer, self._secrets, timeout_ms)
        self._screenshots = Screenshots(self.screenshot_dir, self._secrets, viewport, timeout_ms)

    # -- lifecycle --------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        """Launch the browser and open the start URL now rather than on first use.

        Raises `BrowserUnavailable` when no Chromium can be started; call it early to fail fast.
        The protocol methods never raise it: actions fail with the reason, `observe()` shows it.
        """
        self._driver.check_thread()
        self._ensure_page()

    def close(self) -> None:
        """Close the page and the context, and let go of the thread's Chromium and driver (`Driver`);
        safe to call twice."""
        if not self._driver.running:
            return
        self._driver.check_thread()
        connection = self._browser if self.browser_endpoint is not None else None  # a launched one is shared
        for closable in (self._context, connection):
            if closable is not None:
                try:
                    closable.close()
                except Error:
                    pass
        self._driver.release()
        self._browser = self._context = self._page = None

    # -- Environment protocol ---------------------------------------------------------------------

    def execute(
        self,
        action: str,
        *,
        approved: bool = False,
        allow: Collection[str] = (),
        rules: Sequence[RequestRule] | None = None,
    ) -> ActionResult:
        """Run one action string; every failure, syntax errors included, is returned as data.

        `approved`: an operator approved this action, so the fences let it leave the allowed domains and
        send what it sends. `allow`: requests an operator approved (`SentRequest.key`), each let through
        once. `rules`: the session's request policy (None: `request_rules`, the browser's own).
        """
        started = time.perf_counter()
        self._driver.check_thread()
        try:
            parsed = parse_action(action)
        except ActionSyntaxError as error:
            return ActionResult(ok=False, error=str(error), page=self._observer.last_page, duration_ms=_since(started))
        if isinstance(parsed, Note):
            page = self._observer.last_page or self.observe()
            return ActionResult(ok=True, page=page, duration_ms=_since(started))
        return self._hidden(self._run(parsed, started, approved, allow, rules))

    def goto(self, url: str) -> ActionResult:
        """Open a URL (absolute, or relative to the current page); also the engine's rollback."""
        started = time.perf_counter()
        self._driver.check_thread()
        if not url.strip():
            return ActionResult(
                ok=False, error="goto needs a URL", page=self._observer.last_page, duration_ms=_since(started)
            )
        return self._hidden(self._run(Goto(url=url.strip()), started))

    def observe(self) -> Page:
        """Snapshot the current page; element ids in later actions refer to this observation."""
        self._driver.check_thread()
        try:
            self._ensure_page()
        except BrowserUnavailable as error:
            url = self._page.url if self._page is not None and not self._page.is_closed() else self._last_good_url
            return self._observer.unreadable(f"browser unavailable: {error}", url)
        return self._observe_reporting(self._take_reports())[0]

    def check(self, action: str) -> str | None:
        """Why `action` cannot run on the current page: bad syntax or an element id not shown."""
        try:
            parsed = parse_action(action)
        except ActionSyntaxError as error:
            return str(error)
        if not isinstance(parsed, ElementAction):
            return None
        self._driver.check_thread()
        try:
            self._ensure_observed()
        except BrowserUnavailable as error:
            return f"browser unavailable: {error}"
        return self._observer.element_problem(parsed)

    def target(self, action: str) -> ElementInfo | None:
        """What `action` would touch, for the guard: the element's role, names, input type, form
        and link target, or for a goto the exact URL `execute` will open."""
        try:
            parsed = parse_action(action)
        except ActionSyntaxError:
            return None
        if not isinstance(parsed, (Click, Type, Select, Goto)):
            return None
        self._driver.check_thread()
        try:
            self._ensure_observed()
        except BrowserUnavailable:
            return None  # execute() will report it
        if isinstance(parsed, Goto):
            return ElementInfo(url=self._goto_url(parsed.url) or "")
        return self._observer.target(self._require_page(), parsed.element)

    def preview(self, action: str) -> Preview | None:
        """A viewport screenshot with the action's element scrolled into view, and the element's box in
        it, clipped to the screen; for a goto (or an element no longer there) the page as it is, with no box.

        The page is scrolled back afterwards: the run goes on from the observation it has, which a
        rejected action's recovery reads, and a `scroll` moves from where that observation was.
        """
        try:
            parsed = parse_action(action)
        except ActionSyntaxError:
            return None
        if self.screenshot_dir is None or not isinstance(parsed, ElementAction | Goto):
            return None
        self._driver.check_thread()
        try:
            self._ensure_observed()
        except BrowserUnavailable:
            return None
        element = self._observer.elements.get(parsed.element) if isinstance(parsed, ElementAction) else None
        return self._screenshots.preview(self._require_page(), element)

    def _hidden(self, result: ActionResult) -> ActionResult:
        """`result` with its error and reports hidden as its page is (`Observer.observe`): an HTTP error or
        a browser message may quote a URL that holds a secret's value."""
        if not self._secrets or (result.error is None and not result.reports):
            return result
        hide = self._secrets.hide
        error = hide(result.error) if result.error is not None else None
        return replace(result, error=error, reports=tuple(hide(report) for report in result.reports))

    # -- the action pipeline ----------------------------------------------------------------------

    def _run(
        self,
        action: _BrowserAction,
        started: float,
        approved: bool = False,
        allow: Collection[str] = (),
        rules: Sequence[RequestRule] | None = None,
    ) -> ActionResult:
        try:
            self._ensure_page()
        except BrowserUnavailable as error:
            return ActionResult(ok=False, error=f"browser unavailable: {error}", duration_ms=_since(started))
        touches = isinstance(action, ElementAction)
        self._begin(touches)
        self._navigation.start()
        self._events.start()
        self._fence.start(approved=approved, allow=allow, rules=rules)
        try:
            return self._act(action, started, touches)
        finally:
            # Only once the page is read: a question it asks late is still this action's, approved with it; then the
            # fences close again.
            self._fence.stop()

    def _begin(self, touches: bool) -> None:
        """Close what the page did since the last action before this one counts: a dialog it opened is
        answered (unapproved, reported as between actions) and a tab it opened closed and reported. Both
        reach this thread only with its next call to the browser, made here. Only an action on an element
        can promise a tab or start callbacks; what the page's own scripts noted since the last one is not
        its promise (scroll, back and goto leave that for the next to forget: one evaluate, not one a frame)."""
        page = self._require_page()
        if touches:
            watch(page)
        else:
            try:
                page.evaluate("0")
            except Error:
                pass  # a navigation is under way: events still reached this thread with the answer
        self._events.close_stray_tabs(page)

    def _act(self, action: _BrowserAction, started: float, touches: bool) -> ActionResult:
        """Perform the action, wait for what it promised, and read the page it left."""
        error: str | None = None
        try:
            self._perform(action)
            promise = await_callbacks(self._require_page(), self._navigation) if touches else Promise()
            self._follow_popup(promised=promise.tab)
            if (promise.download or self._navigation.attachment) and not self._events.download_started:
                await_download(self._require_page(), self._events, self.timeout_ms)
            error = self._navigation_problem()
        except _ActionFailed as failure:
            error = str(failure)
        except PlaywrightTimeout:
            what = "navigation" if self._navigation.requested else _describe(action)
            error = f"{what} timed out after {self.timeout_ms / 1000:g} s"
            stop_loading(self._require_page())
        except Error as failure:
            if is_crash(failure):
                self._events.note_crash()
            error = self._navigation_problem() or f"{_describe(action)} failed: {first_line(failure)}"
        reports = self._take_reports()
        if self._events.crashed:
            return ActionResult(ok=False, error="page crashed", duration_ms=_since(started), reports=reports)
        screenshot = self._screenshots.take(self._require_page())
        page, reports = self._observe_reporting(reports)
        if self._events.crashed:
            return ActionResult(
                ok=False, error="page crashed", screenshot=screenshot, duration_ms=_since(started), reports=reports
            )
        dialog = self._events.held
        held = dialog.held if dialog is not None else None
        if dialog is not None:
            error = dialog.report  # what the action was for did not happen: the page was told "cancel"
        requests = self._fence.held
        if error is not None and (passed := self._fence.passed):  # what was approved happened: never hide it
            error += (
                f" (before that, the page sent {passed[0].describe()}, which an operator approved: it went through)"
            )
        if requests and held is None:
            error = held_requests_error(requests)
            if (refusal := self._fence.refusal) is not None:  # the action did more than one thing; hide none
                reports = (*reports, refusal)
        self._save_storage()
        if error is None:
            self._last_good_url = page.url
        ok = error is None
        return ActionResult(
            ok=ok,
            page=page,
            error=error,
            screenshot=screenshot,
            duration_ms=_since(started),
            reports=reports,
            held_dialog=held,
            held_requests=requests,
        )

    def _observe_reporting(self, reports: tuple[str, ...]) -> tuple[Page, tuple[str, ...]]:
        """Observe with `reports` at the head of the text. What the page did while it was read (a dialog
        or a tab no callback count foresaw, a download) joins them, and the page is read once more."""
        page = self._observe_now(reports)
        self._events.close_stray_tabs(self._require_page())
        if self._reports or self._events.download_started:
            reports += self._take_reports()
            page = self._observe_now(reports)
        return page, reports

    def _take_reports(self) -> tuple[str, ...]:
        """What the page did since the last observation, downloads saved first."""
        self._events.save_downloads()
        reports = tuple(self._reports)
        self._reports.clear()
        return reports

    def _perform(self, action: _BrowserAction) -> None:
        page = self._require_page()
        if isinstance(action, Click):
            aim.click(page, self._observer.locate(page, action), action.element, self.timeout_ms)
            self._navigation.settle(page)
        elif isinstance(action, Hover):
            aim.hover(page, self._observer.locate(page, action), action.element, self.timeout_ms)
            page.wait_for_timeout(SETTLE_MS)
        elif isinstance(action, Type) and self._observer.role(action.element) == "slider":
            self._controls.slide(page, action, self._secrets.fill(action.text))
        elif isinstance(action, Type):
            self._controls.type(page, action)
            if action.enter:
                self._navigation.settle(page)
        elif isinstance(action, Select):
            self._controls.select(page, action)
            self._navigation.settle(page)
        elif isinstance(action, Scroll):
            self._observer.scroll(page, action.direction)
        elif isinstance(action, GoBack):
            self._observer.read_from_top()
            self._navigation.go_back(page)
        else:
            self._observer.read_from_top()
            self._navigate(action.url)

    def _goto_url(self, url: str) -> str | None:
        """The absolute URL a goto opens: resolved against the current web page (the last good one
        while an error page shows), the same way `target` reports it to the guard."""
        current = self._page.url if self._page is not None and not self._page.is_closed() else ""
        return resolve_url(url, current if is_web_url(current) else self._last_good_url)

    def _navigate(self, url: str) -> None:
        """Open exactly the URL the guard was shown: Playwright gets it absolute and canonical, so
        neither its own URL completion nor a second parser can send it elsewhere."""
        resolved = self._goto_url(self._secrets.fill(url))  # a URL the observation showed with {{NAME}} in it
        if resolved is None:
            raise _ActionFailed(f"cannot open {url!r}: it is not a valid URL")
        if (problem := self._fence.goto_problem(resolved)) is not None:
            raise _ActionFailed(problem)
        page = self._require_page()
        if not self._navigation.goto(page, resolved):  # the URL is a file: the page stays, the file is saved
            await_download(page, self._events, self.timeout_ms)

    def _follow_popup(self, promised: str) -> None:
        """A link that opens a new tab is followed in this page, so history and ids stay in one place.

        Chromium reports a new tab only once its first document starts to arrive, which can be long
        after the action: when the action promised a tab (`planner.browser.promises`), it is awaited, and
        a tab that never comes fails the action instead of leaving the agent silently on the old page. A
        tab nothing promised (a script's own doing) is followed when it came during the action. A tab
        at no web address (`about:blank` a script wrote into, a `blob:`) cannot be opened here: it is
        closed and reported, as is every tab but the one followed.
        """
        if promised and not self._events.tab_opened:
            await_popup(self._require_page(), promised, self._events, self._fence, self.timeout_ms)
        followed = self._events.newest_tab(self._require_page())
        if followed is None or self._fence.refusal is not None:
            return  # no tab, or the fence refused the tab's page: the action fails saying so
        url, title = followed
        if is_web_url(url):
            self._navigate(url)
        else:
            self._reports.append(tab_report(url, title))

    def _navigation_problem(self) -> str | None:
        """An HTTP error or a blocked host on the navigation this action caused, if any."""
        return self._fence.refusal or self._navigation.http_error(self._require_page())

    # -- observation ------------------------------------------------------------------------------

    def _ensure_observed(self) -> None:
        self._ensure_page()
        if self._observer.last_page is None:
            self._observe_now()

    def _observe_now(self, reports: Sequence[str] = ()) -> Page:
        """Read the page; `reports` (what the page did since the last observation) head the text."""
        return self._observer.observe(self._require_page(), reports, self._last_good_url)

    # -- browser management -----------------------------------------------------------------------

    def _require_page(self) -> PlaywrightPage:
        if self._page is None:
            raise BrowserUnavailable("the browser is not running")
        return self._page

    def _ensure_page(self) -> None:
        """Start the browser on first use; replace a crashed page or a dead browser.

        A replacement page opens the last URL an action succeeded on. A browser can die unnoticed (a
        shared one killed: Playwright learns of it only when asked for a page), so a failure to open
        one starts over once with a new browser; a second is `BrowserUnavailable`.
        """
        try:
            self._ensure_page_once()
        except Error:
            self._browser = self._context = self._page = None
            try:
                self._ensure_page_once()
            except Error as error:
                raise BrowserUnavailable(f"the browser failed to open a page: {first_line(error)}") from error

    def _ensure_page_once(self) -> None:
        if self._browser is None or not self._browser.is_connected():
            self._browser = self._context = self._page = None  # until a new browser has started
            self._browser = self._driver.new_browser(self.browser_endpoint, self.headless)
        if self._context is None:
            self._context = self._new_context(self._browser)
        if self._page is None or self._events.crashed or self._page.is_closed():
            if self._page is not None:
                try:
                    self._page.close()
                except Error:
                    pass
            self._open_page(self._context)

    def _save_storage(self) -> None:
        """Keep cookies and local storage on disk after every action, so a resumed run keeps its cart or
        login: readable by this user only from the moment the file exists (`storage.write_state`)."""
        if self.storage_path is None or self._context is None:
            return
        try:
            write_state(self.storage_path, self._context.storage_state())
        except (Error, OSError):
            pass  # the next action saves again; losing one snapshot only costs a resume its cookies

    def _keep_private(self) -> None:
        """The folder of the session's files, and a state file an older version wrote, to this user only
        (`planner.browser.storage`); a folder that cannot be made is the screenshots' to report."""
        with contextlib.suppress(OSError):
            if self.screenshot_dir is not None:
                private_folder(self.screenshot_dir)
        with contextlib.suppress(OSError):
            if self.storage_path is not None:
                private_file(self.storage_path)

    def _new_context(self, browser: Browser) -> BrowserContext:
        width, height = self.viewport
        viewport: ViewportSize = {"width": width, "height": height}
        context = None
        self._keep_private()
        if self.storage_path is not None and self.storage_path.is_file():
            try:
                context = browser.new_context(
                    viewport=viewport, storage_state=self.storage_path, service_workers=self._fence.service_workers
                )
            except Error:
                context = None  # an unreadable state file: start without cookies rather than not at all
        if context is None:
            context = browser.new_context(viewport=viewport, service_workers=self._fence.service_workers)
        context.set_default_timeout(self.timeout_ms)
        context.set_default_navigation_timeout(self.timeout_ms)
        context.add_init_script(PROMISES_JS)
        context.add_init_script(LISTENERS_JS)
        self._fence.install(context)
        return context

    def _open_page(self, context: BrowserContext) -> None:
        page = context.new_page()
        self._page = page
        self._observer.forget()
        self._events.attach(page)
        self._navigation.attach(page)
        self._fence.attach(page)
        try:
            page.goto(self._secrets.fill(self._last_good_url), wait_until="load", timeout=self.timeout_ms)
        except Error:
            pass  # the first observation shows whatever did load; actions report their own errors


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _describe(action: _BrowserAction) -> str:
    if isinstance(action, ElementAction):
        return f"{action.kind} on element {action.element}"
    if isinstance(action, (GoBack, Goto)):
        return "navigation"
    return action.kind
