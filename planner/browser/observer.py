"""Reading the agent's page: the text a model sees, and the elements its ids stand for.

`planner.browser.observation` turns a snapshot into text (pure text work); this is the browser's
side: mark what the accessibility tree leaves out (`planner.browser.marks`), take the snapshot, retry
while a navigation replaces the document, and keep what the reading gave ids to, so an action on
an id reaches that element. Where reading starts is kept too: scrolling down past the end of a page
that still had lines cut on screen reads on from where the page could not scroll.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from playwright.sync_api import Error, Locator
from playwright.sync_api import Page as PlaywrightPage
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from planner.actions import Click, Hover, Select, Type
from planner.browser.failures import _ActionFailed, first_line, is_crash, read_only
from planner.browser.marks import DRAWN_JS, MARK_JS
from planner.browser.navigation import SETTLE_MS
from planner.browser.observation import Element, Place, render_page
from planner.protocols import ElementInfo, Page
from planner.secrets import Secrets

__all__ = ["ElementAction", "Observer"]

ElementAction = Click | Hover | Type | Select
"""The actions on an element the last observation gave an id."""

_TEXT_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider"})
_LIST_ROLES = frozenset({"combobox", "listbox", "slider"})
_SNAPSHOT_ATTEMPTS = 3
_MIN_SCROLL_SHARE = 8
"""A scroll that brings the first cut line to the top moves at least 1/8 of the screen, so it always moves on."""
_TARGET_JS = """e => {
  const noEnter = ['checkbox', 'radio', 'submit', 'image', 'button', 'reset', 'file', 'hidden', 'range', 'color'];
  const field = ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(e.tagName);
  const pressable = c => c.tagName === 'BUTTON' || (c.tagName === 'INPUT' && ['submit', 'button', 'reset', 'image'].includes(c.type));
  const isSubmit = c => (c.tagName === 'BUTTON' || c.tagName === 'INPUT') && ['submit', 'image'].includes(c.type);
  const texts = c => [
    ['INPUT', 'SELECT', 'TEXTAREA'].includes(c.tagName) ? '' : c.innerText,
    pressable(c) ? c.value : '',
    c.getAttribute('aria-label'), c.getAttribute('title'), c.getAttribute('alt'), c.getAttribute('placeholder'),
  ].filter(t => typeof t === 'string' && t.trim());
  const form = field ? e.form : null;
  const link = e.closest('a[href], area[href]');
  const entersSubmit = e.tagName === 'INPUT' && !noEnter.includes(e.type);
  const url = link ? link.href
    : !form ? ''
    : isSubmit(e) && e.hasAttribute('formaction') ? e.formAction
    : isSubmit(e) || entersSubmit ? form.action : '';
  return {
    inputType: field ? String(e.type || '') : '',
    texts: texts(e),
    formSubmits: form && entersSubmit ? Array.from(form.elements).filter(isSubmit).flatMap(texts) : [],
    url: url || '',
  };
}"""
"""What the guard needs beyond role and name: every other name the element carries, the names of
the submit controls Enter would press, and where a link or form leads (resolved by the browser)."""
_QUIET_JS = """([quiet, most]) => new Promise(resolve => {
  let timer = setTimeout(done, quiet);
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
  const limit = setTimeout(done, most);
  function done() { observer.disconnect(); clearTimeout(timer); clearTimeout(limit); resolve(); }
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})"""
"""Resolves once the document has not changed for `quiet` ms, or after `most` ms."""
_DRAWING_QUIET_MS = 600
_DRAWING_MOST_MS = 5000
_SCROLL_JS = """dy => {
  const y = window.scrollY;
  window.scrollBy({top: dy, behavior: 'instant'});
  const page = document.scrollingElement || document.documentElement;
  return { moved: window.scrollY - y, scrollable: page.scrollHeight > window.innerHeight };
}"""


class Observer:
    """Reads one environment's page: `budget` characters of text, hidden as `secrets` say, for a
    screen of `viewport` (width, height); `on_crash` is told when the page turns out to have crashed."""

    def __init__(
        self,
        secrets: Secrets,
        budget: int,
        viewport: tuple[int, int],
        timeout_ms: int,
        on_crash: Callable[[], None],
    ) -> None:
        self._secrets = secrets
        self._budget = budget
        self._viewport = viewport
        self._timeout_ms = timeout_ms
        self._on_crash = on_crash
        self._elements: Mapping[int, Element] = {}
        self._next_top: float | None = None
        self._reading: tuple[str, float] = ("", 0.0)
        """(URL, viewport y) where the observation starts reading: below 0 once a page scrolled to
        its end still had lines cut on screen; any other URL reads from the top."""
        self._last_page: Page | None = None
        self._waited_for: float | None = None
        """The document (its `performance.timeOrigin`) last waited for to be drawn (`_await_drawn`)."""

    @property
    def last_page(self) -> Page | None:
        """The last observation, None when this page has not been read yet."""
        return self._last_page

    @property
    def elements(self) -> Mapping[int, Element]:
        """The elements the last observation gave ids, by id."""
        return self._elements

    def forget(self) -> None:
        """A new page opened: nothing of it has been read."""
        self._last_page, self._elements = None, {}

    def observe(self, page: PlaywrightPage, reports: Sequence[str], last_good_url: str) -> Page:
        """Read the page; `reports` (what the page did since the last observation) head the text. A page
        that cannot be read shows `last_good_url` when it is closed."""
        failure = ""
        for _ in range(_SNAPSHOT_ATTEMPTS):
            try:
                marks = _mark(page)
                if not marks.drawn and self._await_drawn(page):
                    marks = _mark(page)  # read what the scripts drew
                snapshot = page.locator("body").aria_snapshot(mode="ai", boxes=True, timeout=self._timeout_ms)
                title = page.title()
                observation = render_page(
                    title,
                    snapshot,
                    self._budget,
                    marks.passwords,
                    marks.readonly,
                    self._reading_top(page.url),
                    reports,
                    marks.editors,
                    self._viewport[1],
                    marks.unreachable,
                )
                hide = self._secrets.hide
                result = Page(
                    url=hide(page.url), title=hide(title), text=hide(observation.text), html_chars=marks.markup
                )
            except Error as error:  # a navigation replaced the document mid-read; wait and retry
                if is_crash(error):
                    self._on_crash()
                    return self.unreadable("page crashed", last_good_url if page.is_closed() else page.url)
                failure = first_line(error)
                try:
                    page.wait_for_load_state("load", timeout=self._timeout_ms)
                except Error:
                    pass
                continue
            self._elements, self._next_top = observation.elements, observation.next_top
            self._last_page = result
            return result
        return self.unreadable(failure, last_good_url if page.is_closed() else page.url)

    def _await_drawn(self, page: PlaywrightPage) -> bool:
        """Wait for a page that shows nothing yet (`marks.DRAWN_JS`) to be drawn by its scripts, then for
        them to finish drawing (no change for `_DRAWING_QUIET_MS`, `_DRAWING_MOST_MS` at most); False when
        this document was waited for once already: it is empty, not being drawn. A page that shows
        something costs nothing here: the marking pass says whether it is drawn."""
        document = page.evaluate("performance.timeOrigin")
        if document == self._waited_for:
            return False
        self._waited_for = document
        try:
            page.wait_for_function(DRAWN_JS, timeout=self._timeout_ms / 2)
        except PlaywrightTimeout:
            return True  # an empty page is what it is: read it
        page.evaluate(_QUIET_JS, [_DRAWING_QUIET_MS, _DRAWING_MOST_MS])
        return True

    def unreadable(self, reason: str, url: str) -> Page:
        """A page at `url` that could not be read: no ids, so every element action is refused."""
        self._elements, self._next_top = {}, None
        hide = self._secrets.hide
        self._last_page = Page(url=hide(url), text=hide(f"(the page could not be read: {reason})"))
        return self._last_page

    def read_from_top(self) -> None:
        """A navigation: whatever page comes next is read from its top."""
        self._reading = ("", 0.0)

    def scroll(self, page: PlaywrightPage, direction: str) -> None:
        """Scroll the window by one viewport; pages that scroll an inner pane get a mouse wheel.

        When the last observation was cut inside the viewport, scrolling down brings the first cut
        line to the top instead, so no element is skipped.
        """
        width, height = self._viewport
        delta = height if direction == "down" else -height
        next_top = self._next_top
        cut_on_screen = next_top is not None and 0 < next_top < height
        if direction == "down" and next_top is not None and cut_on_screen:
            delta = max(int(next_top), height // _MIN_SCROLL_SHARE)
        reading = self._reading_top(page.url)
        scrolled = page.evaluate(_SCROLL_JS, delta)
        if direction == "up":
            self._reading = (page.url, 0.0)
        elif cut_on_screen and scrolled["scrollable"] and scrolled["moved"] < delta:
            self._reading = (page.url, reading + delta - scrolled["moved"])  # read on where scrolling could not
        if not scrolled["moved"]:
            page.mouse.move(width / 2, height / 2)
            page.mouse.wheel(0, delta)
            page.wait_for_timeout(SETTLE_MS)

    def role(self, element_id: int) -> str:
        element = self._elements.get(element_id)
        return element.role if element is not None else ""

    def element_problem(self, action: ElementAction) -> str | None:
        """Why `action` cannot run on the element its id stands for; None when it can."""
        element = self._elements.get(action.element)
        if element is None:
            return f"element {action.element} is not on the page"
        if element.disabled and not isinstance(action, Hover):
            return (
                f"element {action.element} is disabled: the page does not take a {action.kind} on it now "
                "(something else may have to be done first)"
            )
        if isinstance(action, Type) and element.role not in _TEXT_FIELD_ROLES:
            return f"element {action.element} is a {element.role}, not a text field"
        if isinstance(action, Type) and element.readonly:
            return read_only(action.element)
        if isinstance(action, Select) and element.role not in _LIST_ROLES:
            return f"element {action.element} is a {element.role}, not a drop-down list"
        return None

    def locate(self, page: PlaywrightPage, action: ElementAction) -> Locator:
        """The element `action` acts on, or `_ActionFailed` saying why it cannot."""
        problem = self.element_problem(action)
        if problem:
            raise _ActionFailed(problem)
        element = self._elements[action.element]
        locator = page.locator(f"aria-ref={element.ref}")
        if not locator.count():  # a missing ref would otherwise wait out the whole timeout
            raise _ActionFailed(f"element {action.element} is no longer on the page")
        return locator

    def target(self, page: PlaywrightPage, element_id: int) -> ElementInfo | None:
        """What the element behind `element_id` is, for the guard (`_TARGET_JS`); None when no element has it."""
        element = self._elements.get(element_id)
        if element is None:
            return None
        details: dict[str, object] = {}
        try:
            locator = page.locator(f"aria-ref={element.ref}")
            if locator.count():
                details = locator.evaluate(_TARGET_JS, timeout=self._timeout_ms)
        except Error:
            pass  # the element went away; execute() will report it
        return ElementInfo(
            role=element.role,
            name=element.name,
            input_type=str(details.get("inputType", "")),
            texts=tuple(str(text) for text in details.get("texts", ())),  # type: ignore[attr-defined]
            form_submits=tuple(str(text) for text in details.get("formSubmits", ())),  # type: ignore[attr-defined]
            url=str(details.get("url", "")),
        )

    def _reading_top(self, url: str) -> float:
        reading_url, top = self._reading
        return top if reading_url == url else 0.0


@dataclass(slots=True)
class _Marks:
    """What marking the page's frames found (`marks.MARK_JS`). A place is a box in its own frame's pixels,
    as the snapshot gives it, with whether that frame is the page's main one: a field in the page and one
    in a frame can have the same box."""

    readonly: list[Place]
    """Read-only text fields."""
    editors: dict[Place, str]
    """Editors, with the text they hold."""
    markup: int
    """The size of the raw HTML the observation stands for (every frame's, its open shadow roots' included)."""
    passwords: list[str]
    """The password fields' contents, to mask."""
    unreachable: list[Place]
    """Controls no pointer reaches (a skip link parked off the page, a 1-pixel focus proxy)."""
    drawn: bool = True
    """The page's main document shows something (`marks.DRAWN_JS`)."""


def _mark(page: PlaywrightPage) -> _Marks:
    """Mark clickables without a role, editors, and unnamed tabs in every frame (`marks.MARK_JS`), and
    gather what the marking found."""
    marks = _Marks([], {}, 0, [], [])
    for frame in page.frames:
        try:
            found = frame.evaluate(MARK_JS)
        except Error:
            continue  # a frame detached or navigating; the snapshot shows it as it is
        main = frame is page.main_frame
        marks.drawn = marks.drawn and (found["drawn"] or not main)
        marks.readonly.extend(_places(main, found["readonly"]))
        marks.unreachable.extend(_places(main, found["unreachable"]))
        marks.editors.update({(main, _box(*box)): text for *box, text in found["editors"]})
        marks.markup += found["markup"]
        marks.passwords.extend(found["passwords"])
    return marks


def _box(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    return float(x), float(y), float(w), float(h)


def _places(main: bool, boxes: list[list[float]]) -> list[Place]:
    return [(main, _box(*box)) for box in boxes]
