"""The screenshots a browser session leaves: one numbered JPEG after every action, and approval previews.

One numbering for both, continued after the files already in the folder, so a resumed session
overwrites none; fields holding a secret are blacked out of every picture.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Error, Locator
from playwright.sync_api import Page as PlaywrightPage

from planner.browser.marks import SECRET_FIELD, SECRET_FIELDS_JS
from planner.browser.observation import Element
from planner.events import Box
from planner.protocols import Preview
from planner.secrets import Secrets

__all__ = ["Screenshots"]

_SCREENSHOT_NAME = re.compile(r"^(\d+)(?:-approval)?\.(?:jpg|png)$")
"""An action's screenshot (`0007.jpg`) or an approval's preview (`0008-approval.jpg`): one numbering.
A session resumed from an older log may have PNG ones."""
_JPEG_QUALITY = 80
"""Screenshots are JPEG: a third of a PNG's encoding time on a results page (33 vs 99 ms) and under half
its size, and every place that shows one (live page, approval box, inspector, report) shrinks it anyway."""
_SCROLL_TO_JS = "([x, y]) => window.scrollTo({left: x, top: y, behavior: 'instant'})"


def _last_screenshot_number(directory: Path | None) -> int:
    """Continue numbering after existing screenshots, so a resumed session overwrites none."""
    if directory is None or not directory.is_dir():
        return 0
    numbers = (int(m.group(1)) for p in directory.iterdir() if (m := _SCREENSHOT_NAME.match(p.name)))
    return max(numbers, default=0)


class Screenshots:
    """Takes the pictures into `directory` (None: none are taken)."""

    def __init__(self, directory: Path | None, secrets: Secrets, viewport: tuple[int, int], timeout_ms: int) -> None:
        self._directory = directory
        self._secrets = secrets
        self._viewport = viewport
        self._timeout_ms = timeout_ms
        self._counter = _last_screenshot_number(directory)

    def take(self, page: PlaywrightPage, suffix: str = "") -> str | None:
        """The viewport as a numbered JPEG in the screenshot folder (`suffix` marks an approval's preview);
        in CSS pixels, the unit of an element's box, whatever the screen's pixel ratio. With secrets,
        every field holding one is masked (`SECRET_FIELDS_JS` marks them)."""
        if self._directory is None:
            return None
        self._counter += 1
        path = self._directory / f"{self._counter:04d}{suffix}.jpg"
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            masked: list[Locator] = []
            if self._secrets:
                page.evaluate(SECRET_FIELDS_JS, sorted(self._secrets.values()))
                masked = [page.locator(f"[{SECRET_FIELD}]")]
            page.screenshot(
                path=path,
                type="jpeg",
                quality=_JPEG_QUALITY,
                timeout=self._timeout_ms,
                scale="css",
                mask=masked,
            )
        except (Error, OSError):
            return None
        return str(path)

    def preview(self, page: PlaywrightPage, element: Element | None) -> Preview | None:
        """A viewport screenshot with `element` scrolled into view, and its box in it; the page is
        scrolled back afterwards."""
        try:
            scrolled = page.evaluate("() => [window.scrollX, window.scrollY]")
        except Error:
            return None  # the page is going away; execute() will report it
        try:
            box = self._element_box(page, element) if element is not None else None
            path = self.take(page, "-approval")
        finally:
            try:
                page.evaluate(_SCROLL_TO_JS, scrolled)
            except Error:
                pass  # a navigation replaced the page: there is no scroll position to keep
        return Preview(path, box) if path is not None else None

    def _element_box(self, page: PlaywrightPage, element: Element) -> Box | None:
        """Where the element is on screen once scrolled into view, clipped to the viewport; None when it
        is not on the page or not drawn (hidden, zero-sized, outside the screen)."""
        try:
            locator = page.locator(f"aria-ref={element.ref}")
            if not locator.count():
                return None
            locator.scroll_into_view_if_needed(timeout=self._timeout_ms)
            drawn = locator.bounding_box(timeout=self._timeout_ms)
        except Error:
            return None
        if drawn is None:
            return None
        width, height = self._viewport
        left, top = max(0.0, drawn["x"]), max(0.0, drawn["y"])
        right, bottom = min(float(width), drawn["x"] + drawn["width"]), min(float(height), drawn["y"] + drawn["height"])
        if right <= left or bottom <= top:
            return None
        return Box(x=left, y=top, width=right - left, height=bottom - top)
