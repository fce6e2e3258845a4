"""Where a click lands: a visible point of the element itself, checked before the pointer goes there.

Playwright clicks the middle of an element's box and, when something else is there, waits out the
whole timeout saying that something "intercepts pointer events". On real pages the middle is often
not the element: an icon whose glyph is drawn beside an empty box, a badge over a button's centre,
an element with `pointer-events: none` whose parent takes the click, a sticky header or a cookie
banner over the row. So before a click or a hover the element is scrolled into view and points of
it are tried, the middle first, then a grid over each of its boxes (an inline element that wraps has
several): the first point where `elementFromPoint` (followed into open shadow roots, and out through
every frame up to the page, each frame's element hit at that point in its parent) finds the element
or something inside it is where the pointer goes. When no point is the element's, the action fails
at once with one sentence naming what covers it, so the agent can close or move that first instead
of clicking it unawares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Error, Frame, Locator, Position
from playwright.sync_api import Page as PlaywrightPage

from planner.browser.failures import _ActionFailed

__all__ = ["Aim", "aim", "click", "hover"]

_POLL_MS = 100
"""How often a covered element is looked at again while it may still be uncovering (an overlay fading)."""
_WAIT_SHARE = 4
"""A cover that stays `timeout / _WAIT_SHARE` is the page's state, not a transition: the action fails."""

_DESCRIBE_JS = """
  const describe = t => {
    const role = t.getAttribute('role');
    const classes = Array.from(t.classList).slice(0, 2).join(' ');
    const what = `<${t.tagName.toLowerCase()}${t.id ? ` id="${t.id}"` : ''}${classes ? ` class="${classes}"` : ''}`
      + `${role ? ` role="${role}"` : ''}>`;
    const text = (t.getAttribute('aria-label') || t.innerText || '').replace(/\\s+/g, ' ').trim();
    return text ? `${what} "${text.length > 60 ? text.slice(0, 59) + '…' : text}"` : what;
  };
  const hit = (doc, x, y) => {  // the element at a point, followed into open shadow roots
    let t = doc.elementFromPoint(x, y);
    while (t && t.shadowRoot) {
      const inner = t.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === t) break;
      t = inner;
    }
    return t;
  };
"""
"""An element in a few words, for a sentence about it: its tag, id, first classes and role, and the start
of its text (`<div id="consent"> "We use cookies…"`); and `hit`, the element a point of a document
reaches, inside open shadow roots."""

_AIM_JS = (
    "(e, centre) => {"
    + _DESCRIBE_JS
    + """
  const up = x => x.assignedSlot || x.parentElement || (x.parentNode instanceof ShadowRoot ? x.parentNode.host : null);
  const within = (x, target) => { for (; x; x = up(x)) if (x === target) return true; return false; };
  const view = e.ownerDocument.defaultView;
  const onScreen = r => r.bottom > 0 && r.right > 0 && r.top < view.innerHeight && r.left < view.innerWidth;
  const sized = x => Array.from(x.getClientRects()).filter(r => r.width > 0 && r.height > 0);
  // An empty box whose icon is its child's (an svg, an <i>) is aimed at through its children's boxes.
  const boxes = x => { const own = sized(x); return own.length ? own : Array.from(x.querySelectorAll('*')).flatMap(sized); };
  let cover = null;
  const search = target => {  // the first point of `target` a click reaches, or null (noting the first cover met)
    for (const r of boxes(target).filter(onScreen)) {
      const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
      const right = Math.min(r.right, view.innerWidth), bottom = Math.min(r.bottom, view.innerHeight);
      const points = [[(left + right) / 2, (top + bottom) / 2]];
      for (const n of [3, 5]) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
        points.push([left + (right - left) * (j + 0.5) / n, top + (bottom - top) * (i + 0.5) / n]);
      }
      for (const [x, y] of points) {
        const t = hit(e.ownerDocument, x, y);
        if (t && within(t, target)) return [x, y];
        if (t && !cover) cover = t;
      }
    }
    return null;
  };
  if (!boxes(e).length) return { box: false };
  const whole = r => r.top >= 0 && r.left >= 0 && r.bottom <= view.innerHeight && r.right <= view.innerWidth;
  // As little scrolling as brings it whole on screen (the page the agent read stays where it was); the
  // middle of the screen when looked at again (a sticky header may cover the screen's edge).
  if (centre) e.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  else if (!boxes(e).some(whole)) e.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
  const point = search(e);
  if (point) {
    const origin = e.getBoundingClientRect(), own = sized(e).length > 0;  // Playwright aims only at a box of its own
    const [x, y] = point;
    return { box: true, own, x: x - origin.left - e.clientLeft, y: y - origin.top - e.clientTop, vx: x, vy: y,
      framed: view !== view.top };
  }
  // A visually hidden checkbox or radio under its styled label: the label takes the click for it.
  for (const label of Array.from(e.labels || [])) {
    const at = search(label);
    if (at) return { box: true, own: false, x: 0, y: 0, vx: at[0], vy: at[1], framed: view !== view.top };
  }
  const contains = cover && cover.contains(e);
  return { box: true, cover: cover ? describe(cover) : 'nothing (it is outside the window)', parent: !!contains };
}"""
)
"""Scrolls `e` just into view when none of its boxes is wholly on screen (into the middle when `centre`
says so: a sticky header may cover it at the screen's edge), then returns the first point of it
where a click reaches it (x, y from its padding box's top left, Playwright's `position`, when it has a
box of its own; vx, vy in its frame's viewport), else such a point of one of its labels (a visually
hidden checkbox's), else what is there instead: `cover` described in one phrase, `parent` when that
is an element around it (the element itself takes no pointer events)."""

_FRAME_HIT_JS = (
    "(f, [x, y]) => {"
    + _DESCRIBE_JS
    + """
  const r = f.getBoundingClientRect(), s = getComputedStyle(f);
  const vx = r.left + f.clientLeft + parseFloat(s.paddingLeft) + x;
  const vy = r.top + f.clientTop + parseFloat(s.paddingTop) + y;
  const t = hit(f.ownerDocument, vx, vy);
  if (t === f) return { vx, vy };
  return { cover: t ? describe(t) : 'nothing (it is outside the window)' };
}"""
)
"""Whether the point (x, y) of a frame's viewport is the frame's in its parent document: its place
there, or what covers it."""


def click(page: PlaywrightPage, locator: Locator, element_id: int, timeout_ms: int) -> None:
    """Click the element `locator` names at a point where the click reaches it (`aim`)."""
    _point(page, locator, element_id, timeout_ms, hover=False)


def hover(page: PlaywrightPage, locator: Locator, element_id: int, timeout_ms: int) -> None:
    """Move the pointer over the element `locator` names, at a point where it reaches it (`aim`)."""
    _point(page, locator, element_id, timeout_ms, hover=True)


def _point(page: PlaywrightPage, locator: Locator, element_id: int, timeout_ms: int, hover: bool) -> None:
    point = aim(page, locator, element_id, timeout_ms)
    if point is None:
        (locator.hover if hover else locator.click)(timeout=timeout_ms)
    elif point.position is not None:
        (locator.hover if hover else locator.click)(position=point.position, timeout=timeout_ms)
    else:  # the point is its icon's (its own box is empty) or its label's: Playwright would refuse the element
        (page.mouse.move if hover else page.mouse.click)(*point.page)


@dataclass(frozen=True, slots=True)
class Aim:
    """A point where the pointer reaches an element: `position` from its padding box's top left (None when
    the point is not in a box of its own: its icon's, its label's), `page` in the page's viewport."""

    position: Position | None
    page: tuple[float, float]


def aim(page: PlaywrightPage, locator: Locator, element_id: int, timeout_ms: int) -> Aim | None:
    """Where to put the pointer on the element `locator` names; None when it has no box yet (Playwright
    then waits for it as usual). Raises `_ActionFailed` naming what covers it when no point of it is
    reachable, after waiting a quarter of the timeout for the cover to go."""
    deadline = timeout_ms / _WAIT_SHARE
    waited = 0
    while True:
        found = _try(locator, centre=waited > 0, timeout_ms=timeout_ms)
        if found is None:
            return None
        if "x" in found:
            position: Position | None = {"x": found["x"], "y": found["y"]} if found["own"] else None
            return Aim(position, (found["px"], found["py"]))
        if waited >= deadline:
            raise _ActionFailed(_covered(element_id, found))
        if waited:
            page.wait_for_timeout(_POLL_MS)
        waited += _POLL_MS


def _try(locator: Locator, centre: bool, timeout_ms: int) -> dict[str, Any] | None:
    """One look: the point, followed out through its frames to the page, or the cover; None when the
    element has no box. `centre`: scroll it to the middle of the screen first. An element of the page
    itself costs one evaluation; one in a frame, one more per frame around it."""
    try:
        found: dict[str, Any] = locator.evaluate(_AIM_JS, centre, timeout=timeout_ms)
    except Error:
        return None  # it went away: Playwright's click says so in its own words
    if not found["box"]:
        return None
    if "x" not in found:
        return found
    point = [found["vx"], found["vy"]]
    if found["framed"]:
        handle = locator.element_handle(timeout=timeout_ms)
        try:
            frame: Frame | None = handle.owner_frame()
            while frame is not None and frame.parent_frame is not None:
                try:
                    place = frame.frame_element().evaluate(_FRAME_HIT_JS, point)
                except Error:
                    return None  # a frame of another process still loading: leave the click to Playwright
                if "cover" in place:
                    return {"box": True, "cover": place["cover"], "parent": False}
                point, frame = [place["vx"], place["vy"]], frame.parent_frame
        finally:
            handle.dispose()
    found["px"], found["py"] = point
    return found


def _covered(element_id: int, found: dict[str, Any]) -> str:
    if found["parent"]:
        return (
            f"element {element_id} takes no clicks itself: a click on it lands on {found['cover']} around it; "
            "act on that element instead"
        )
    return (
        f"element {element_id} is covered by {found['cover']}: a click would land there, not on it; "
        "close or move what covers it first"
    )
