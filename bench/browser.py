"""The browser's observation and action layer, measured: `python -m bench.browser`.

Three parts (`--part gallery`, `--part shop` or `--part approvals` runs one of them):

- **The gallery** (`tests/pages/gallery_*.html`, one page per hard case): coverage, the action
  round-trip, observation size against the raw HTML and the median action time.
- **The demo shop** (eight pages): observation size against the raw HTML, coverage, and the median
  time of a browser action with screenshots on, as sessions run them.
- **Approvals per demo task**: the approvals each bundled task asks for, run as the evaluation's
  baseline runs it; a new approval that is not a real purchase is a regression of the fence's policy.

The bench measures whatever `planner` it imports; it has no baseline of its own, so to compare with
older code, run this file and today's gallery on that commit's code (docs/architecture.md,
"bench/browser.py").
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Error, Frame

from bench.foreign import APPS, TaskPage, start_app
from demo.shop import start_shop
from planner.browser.environment import BrowserEnvironment
from planner.protocols import Page

GALLERY = Path(__file__).resolve().parent.parent / "tests" / "pages"
GALLERY_PAGES = [
    "gallery_clickables",
    "gallery_inputs",
    "gallery_names",
    "gallery_long",
    "gallery_hover",
    "gallery_shadow",
    "gallery_dialogs",
    "gallery_editors",
    "gallery_frames",
    "gallery_downloads",
    "gallery_newtab",
    "gallery_icons",
]
PAGES = [
    "/",
    "/search?q=printer",
    "/category/headphones?sort=price_asc",
    "/category/printers?max_price=150",
    "/product/inkwell-home-200",
    "/product/sonora-arc-over-ear",
    "/cart",
    "/category/headphones?max_price=100",
]
ACTIONS = [
    "goto [/]",
    "type [{search}] [wireless printer] [1]",
    "click [{first}]",
    "go_back",
    "scroll [down]",
    "scroll [up]",
]
GOAL_RATIO = 8.0
TIMING_ROUNDS = 10
"""How many times the shop's six timed actions run: 60 timings, so one slow action moves the median little."""
MAX_SCROLLS = 40
SLOW_FILE_SECONDS = 1.0
"""How long the gallery's server takes to answer `slow/NAME`."""
MAX_MISSES_SHOWN = 5
STATELESS = frozenset({"gallery_long", "gallery_hover"})
"""Pages whose targets can all be acted on one after the other without opening the page again."""
HOVER_PAGES = frozenset({"gallery_hover"})
"""Pages whose targets are hovered, not clicked: the round trip is the pointer's `mouseover` reaching them."""

_ELEMENT = re.compile(r'\[(\d+)\] ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?((?:(?!\[\d+\] )[^\n])*)')
_TARGETS_JS = """() => {
  const all = [];
  const visit = scope => { for (const e of scope.querySelectorAll('*')) { all.push(e); if (e.shadowRoot) visit(e.shadowRoot); } };
  visit(document);
  return all.filter(e => e.hasAttribute('data-g')).map(e => {
  const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  const visible = r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
  return { g: e.dataset.g, visible, onScreen: visible && r.bottom > 0 && r.top < innerHeight };
  });
}"""
"""Every `data-g` element, those inside open shadow roots (web components) included."""
_MARKUP_JS = """() => {
  let chars = document.documentElement.outerHTML.length;
  const visit = scope => {
    for (const e of scope.querySelectorAll('*')) if (e.shadowRoot) { chars += e.shadowRoot.innerHTML.length; visit(e.shadowRoot); }
  };
  visit(document);
  return chars;
}"""
_HITS_JS = "kinds => window.__takeHits().filter(h => kinds.includes(h.type)).map(h => h.g)"
_CONTROLS_JS = """() => Array.from(document.querySelectorAll(
  'a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], '
  + '[role=checkbox], [role=radio], [role=tab], [role=option], [role=menuitem], [role=combobox], [role=textbox], '
  + '[role=switch], [role=slider], [role=listbox]'
), e => {
  const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  const visible = r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
  return { visible, onScreen: visible && r.bottom > 0 && r.top < innerHeight, marked: e.hasAttribute('data-bench-id') };
})"""
"""The page's controls (native, or with a control's role), each visible or not, on the screen or not, and
whether an observation gave it an id (`_mark_ids`)."""
_MARK_JS = "(e, id) => e.setAttribute('data-bench-id', String(id))"
ACTED = ("click", "input", "change")
"""The events a click, type or select fires on its element."""
HOVERED = ("mouseover",)


@dataclass(frozen=True, slots=True)
class Shown:
    """One element as an observation shows it."""

    id: int
    role: str
    name: str
    rest: str


@dataclass(slots=True)
class GalleryFigures:
    """What one gallery page measured; the totals are sums over pages."""

    page: str
    visible: int = 0
    on_screen: int = 0
    first_screen: int = 0
    reached: int = 0
    actions: int = 0
    round_trips: int = 0
    html_chars: int = 0
    observation_chars: int = 0
    timings: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)


def shown_elements(text: str) -> list[Shown]:
    """The elements an observation shows, in order: `[12] button "Name" ...`."""
    return [Shown(int(m[1]), m[2], (m[3] or "").replace('\\"', '"'), m[4]) for m in _ELEMENT.finditer(text)]


def matches(target: str, name: str) -> bool:
    """An element's shown name names the target: equal, or starting with it (a card's name runs on)."""
    target, name = target.casefold().strip(), name.casefold().strip()
    return name == target or name.startswith(target + " ")


def find(text: str, target: str) -> Shown | None:
    return next((shown for shown in shown_elements(text) if matches(target, shown.name)), None)


@contextmanager
def serve_gallery() -> Iterator[str]:
    """The gallery pages on a local HTTP server, for as long as the block runs.

    A second server on another port serves them too, as another origin (`localhost`, not `127.0.0.1`):
    the pages' `other-origin.js` names it, so a page can frame a document from another site.
    """
    other = _server(_QuietHandler, "")
    other_origin = f"http://localhost:{other.server_address[1]}"
    main = _server(_QuietHandler, other_origin)
    try:
        yield f"http://127.0.0.1:{main.server_address[1]}"
    finally:
        for server in (main, other):
            server.shutdown()
            server.server_close()


def _server(handler: type[_QuietHandler], other_origin: str) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, other_origin, directory=str(GALLERY)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(SimpleHTTPRequestHandler):
    """The gallery's files; `other-origin.js`, which says where the other origin's server is;
    `attachment/NAME`, a gallery file sent as an attachment (`Content-Disposition`), as a download; and
    `slow/NAME`, a gallery file answered after `SLOW_FILE_SECONDS` (a busy file server)."""

    def __init__(self, other_origin: str, *args: Any, **kwargs: Any) -> None:
        self.other_origin = other_origin
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        if self.path == "/other-origin.js":
            self._send(f"window.OTHER_ORIGIN = {json.dumps(self.other_origin)};".encode(), "text/javascript")
        elif self.path.startswith("/attachment/"):  # a file the server asks the browser to save, not show
            name = Path(self.path).name
            self._send((GALLERY / name).read_bytes(), "text/csv", f'attachment; filename="{name}"')
        elif self.path.startswith("/slow/"):
            time.sleep(SLOW_FILE_SECONDS)
            self._send((GALLERY / Path(self.path).name).read_bytes(), "text/csv")
        else:
            super().do_GET()

    def _send(self, body: bytes, content_type: str, disposition: str | None = None) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            if disposition is not None:
                self.send_header("Content-Disposition", disposition)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away before its answer arrived

    def log_message(self, format: str, *args: object) -> None:
        return None


def targets(env: BrowserEnvironment) -> list[dict[str, object]]:
    """The page's `data-g` elements, its frames' included, each with whether it is visible and on the
    current screen (a frame's: on the frame's own screen)."""
    return [target for frame in _frames(env) for target in frame.evaluate(_TARGETS_JS)]


def hits(env: BrowserEnvironment, kinds: tuple[str, ...] = ACTED) -> list[str | None]:
    """The `data-g` names that received events of `kinds` (clicks, inputs and changes) since the last
    call, in any frame; the record of the others is dropped with them."""
    return [hit for frame in _frames(env) for hit in frame.evaluate(_HITS_JS, list(kinds))]


def markup_chars(env: BrowserEnvironment, url: str, storage_state: Path | None = None) -> int:
    """The raw HTML of the page at `url`, measured here rather than taken from `Page.html_chars`, so that
    versions of the environment compare on one measure: every frame's document, its open shadow roots'
    markup included. It is read in a browser context of its own, never observed: an observation marks
    the page it reads (a role and a name on each clickable it finds), which is not the page's HTML.
    `storage_state`: the cookies of a logged-in user, where the page needs one (else it is the login page)."""
    browser = env._browser  # no public API lends the environment's browser; the bench borrows it
    assert browser is not None, "the environment has not started"
    context = browser.new_context(storage_state=storage_state)
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        total = 0
        for frame in page.frames:
            try:
                total += frame.evaluate(_MARKUP_JS)
            except Error:
                continue  # a frame that went away has no markup to count
        return total
    finally:
        context.close()


def _frames(env: BrowserEnvironment) -> list[Frame]:
    """The page's frames that run `gallery.js`: no public API reads the page's DOM; the bench does."""
    return [
        frame for frame in env._require_page().frames if frame.evaluate("() => typeof window.__takeHits === 'function'")
    ]


def action_for(shown: Shown) -> str:
    """The action that exercises an element: type into text fields, pick in native lists, else click."""
    if shown.role in ("textbox", "searchbox") and "readonly" not in shown.rest:
        return f"type [{shown.id}] [gallery] [0]"
    if shown.role == "combobox" and "options=" in shown.rest:
        return f"select [{shown.id}] [Country 05]"
    return f"click [{shown.id}]"


def measure_page(env: BrowserEnvironment, url: str, name: str) -> GalleryFigures:
    figures = GalleryFigures(page=name)
    page = env.goto(url).page
    assert page is not None, f"{url} did not open"
    figures.html_chars, figures.observation_chars = markup_chars(env, url), len(page.text)
    found = targets(env)
    visible = [str(t["g"]) for t in found if t["visible"]]
    on_screen = [str(t["g"]) for t in found if t["onScreen"]]
    figures.visible, figures.on_screen = len(visible), len(on_screen)
    figures.first_screen = sum(1 for g in on_screen if find(page.text, g))
    reached: set[str] = set()
    text = page.text
    for _ in range(MAX_SCROLLS):
        reached.update(g for g in visible if find(text, g))
        if "scroll down" not in text:
            break
        result = env.execute("scroll [down]")
        assert result.page is not None
        if result.page.text == text:
            break
        text = result.page.text
    figures.reached = len(reached)
    figures.misses = [g for g in visible if g not in reached]
    _round_trips(env, url, sorted(reached), figures)
    return figures


def _round_trips(env: BrowserEnvironment, url: str, reached: list[str], figures: GalleryFigures) -> None:
    """Act on every reached target and count those whose event really hit it. Pages whose actions
    change them (a picker opens, a label changes) are opened afresh before each action; on the
    others the targets are taken in page order, reading on from the page the last action left (a
    click scrolls its element into view) and scrolling down as they run out. A target never shown
    to act on is a miss."""
    fresh = figures.page not in STATELESS
    page = env.goto(url).page
    for target in reached if fresh else []:
        page = env.goto(url).page
        assert page is not None
        shown = find(page.text, target)
        if shown is not None:
            _act(env, target, shown, figures)
    remaining = set(reached) if not fresh else set()
    for _ in range(MAX_SCROLLS * 4):
        if not remaining:
            break
        assert page is not None
        left: Page | None = None
        for shown in shown_elements(page.text):
            hit = next((t for t in remaining if matches(t, shown.name)), None)
            if hit is not None:
                remaining.discard(hit)
                left = _act(env, hit, shown, figures)
        if left is not None:
            page = left
            continue
        before, page = page, env.execute("scroll [down]").page
        if page is None or page.text == before.text:
            break
    figures.misses.extend(f"{target}: never shown to act on" for target in sorted(remaining))


def _act(env: BrowserEnvironment, target: str, shown: Shown, figures: GalleryFigures) -> Page | None:
    """Act on `target` (hover it on a hover page) and count whether its event reached it, and only it."""
    hover = figures.page in HOVER_PAGES
    kinds = HOVERED if hover else ACTED
    hits(env, kinds)
    result = env.execute(f"hover [{shown.id}]" if hover else action_for(shown))
    figures.actions += 1
    figures.timings.append(result.duration_ms)
    received = hits(env, kinds)
    held = getattr(result, "held_dialog", None)  # older code under comparison has no held_dialog
    reached = result.ok or held is not None  # a held confirm: the click landed, the page asked
    if reached and received and all(g == target for g in received):
        figures.round_trips += 1
    else:
        figures.misses.append(f"{target}: {result.error or received}")
    return result.page


def gallery() -> None:
    print("gallery (tests/pages/gallery_*.html)")
    header = (
        f"{'page':22} {'visible':>7} {'1st screen':>11} {'reached':>8} {'round-trip':>11} "
        f"{'obs':>6} {'HTML':>7} {'HTML/obs':>9}"
    )
    print(header)
    rows: list[GalleryFigures] = []
    with serve_gallery() as site, BrowserEnvironment(f"{site}/gallery_clickables.html") as env:
        for name in GALLERY_PAGES:
            figures = measure_page(env, f"{site}/{name}.html", name)
            rows.append(figures)
            print(
                f"{name:22} {figures.visible:>7} {figures.first_screen:>5}/{figures.on_screen:<5} "
                f"{figures.reached:>4}/{figures.visible:<3} {figures.round_trips:>5}/{figures.actions:<5} "
                f"{figures.observation_chars:>6} {figures.html_chars:>7} "
                f"{figures.html_chars / max(figures.observation_chars, 1):>8.1f}x"
            )
            _print_misses(figures)
    _print_totals(rows)
    timings = [t for r in rows for t in r.timings]
    print(f"gallery action time ({len(timings)} actions): median {statistics.median(timings):.0f} ms")


def _print_misses(figures: GalleryFigures) -> None:
    for miss in figures.misses[:MAX_MISSES_SHOWN]:
        print(f"    missed: {miss}")
    if len(figures.misses) > MAX_MISSES_SHOWN:
        print(f"    ... and {len(figures.misses) - MAX_MISSES_SHOWN} more missed")


def _print_totals(rows: Sequence[GalleryFigures]) -> None:
    """Coverage of the first screen and by scrolling, the round trip and the size, over all `rows`."""
    on_screen, first = sum(r.on_screen for r in rows), sum(r.first_screen for r in rows)
    visible, reached = sum(r.visible for r in rows), sum(r.reached for r in rows)
    actions, trips = sum(r.actions for r in rows), sum(r.round_trips for r in rows)
    html, obs = sum(r.html_chars for r in rows), sum(r.observation_chars for r in rows)
    print(
        f"coverage, first screen {first}/{on_screen} = {100 * first / max(on_screen, 1):.1f} % (goal >= 98 %); "
        f"reachable by scrolling {reached}/{visible} = {100 * reached / max(visible, 1):.1f} %"
    )
    print(f"round-trip {trips}/{actions} = {100 * trips / max(actions, 1):.1f} % of actions hit the element named")
    print(
        f"observation vs raw HTML: {obs:,} vs {html:,} chars, {html / max(obs, 1):.1f}x smaller (goal >= {GOAL_RATIO:g}x)"
    )


@dataclass(slots=True)
class ShopCoverage:
    """The controls of one shop page: on the first screen and with an id there, visible and with an id
    once the page has been scrolled to its end."""

    on_screen: int = 0
    first_screen: int = 0
    visible: int = 0
    reached: int = 0


def _mark_ids(env: BrowserEnvironment) -> None:
    """Mark the element behind each id of the last observation (`data-bench-id`), through the ref the
    environment acts on: no public API says which element an id is; the bench must."""
    page = env._require_page()
    for element_id, element in env._observer.elements.items():
        try:
            page.locator(f"aria-ref={element.ref}").evaluate(_MARK_JS, element_id, timeout=5000)
        except Error:
            continue  # the element went away since the observation


def shop_coverage(env: BrowserEnvironment, text: str) -> ShopCoverage:
    """How many of the page's controls got an id on the first screen (`text`, the page just opened) and
    by scrolling to the end."""
    page, figures = env._require_page(), ShopCoverage()
    _mark_ids(env)
    first = page.evaluate(_CONTROLS_JS)
    figures.on_screen = sum(1 for c in first if c["onScreen"])
    figures.first_screen = sum(1 for c in first if c["onScreen"] and c["marked"])
    _scroll_to_end(env, text, MAX_SCROLLS)
    controls = page.evaluate(_CONTROLS_JS)
    figures.visible = sum(1 for c in controls if c["visible"])
    figures.reached = sum(1 for c in controls if c["visible"] and c["marked"])
    return figures


def _scroll_to_end(env: BrowserEnvironment, text: str, scrolls: int) -> None:
    """Scroll down from the observation `text` until it says nothing is below (`scrolls` times at most),
    marking the element behind each id read on the way (`_mark_ids`)."""
    for _ in range(scrolls):
        if "scroll down" not in text:
            break
        result = env.execute("scroll [down]")
        if result.page is None or result.page.text == text:
            break
        text = result.page.text
        _mark_ids(env)


def _shop_element(text: str, role: str, name: str | None = None) -> int:
    for shown in shown_elements(text):
        if shown.role == role and (name is None or shown.name == name):
            return shown.id
    raise LookupError(f"no {role} {name or ''} on the page")


def _html_without_css(url: str) -> int:
    """The page's HTML without its inline <style> blocks."""
    try:
        with urllib.request.urlopen(url) as response:
            html = response.read().decode("utf-8")
    except urllib.error.HTTPError as error:  # the broken widget's error page is a page too
        html = error.read().decode("utf-8")
    return len(re.sub(r"<style\b.*?</style>", "", html, flags=re.DOTALL))


def shop() -> None:
    print("demo shop")
    with start_shop() as shop, tempfile.TemporaryDirectory() as shots:
        env = BrowserEnvironment(
            shop.url + "/",
            screenshot_dir=Path(shots),
            storage_path=Path(shots) / "browser-state.json",
            allowed_domains=[],  # fenced to the shop's host, as every browser session is
        )
        total_obs = total_html = total_markup = 0
        coverage: list[ShopCoverage] = []
        print(
            f"{'page':40} {'observation':>12} {'raw HTML':>10} {'ratio':>7} {'no CSS':>8} {'ratio':>7}"
            f" {'1st screen':>11} {'reached':>8}"
        )
        for path in PAGES:
            page = env.goto(shop.url + path).page
            assert page is not None
            markup, html = _html_without_css(shop.url + path), markup_chars(env, shop.url + path)
            total_obs += len(page.text)
            total_html += html
            total_markup += markup
            covered = shop_coverage(env, page.text)
            coverage.append(covered)
            print(
                f"{path:40} {len(page.text):>12,} {html:>10,} {html / len(page.text):>6.1f}x"
                f" {markup:>8,} {markup / len(page.text):>6.1f}x"
                f" {covered.first_screen:>5}/{covered.on_screen:<5} {covered.reached:>4}/{covered.visible:<3}"
            )
        ratio = total_html / total_obs
        print(
            f"{'all pages':40} {total_obs:>12,} {total_html:>10,} {ratio:>6.1f}x {total_markup:>8,}"
            f" {total_markup / total_obs:>6.1f}x  (goal >= {GOAL_RATIO:g}x)"
        )
        on_screen, first = sum(c.on_screen for c in coverage), sum(c.first_screen for c in coverage)
        visible, reached = sum(c.visible for c in coverage), sum(c.reached for c in coverage)
        print(
            f"shop coverage, first screen {first}/{on_screen} = {100 * first / on_screen:.0f} %; "
            f"reachable by scrolling {reached}/{visible} = {100 * reached / visible:.0f} %"
        )

        timings = []
        for _ in range(TIMING_ROUNDS):
            for template in ACTIONS:
                text = env.observe().text
                action = template
                if "{search}" in action:
                    action = action.format(search=_shop_element(text, "searchbox"))
                if "{first}" in action:
                    action = action.format(first=_shop_element(text, "link", "Inkwell Home 200"))
                result = env.execute(action if not action.startswith("goto") else f"goto [{shop.url}/]")
                assert result.ok, (action, result.error)
                timings.append(result.duration_ms)
        posting = _add_to_cart_times(env, shop.url)
        env.close()
    print(
        f"browser action time with screenshot ({len(timings)} actions): median {statistics.median(timings):.0f} ms, "
        f"p95 {sorted(timings)[int(len(timings) * 0.95)]:.0f} ms"
    )
    for what, times in posting.items():
        print(f"  'Add to cart' (a form post) {what} ({len(times)} actions): median {statistics.median(times):.0f} ms")


def _add_to_cart_times(env: BrowserEnvironment, base: str) -> dict[str, list[float]]:
    """The time of a click that posts a form: held by the effect fence (the post refused, the page left
    as it was) and let through by a rule. Code without the fence has one figure: the post goes through."""
    product = f"{base}/product/inkwell-home-200"
    times: dict[str, list[float]] = {}
    for what in ("held", "allowed by a rule"):
        try:
            options = {"rules": _allow_posts()} if what != "held" else {}
        except ImportError:
            return times  # code from before the fence has no rules
        for _ in range(TIMING_ROUNDS):
            text = env.goto(product).page.text  # type: ignore[union-attr]
            action = f"click [{_shop_element(text, 'button', 'Add to cart')}]"
            try:
                result = env.execute(action, **options)  # type: ignore[arg-type]
            except TypeError:
                return times  # code from before the fence: `rules` is not an option yet
            held = bool(getattr(result, "held_requests", ()))
            label = what if held or what != "held" else "passed (no fence)"
            times.setdefault(label, []).append(result.duration_ms)
    return times


def _allow_posts() -> list[Any]:
    from planner.effects import RequestRule

    return [RequestRule.parse("allow POST */cart/add")]


_TRAP_JS = """() => {
  if (window.__benchTrap) return;
  window.__benchTrap = [];
  const note = event => {
    const path = event.composedPath();
    const marked = n => n instanceof Element && n.hasAttribute('data-bench-target');
    // A click on the label of a control is the control's: the browser clicks the control for it.
    const hit = path.some(marked) || (event.target instanceof HTMLLabelElement && marked(event.target.control));
    const t = event.target instanceof Element ? event.target : null;
    const what = t ? `<${t.tagName.toLowerCase()}${t.className && typeof t.className === 'string' ? '.' + t.className.split(/\\s+/)[0] : ''}>` : '?';
    window.__benchTrap.push({ type: event.type, hit, target: what, trusted: event.isTrusted });
  };
  for (const type of ['click', 'dblclick', 'auxclick', 'contextmenu', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'submit']) {
    window.addEventListener(type, event => { note(event); event.preventDefault(); event.stopImmediatePropagation(); }, true);
  }
  for (const type of ['input', 'change']) window.addEventListener(type, note, true);
}"""
"""Notes every pointer, input and change event a frame receives (trusted or not: a native select's change
never is), whether the element marked `data-bench-target` (the one the id names) or something inside it
received it, and stops pointer events
and submits before the application sees them: a foreign app's links, buttons and forms do nothing, so
hundreds of ids can be tried on one page without changing its data."""
_TAKE_TRAP_JS = "() => { const t = window.__benchTrap || []; window.__benchTrap = []; return t; }"
_TARGET_JS = """(e, on) => {
  const visit = scope => { for (const x of scope.querySelectorAll('[data-bench-target]')) x.removeAttribute('data-bench-target');
    for (const x of scope.querySelectorAll('*')) if (x.shadowRoot) visit(x.shadowRoot); };
  visit(e.ownerDocument);
  if (on) e.setAttribute('data-bench-target', '');
}"""
_VISIBLE_CONTROLS_JS = """() => {
  const selector = 'a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, [contenteditable=""], '
    + '[contenteditable=true], [role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=option], '
    + '[role=menuitem], [role=menuitemcheckbox], [role=menuitemradio], [role=combobox], [role=textbox], [role=searchbox], '
    + '[role=switch], [role=slider], [role=spinbutton], [role=listbox], [role=treeitem]';
  const all = [];
  const visit = scope => { for (const e of scope.querySelectorAll('*')) { all.push(e); if (e.shadowRoot) visit(e.shadowRoot); } };
  visit(document);
  const controls = all.filter(e => e.matches(selector) && !e.closest('[aria-hidden=true]') && !e.disabled);
  const inside = (t, e) => { for (let x = t; x; x = x.assignedSlot || x.parentElement || x.getRootNode().host) if (x === e) return true; return false; };
  const deepHit = (x, y) => { let t = document.elementFromPoint(x, y);
    while (t && t.shadowRoot) { const i = t.shadowRoot.elementFromPoint(x, y); if (!i || i === t) break; t = i; } return t; };
  const shown = e => {  // some point of it on the screen is its own: not covered, not scrolled out of its pane
    const s = getComputedStyle(e);
    if (s.visibility === 'hidden' || s.display === 'none') return false;
    for (const r of e.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      const left = Math.max(r.left, 0), right = Math.min(r.right, innerWidth);
      const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
      if (left >= right || top >= bottom) continue;
      for (const [fx, fy] of [[0.5, 0.5], [0.2, 0.5], [0.8, 0.5], [0.5, 0.2], [0.5, 0.8]]) {
        const t = deepHit(left + (right - left) * fx, top + (bottom - top) * fy);
        if (t && (inside(t, e) || inside(e, t) && t.matches(selector) === false)) return true;
      }
    }
    return false;
  };
  const sized = e => {  // visible to a pointer once scrolled to: not parked off the page, not clipped away
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    const parked = r.right <= -100 - scrollX || r.bottom <= -100 - scrollY;
    const clippedAway = /^rect\\(0px,? 0px,? 0px,? 0px\\)$/.test(s.clip) || s.clipPath === 'inset(50%)';
    return (r.width > 2 || r.height > 2) && r.width > 0 && r.height > 0 && s.visibility !== 'hidden'
      && s.pointerEvents !== 'none' && !parked && !clippedAway
      && e.checkVisibility({ visibilityProperty: true });  // not in a closed <details> (content-visibility)
  };
  const outer = e => { for (let x = e.parentElement; x; x = x.parentElement) if (controls.includes(x)) return false; return true; };
  return controls.filter(outer).map(e => ({ onScreen: shown(e), visible: sized(e), marked: e.hasAttribute('data-bench-id'),
    what: `<${e.tagName.toLowerCase()}> ${(e.getAttribute('aria-label') || e.innerText || e.value || '').trim().slice(0, 40)}` }));
}"""
"""The frame's controls (native, a control's role, or contenteditable; a control inside another counts
once, as the outer one), each: on the screen and visible there (some point of it is hit by the pointer
as itself), visible at all (a box over 2 px, not parked off the page nor clipped to nothing, taking
pointer events: a skip link waiting for the focus and a widget's 1-pixel focus proxy are not), and
whether an observation gave it an id (`_mark_ids`)."""
FOREIGN_SAMPLE = 24
"""Ids tried per foreign page, spread over its first observation: six pages of four apps give well over 200."""


@dataclass(slots=True)
class ForeignFigures(GalleryFigures):
    """What one page of a foreign app measured (`page`: the app and the path)."""

    unfound: int = 0
    """Ids of the first observation not shown again after the page was opened afresh (so not tried)."""


def _controls(env: BrowserEnvironment) -> list[dict[str, Any]]:
    _mark_ids(env)
    found: list[dict[str, Any]] = []
    for frame in env._require_page().frames:
        try:
            found.extend(frame.evaluate(_VISIBLE_CONTROLS_JS))
        except Error:
            continue  # a frame that went away has no controls
    return found


def _trap(env: BrowserEnvironment) -> list[dict[str, Any]]:
    """Install the event trap in every frame (again after a navigation) and take what it noted so far."""
    taken: list[dict[str, Any]] = []
    for frame in env._require_page().frames:
        try:
            frame.evaluate(_TRAP_JS)
            taken.extend(frame.evaluate(_TAKE_TRAP_JS))
        except Error:
            continue
    return taken


def _foreign_action(shown: Shown, element: Any) -> str | None:
    """The action that tries an id on a foreign page: type into a text field, choose in a native list, click
    the rest; None for a disabled element, an editor (checked by its read-back, `test_browser_editors`) or a
    read-only field."""
    if getattr(element, "disabled", False):  # older code under comparison has no `disabled`
        return None  # the page takes no action on it now: the action fails at once, saying so
    if shown.role in ("textbox", "searchbox", "spinbutton") or (
        shown.role == "combobox" and "options=" not in shown.rest
    ):
        if element.editor or element.readonly or "readonly" in shown.rest:
            return None
        return f"type [{shown.id}] [bench] [0]"
    if shown.role == "combobox":
        options = re.search(r"options=(\[[^\]]*\])", shown.rest)
        names = json.loads(options[1]) if options else []
        return f"select [{shown.id}] [{names[-1]}]" if names else None
    if shown.role == "slider":
        return None
    return f"click [{shown.id}]"


def measure_foreign_page(
    env: BrowserEnvironment,
    app: str,
    url: str,
    task: TaskPage,
    sample: int,
    storage_state: Path | None = None,
    reach: bool = True,
) -> ForeignFigures:
    """Coverage of the first screen and (`reach`) by scrolling to the end, the observation's size against
    the page's HTML, and the round trip of `sample` ids spread over the first observation: the event each
    action causes first (a click's, a typing's `input`, a select's `change`) must reach the element the id
    names, or something inside it. Each id is acted on as the observation of that moment shows it (an
    app may have drawn it anew since). A page opened is measured once the app has drawn it (`task.ready`)."""
    path = task.path
    figures = ForeignFigures(page=f"{app} {path}")
    first = _open(env, url + path, task.ready)
    text = first.text
    figures.html_chars, figures.observation_chars = markup_chars(env, url + path, storage_state), len(text)
    controls = _controls(env)
    figures.on_screen = sum(1 for c in controls if c["onScreen"])
    figures.first_screen = sum(1 for c in controls if c["onScreen"] and c["marked"])
    figures.misses.extend(f"no id on screen: {c['what']}" for c in controls if c["onScreen"] and not c["marked"])
    shown_first = shown_elements(text)
    _scroll_to_end(env, text, MAX_SCROLLS if reach else 0)
    controls = _controls(env)
    figures.visible = sum(1 for c in controls if c["visible"])
    figures.reached = sum(1 for c in controls if c["visible"] and c["marked"])
    if reach:
        figures.misses.extend(f"never given an id: {c['what']}" for c in controls if c["visible"] and not c["marked"])
    step = max(1, len(shown_first) // sample)
    tried = shown_first[::step][:sample]
    page = _open(env, url + path, task.ready) if reach else first  # scrolled to the end: open it afresh
    for shown in tried:
        if shown.id not in env._observer.elements:  # read from the top again, else open the page afresh
            env._require_page().evaluate("window.scrollTo(0, 0)")
            env._observer.read_from_top()
            page = env.observe()
        if shown.id not in env._observer.elements:
            page = _open(env, url + path, task.ready)
            # An app that draws itself anew may number its elements differently: the same role and name is it.
            same = [
                s for s in shown_elements(page.text if page else "") if (s.role, s.name) == (shown.role, shown.name)
            ]
            shown = same[0] if same else shown
        element = env._observer.elements.get(shown.id)
        last = env._observer.last_page
        shown = next((now for now in shown_elements(last.text if last else "") if now.id == shown.id), shown)
        if element is None:
            figures.unfound += 1
            figures.misses.append(f"[{shown.id}] {shown.name!r}: not shown again after a fresh load (not tried)")
            continue
        action = _foreign_action(shown, element)
        if action is None:
            continue
        try:
            env._require_page().locator(f"aria-ref={element.ref}").evaluate(_TARGET_JS, True, timeout=5000)
        except Error:
            figures.misses.append(f"[{shown.id}] {shown.name!r}: its element could not be marked")
            continue
        _trap(env)
        result = env.execute(action)
        figures.actions += 1
        figures.timings.append(result.duration_ms)
        events = _trap(env)
        # Typing's own event is `input` (the field it left may say `change` first); a select's, `change`.
        kinds = ("input",) if action.startswith("type") else ("change",) if action.startswith("select") else ("click",)
        meant = [
            event for event in events if event["type"] in kinds and (event["trusted"] or action.startswith("select"))
        ]
        if result.ok and meant and meant[0]["hit"]:  # the action's own event; the page may react with more
            figures.round_trips += 1
        else:
            received = [f"{event['type']} {event['target']}{'' if event['hit'] else ' (not it)'}" for event in events]
            figures.misses.append(f"{action} {shown.role} {shown.name!r}: {result.error or received or 'no event'}")
        if result.page is not None and result.page.url != (page.url if page is not None else ""):
            page = _open(env, url + path, task.ready)  # something navigated after all: start from the page again
    return figures


_QUIET_JS = """() => new Promise(resolve => {
  let timer = setTimeout(done, 1000);
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, 1000); });
  const limit = setTimeout(done, 15000);
  function done() { observer.disconnect(); clearTimeout(timer); clearTimeout(limit); resolve(); }
  observer.observe(document, { subtree: true, childList: true, attributes: true });
})"""
"""Resolves once the document has not changed for a second (15 s at most): an app drawn in stages has drawn
them all (JupyterLab's cell toolbar and debugger button come with the kernel, seconds after the notebook)."""


def _open(env: BrowserEnvironment, url: str, ready: str) -> Page:
    """Open `url` and read it once the app has drawn what `ready` waits for and stopped drawing (read again
    if it had to wait)."""
    opened = env.goto(url)
    assert opened.page is not None, f"{url} did not open: {opened.error}"
    if not ready:
        return opened.page
    page = env._require_page()
    page.wait_for_function(ready, timeout=60_000)
    page.evaluate(_QUIET_JS)
    return env.observe()


def foreign(apps: Sequence[str] = ()) -> None:
    """The foreign apps (bench/foreign.py; `apps`, or all four), page by page, beside the gallery and the shop."""
    print(f"foreign applications (bench/foreign.py; ids tried per page: up to {FOREIGN_SAMPLE})")
    print(f"{'page':58} {'1st screen':>11} {'reached':>9} {'round-trip':>11} {'obs':>6} {'HTML':>8} {'HTML/obs':>9}")
    rows: list[ForeignFigures] = []
    for name in apps or APPS:
        with (
            start_app(name) as app,
            BrowserEnvironment(app.url + app.pages[0].path, storage_path=_copy_state(app.storage_state)) as env,
        ):  # no fence: the trap keeps the apps' data as it is, and JupyterLab posts to open a notebook
            for task in app.pages:
                figures = measure_foreign_page(env, name, app.url, task, FOREIGN_SAMPLE, app.storage_state)
                rows.append(figures)
                print(
                    f"{figures.page[:58]:58} {figures.first_screen:>5}/{figures.on_screen:<5} "
                    f"{figures.reached:>4}/{figures.visible:<4} {figures.round_trips:>5}/{figures.actions:<5} "
                    f"{figures.observation_chars:>6} {figures.html_chars:>8} "
                    f"{figures.html_chars / max(figures.observation_chars, 1):>8.1f}x"
                )
                _print_misses(figures)
    _print_totals(rows)
    unfound = sum(r.unfound for r in rows)
    print(f"({unfound} ids of a first observation not shown again after a fresh load, not tried)")
    timings = [t for r in rows for t in r.timings]
    if timings:
        print(
            f"foreign action time ({len(timings)} actions, no screenshots): median {statistics.median(timings):.0f} ms"
        )


def _copy_state(state: Path | None) -> Path | None:
    """A copy of an app's login state for the environment to keep its cookies in (it writes after every action)."""
    if state is None:
        return None
    copy = Path(tempfile.mkdtemp(prefix="bench-state-")) / "browser-state.json"
    copy.write_bytes(state.read_bytes())
    return copy


def approvals() -> None:
    """Approvals per bundled task under the evaluation's baseline, split by what held the action."""
    from demo.evaluation import bundled_shop, run_condition
    from demo.operator_sim import load_policy
    from demo.tasks import load_tasks
    from sessions.store.sql import open_store

    print("approvals per demo task (baseline: each guarded action approved)")
    print(f"{'task':40} {'by name':>8} {'by effect':>10} {'outcome':>12}")
    by_name = by_effect = 0
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(str(Path(folder) / "bench.db"))
        for task in load_tasks():
            with bundled_shop() as base_url:
                run = run_condition(
                    store, task, base_url, "baseline", model="demo", policy=load_policy(), artifacts=Path(folder)
                )
            asked = [e.data for e in store.load(run.session_id) if e.kind.value == "approval_requested"]
            effect = sum(1 for data in asked if data.get("requests"))
            by_name, by_effect = by_name + len(asked) - effect, by_effect + effect
            outcome = "success" if run.success else run.status
            print(f"{task.id:40} {len(asked) - effect:>8} {effect:>10} {outcome:>12}")
        store.close()
    print(f"{'all tasks':40} {by_name:>8} {by_effect:>10}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.browser", description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["gallery", "foreign", "shop", "approvals", "all"], default="all")
    parser.add_argument("--app", action="append", default=[], help="with --part foreign: this app only (repeatable)")
    arguments = parser.parse_args()
    part = arguments.part
    if part in ("gallery", "all"):
        gallery()
    if part in ("foreign", "all"):
        foreign(arguments.app)
    if part in ("shop", "all"):
        shop()
    if part in ("approvals", "all"):
        approvals()


if __name__ == "__main__":
    main()
