"""The Playwright environment against real headless Chromium and static pages in tests/pages.

One browser serves the whole module (starting one costs about a second); every test first opens
the page it needs, so the tests do not depend on each other's order.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from PIL import Image

from planner.browser.chromium import BrowserUnavailable, find_chromium
from planner.browser.driver import BrowserThreadError
from planner.browser.dry import DryEnvironment
from planner.browser.environment import BrowserEnvironment
from planner.browser.observation import INTERACTIVE_ROLES, render_page
from planner.browser.screenshots import _last_screenshot_number
from planner.protocols import ActionResult, ElementInfo, Environment, Page

PAGES = Path(__file__).parent / "pages"

_needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed")


def browser_test(test: Callable[..., None]) -> Callable[..., None]:
    """Runs in real Chromium: marked `browser`, skipped where no Chromium is installed."""
    return pytest.mark.browser(_needs_chromium(test))


class _Handler(SimpleHTTPRequestHandler):
    """Static files, plus /broken (HTTP 500) and /slow?ms=N (a page that takes N ms)."""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/broken":
            self._send(500, "broken.html")
        elif url.path == "/slow":
            time.sleep(int(parse_qs(url.query).get("ms", ["1000"])[0]) / 1000)
            self._send(200, "product.html")
        else:
            super().do_GET()

    def _send(self, status: int, name: str) -> None:
        body = (PAGES / name).read_bytes()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser gave up waiting, as the timeout tests intend


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(PAGES)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def env(site: str, shots: Path) -> Iterator[BrowserEnvironment]:
    with BrowserEnvironment(f"{site}/index.html", shots) as environment:
        environment.start()
        yield environment


def open_page(env: BrowserEnvironment, site: str, path: str) -> Page:
    result = env.goto(f"{site}{path}")
    assert result.ok, result.error
    assert result.page is not None
    return result.page


def element_id(page: Page | None, label: str) -> int:
    """The id the observation gives the element shown as `label`, e.g. 'link "Products"'."""
    assert page is not None
    match = re.search(r"\[(\d+)\] " + re.escape(label), page.text)
    assert match, f"{label!r} not in observation:\n{page.text}"
    return int(match.group(1))


def scroll_y(env: BrowserEnvironment) -> float:
    return env._require_page().evaluate("window.scrollY")  # no public API needs it; tests do


def run(env: BrowserEnvironment, action: str) -> ActionResult:
    result = env.execute(action)
    assert result.page is not None or result.error == "page crashed"
    return result


# -- observation format (pure, no browser) -----------------------------------------------------

SNAPSHOT = """\
- generic [active] [ref=e1] [box=0,0,1280,900]:
  - navigation "Main" [ref=e2] [box=0,0,1280,40]:
    - link "Home" [ref=e3] [cursor=pointer] [box=0,0,40,20]:
      - /url: /
    - link [ref=e4] [cursor=pointer] [box=50,0,20,20]:
      - /url: /cart
  - 'heading "Deals: today only" [level=1] [ref=e5] [box=0,50,800,30]'
  - generic [ref=e6]:
    - generic [ref=e7]:
      - text: "Price: $5"
  - paragraph [ref=e8]:
    - text: Read the
    - link "terms" [ref=e9] [cursor=pointer]:
      - /url: /terms
    - text: first.
  - 'button "Save: \\"all\\"" [disabled] [ref=e10]'
  - textbox "Secret" [ref=e11]: hunter2
  - textbox "Search" [ref=e12]:
    - /placeholder: "Find: things"
  - iframe [ref=e13]:
    - generic [ref=f1e1]:
      - button "Inside" [ref=f1e3]
"""


def test_render_gives_ids_to_interactive_elements_only() -> None:
    observation = render_page("X", SNAPSHOT, secrets=["hunter2"])
    lines = observation.text.splitlines()
    assert lines[0] == "Title: X", "the URL is Page.url, given by every prompt, not repeated"
    assert '[3] link "Home"' in lines
    assert '[4] link url="/cart"' in lines  # a nameless link is named by its target
    assert "# Deals: today only" in lines
    assert "Price: $5" in lines
    assert 'Read the [9] link "terms" first.' in lines
    assert '[10] button "Save: \\"all\\"" disabled' in lines
    assert '[11] textbox "Secret" value="********"' in lines
    assert '[12] textbox "Search" placeholder="Find: things"' in lines
    assert '[10003] button "Inside"' in lines  # a frame's refs restart at e1: numbered in a block of their own
    assert sorted(observation.elements) == [3, 4, 9, 10, 11, 12, 10003]
    assert observation.elements[10003].ref == "f1e3"
    assert "hunter2" not in observation.text


def test_a_frames_ids_keep_their_block_whatever_the_page_around_it_holds() -> None:
    def frame_ids(main_elements: int) -> dict[str, int]:
        main = "\n".join(f'- button "Main {i}" [ref=f3e{i + 3}]' for i in range(main_elements))
        frames = (
            '- iframe [ref=f3e1]:\n  - button "Apply" [ref=f4e3]\n- iframe [ref=f3e2]:\n  - link "Terms" [ref=f6e5]'
        )
        observation = render_page("X", f"- generic [ref=f3e0]:\n{main}\n{frames}", budget=10**7)
        return {e.name: i for i, e in observation.elements.items() if not e.name.startswith("Main")}

    assert frame_ids(3) == frame_ids(40) == {"Apply": 10_003, "Terms": 30_005}  # blocks 1 and 3 after the page's
    assert frame_ids(12_000) == {"Apply": 100_003, "Terms": 300_005}  # a page past 10,000 ids: a wider stride


def test_render_cuts_to_budget_and_says_how_much() -> None:
    snapshot = "\n".join(f'- link "Item number {i}" [ref=e{i}]' for i in range(1, 400))
    observation = render_page("X", snapshot, budget=1000)
    assert len(observation.text) <= 1000
    last = observation.text.splitlines()[-1]
    assert re.fullmatch(r"\((\d+) more characters cut; scroll down to see more\)", last)
    assert observation.cut_chars > 0
    shown = {int(i) for i in re.findall(r"^\[(\d+)\]", observation.text, re.MULTILINE)}
    assert set(observation.elements) == shown  # ids that were cut cannot be used


def test_a_label_beside_its_field_on_one_line_is_not_said_twice() -> None:
    snapshot = """- generic [ref=e1]:
  - generic [ref=e2]: Email
  - generic [ref=e3]:
    - textbox [ref=e4] [box=0,0,100,20]
    - text: We never share it.
- paragraph [ref=e5]:
  - text: "Sort by:"
  - link "Price" [ref=e6]
"""
    lines = render_page("X", snapshot).text.splitlines()[1:]
    assert lines == ['[4] textbox "Email" We never share it.', 'Sort by: [6] link "Price"']


def test_text_the_page_hid_from_assistive_technology_is_left_out_but_its_controls_stay() -> None:
    snapshot = """- generic [ref=e1]:
  - generic [aria-hidden] [ref=e2]: 1 2
  - textbox "Query" [ref=e3] [box=0,0,100,20]
- generic [aria-hidden] [ref=e4]:
  - text: Decorative banner
  - button "Close banner" [ref=e5]
"""
    lines = render_page("X", snapshot).text.splitlines()[1:]
    assert lines == ['[3] textbox "Query"', '[5] button "Close banner"']


def test_render_drops_what_is_above_the_viewport_first() -> None:
    rows = [f'- paragraph [ref=e{i}] [box=0,{(i - 50) * 20},800,20]: "Paragraph {i} text"' for i in range(1, 200)]
    observation = render_page("X", "\n".join(rows), budget=600)
    lines = observation.text.splitlines()
    assert re.fullmatch(r"\(\d+ characters above the viewport not shown; scroll up to see them\)", lines[1])
    assert lines[2] == "Paragraph 50 text"  # the first line whose box is not wholly above the viewport
    assert lines[-1].endswith("more characters cut; scroll down to see more)")
    assert len(observation.text) <= 600


def test_render_flattens_cells_with_block_content_and_decodes_escapes() -> None:
    snapshot = r"""
- row [ref=e1]:
  - cell [ref=e2]:
    - list [ref=e3]:
      - listitem [ref=e4]: Red
      - listitem [ref=e5]:
        - link "Blue | dark" [ref=e6]
  - cell "say \"hi\"" [ref=e7]
- text: "caf\xe9 \"quoted\"\nnext"
"""
    observation = render_page("X", snapshot)
    assert observation.text.splitlines()[1:] == [
        r'| Red [6] link "Blue \| dark" | say "hi" |',
        'café "quoted"',
        "next",
    ]


# -- finding Chromium --------------------------------------------------------------------------


def test_chromium_path_from_the_environment_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "chrome"
    fake.write_text("")
    monkeypatch.setenv("CHROMIUM_PATH", str(fake))
    assert find_chromium() == str(fake)
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "missing"))
    assert find_chromium() is None


def test_without_chromium_actions_fail_and_start_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "missing"))
    environment = BrowserEnvironment("http://127.0.0.1:9/")
    result = environment.execute("scroll [down]")
    assert not result.ok and result.error is not None
    assert result.error.startswith(f"browser unavailable: CHROMIUM_PATH={tmp_path / 'missing'} is not a file")
    assert "apt-get install chromium" in result.error and "playwright install chromium" in result.error
    assert environment.check("click [1]") is not None
    with pytest.raises(BrowserUnavailable):
        environment.start()
    environment.close()


def test_inside_an_asyncio_loop_actions_fail_with_a_reason() -> None:
    results: list[ActionResult] = []

    async def agent() -> None:  # e.g. an async web handler calling the environment directly
        environment = BrowserEnvironment("http://127.0.0.1:9/")
        results.append(environment.execute("scroll [down]"))
        environment.close()

    worker = threading.Thread(target=asyncio.run, args=(agent(),))  # a thread with no driver yet
    worker.start()
    worker.join()
    assert not results[0].ok and results[0].error is not None
    assert results[0].error.startswith("browser unavailable: Playwright cannot start on this thread")


# -- the browser -------------------------------------------------------------------------------


@browser_test
def test_it_is_an_environment(env: BrowserEnvironment) -> None:
    assert isinstance(env, Environment)


@browser_test
def test_observation_has_ids_only_on_interactive_elements_and_is_small(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/catalog.html")
    for line in page.text.splitlines()[1:]:
        for role in re.findall(r"\[\d+\] (\w+)", line):
            assert role in INTERACTIVE_ROLES, line
        if line.startswith(("heading", "img", "list", "navigation", "$")):
            assert not re.search(r"\[\d+\]", line.split(":", 1)[0]), line
    assert '[18] combobox "Sort" value="Featured"' in page.text
    assert '- img "Brass desk lamp photo"' in page.text
    assert page.html_chars > 10 * len(page.text)


@browser_test
def test_tables_read_as_rows(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/products.html")
    assert "| Name | Price | Stock |" in page.text
    assert re.search(r'^\| \[\d+\] link "Oak desk" \| \$240\.00 \| 0 \|$', page.text, re.MULTILINE)


@browser_test
def test_click_navigates(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/index.html")
    products = element_id(page, 'link "Products"')
    result = run(env, f"click [{products}]")
    assert result.ok, result.error
    assert result.page is not None and result.page.url == f"{site}/products.html"
    assert result.page.title == "Products"


@browser_test
def test_type_and_enter_submits_the_form(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    query = element_id(page, 'searchbox "Query"')
    result = run(env, f"type [{query}] [brass lamp] [1]")
    assert result.ok, result.error
    assert result.page is not None and "results.html?q=brass+lamp" in result.page.url
    assert "You searched for: brass lamp" in result.page.text


@browser_test
def test_type_without_enter_only_fills(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    user = element_id(page, 'textbox "User name"')
    result = run(env, f"type [{user}] [bob] [0]")
    assert result.ok, result.error
    assert result.page is not None and result.page.url == f"{site}/search.html"
    assert 'textbox "User name" value="bob"' in result.page.text


@browser_test
def test_typed_passwords_never_reach_the_observation(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    password = element_id(page, 'textbox "Password"')
    result = run(env, f"type [{password}] [hunter2] [0]")
    assert result.ok, result.error
    assert result.page is not None
    assert "hunter2" not in result.page.text
    assert 'textbox "Password" value="********"' in result.page.text


@browser_test
def test_select_changes_the_value(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    sort = element_id(page, 'combobox "Sort by"')
    result = run(env, f"select [{sort}] [price: HIGH to low]")  # labels match case-insensitively
    assert result.ok, result.error
    assert result.page is not None and f'[{sort}] combobox "Sort by" value="Price: high to low"' in result.page.text
    missing = run(env, f"select [{sort}] [Cheapest first]")
    assert not missing.ok
    assert missing.error == (
        f'element {sort} has no option "Cheapest first"; '
        'its options are "Relevance", "Price: low to high", "Price: high to low"'
    )


@browser_test
def test_scroll_moves_the_page_and_the_observation_window(env: BrowserEnvironment, site: str) -> None:
    top = open_page(env, site, "/long.html")
    assert scroll_y(env) == 0
    down = run(env, "scroll [down]")
    assert down.ok, down.error
    assert scroll_y(env) == 800
    assert down.page is not None and down.page.text != top.text
    assert "characters above the viewport not shown" in down.page.text
    up = run(env, "scroll [up]")
    assert up.ok and scroll_y(env) == 0
    assert up.page is not None and up.page.text == top.text


@browser_test
def test_go_back_returns_to_the_previous_page(env: BrowserEnvironment, site: str) -> None:
    open_page(env, site, "/index.html")
    open_page(env, site, "/products.html")
    result = run(env, "go_back")
    assert result.ok, result.error
    assert result.page is not None and result.page.url == f"{site}/index.html"


@browser_test
def test_goto_action_accepts_absolute_and_relative_urls(env: BrowserEnvironment, site: str) -> None:
    absolute = run(env, f"goto [{site}/search.html]")
    assert absolute.ok and absolute.page is not None and absolute.page.url == f"{site}/search.html"
    relative = run(env, "goto [products.html]")
    assert relative.ok and relative.page is not None and relative.page.url == f"{site}/products.html"


@browser_test
def test_note_leaves_the_page_alone(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/long.html")
    run(env, "scroll [down]")
    before = env.observe()
    result = run(env, "note [the lamp costs $12]")
    assert result.ok and result.error is None and result.screenshot is None
    assert result.page == before
    assert scroll_y(env) == 800 and page.url == before.url


@browser_test
def test_a_missing_element_is_a_clean_failure(env: BrowserEnvironment, site: str) -> None:
    open_page(env, site, "/index.html")
    started = time.perf_counter()
    result = run(env, "click [999]")
    assert not result.ok
    assert result.error == "element 999 is not on the page"
    assert result.page is not None and result.page.url == f"{site}/index.html"
    assert time.perf_counter() - started < 2  # refused at once, not after the action timeout


@browser_test
def test_http_errors_are_failures(env: BrowserEnvironment, site: str) -> None:
    result = env.goto(f"{site}/broken")
    assert not result.ok
    assert result.error == f"HTTP 500 at {site}/broken: Internal Server Error"
    page = open_page(env, site, "/index.html")
    broken = element_id(page, 'link "Broken page"')
    clicked = run(env, f"click [{broken}]")
    assert not clicked.ok and clicked.error is not None and clicked.error.startswith("HTTP 500 at")


@browser_test
def test_check_catches_bad_syntax_and_unknown_ids(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    query = element_id(page, 'searchbox "Query"')
    go = element_id(page, 'button "Go"')
    assert (
        env.check("fly [1]")
        == "unknown action 'fly'; use one of: click, hover, type, select, scroll, go_back, goto, note"
    )
    assert env.check("click [go]") == "click: element id must be a number, got 'go'"
    assert env.check("click [999]") == "element 999 is not on the page"
    assert env.check(f"type [{go}] [lamp]") == f"element {go} is a button, not a text field"
    assert env.check(f"select [{query}] [x]") == f"element {query} is a searchbox, not a drop-down list"
    assert env.check(f"type [{query}] [lamp] [1]") is None
    assert env.check("scroll [down]") is None
    assert env.check("note [anything]") is None


@browser_test
def test_target_describes_the_element(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/search.html")
    password = element_id(page, 'textbox "Password"')
    assert env.target(f"type [{password}] [x]") == ElementInfo(
        role="textbox", name="Password", input_type="password", form_submits=("Sign in",), url=f"{site}/results.html"
    )
    sign_in = element_id(page, 'button "Sign in"')
    assert env.target(f"click [{sign_in}]") == ElementInfo(
        role="button", name="Sign in", input_type="submit", texts=("Sign in",), url=f"{site}/results.html"
    )
    assert env.target("click [999]") is None
    assert env.target("goto [HTTPS://Example.org]") == ElementInfo(url="https://example.org/")
    assert env.target("goto [results.html?q=1]") == ElementInfo(url=f"{site}/results.html?q=1")
    assert env.target("goto [http://a b/]") == ElementInfo(url="")
    assert env.target("nonsense") is None


@browser_test
def test_screenshots_are_numbered_jpeg_files(env: BrowserEnvironment, site: str, shots: Path) -> None:
    first = env.goto(f"{site}/index.html")
    second = run(env, "click [999]")  # failures get a screenshot too
    assert first.screenshot is not None and second.screenshot is not None
    first_path, second_path = Path(first.screenshot), Path(second.screenshot)
    assert first_path.parent == shots and re.fullmatch(r"\d{4}\.jpg", first_path.name)
    assert int(second_path.stem) == int(first_path.stem) + 1
    for path in (first_path, second_path):
        assert path.read_bytes()[:3] == b"\xff\xd8\xff", f"{path.name} is a JPEG"


@browser_test
def test_a_resumed_session_numbers_on_after_its_older_png_screenshots(site: str, tmp_path: Path) -> None:
    (tmp_path / "0007.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # left by a run before screenshots were JPEG
    with BrowserEnvironment(f"{site}/index.html", tmp_path) as environment:
        result = environment.goto(f"{site}/index.html")
    assert result.screenshot is not None and Path(result.screenshot).name == "0008.jpg"


RED, WHITE = (255, 0, 0), (255, 255, 255)


def _near(pixel: object, colour: tuple[int, int, int], slack: int = 40) -> bool:
    """A screenshot's pixel is `colour` as far as a JPEG keeps colours (a few steps off, more at edges)."""
    assert isinstance(pixel, tuple), pixel
    return all(abs(a - b) <= slack for a, b in zip(pixel, colour, strict=True))


@browser_test
def test_a_preview_shows_the_element_scrolled_into_view_and_where_it_is(
    env: BrowserEnvironment, site: str, shots: Path
) -> None:
    """The button sits 2000 px down the page at x=300 (200×60, red on white): the preview scrolls it
    into view, the box is where the screenshot drew it, and the page is scrolled back afterwards."""
    page = open_page(env, site, "/preview.html")
    buy = element_id(page, 'button "Buy now"')
    preview = env.preview(f"click [{buy}]")
    assert preview is not None and preview.box is not None
    path = Path(preview.screenshot)
    assert path.parent == shots and re.fullmatch(r"\d{4}-approval\.jpg", path.name)
    box = preview.box
    assert (box.x, box.width, box.height) == (300, 200, 60)
    assert 0 < box.y and box.y + box.height <= 800, f"the button is drawn at y={box.y}, on screen"
    with Image.open(path) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1280, 800)
        assert _near(rgb.getpixel((int(box.x + box.width / 2), int(box.y + box.height / 2))), RED)
        assert _near(rgb.getpixel((int(box.x) + 3, int(box.y) + 3)), RED)
        assert _near(rgb.getpixel((int(box.x) - 4, int(box.y) + 3)), WHITE)
        assert _near(rgb.getpixel((int(box.x) + 3, int(box.y + box.height) + 4)), WHITE)
    assert scroll_y(env) == 0, "the page is scrolled back to where its observation was read"
    assert _last_screenshot_number(shots) == int(path.name[:4]), "a resumed run numbers on after the preview"


@browser_test
def test_a_goto_is_previewed_as_the_page_it_leaves_without_a_box(env: BrowserEnvironment, site: str) -> None:
    open_page(env, site, "/preview.html")
    preview = env.preview("goto [/index.html]")
    assert preview is not None and preview.box is None and Path(preview.screenshot).is_file()
    assert env.preview("scroll [down]") is None and env.preview("nonsense") is None
    assert DryEnvironment().preview("click [1]") is None


@browser_test
def test_goto_rolls_back_to_a_saved_url(env: BrowserEnvironment, site: str) -> None:
    saved = open_page(env, site, "/search.html")
    page = open_page(env, site, "/index.html")
    products = element_id(page, 'link "Products"')
    run(env, f"click [{products}]")
    rollback = env.goto(saved.url)
    assert rollback.ok and rollback.page is not None
    assert rollback.page.url == saved.url
    assert rollback.page.text.splitlines()[1:] == saved.text.splitlines()[1:]
    query = element_id(rollback.page, 'searchbox "Query"')
    assert env.check(f"type [{query}] [lamp]") is None


@browser_test
def test_a_new_tab_is_followed_in_the_same_page(env: BrowserEnvironment, site: str) -> None:
    page = open_page(env, site, "/index.html")
    new_tab = element_id(page, 'link "Product in a new tab"')
    result = run(env, f"click [{new_tab}]")
    assert result.ok, result.error
    assert result.page is not None and result.page.url == f"{site}/product.html?id=7"
    assert len(env._require_page().context.pages) == 1


@browser_test
def test_a_crashed_page_fails_once_then_recovers(env: BrowserEnvironment, site: str) -> None:
    good = open_page(env, site, "/products.html")
    crashed = run(env, "goto [chrome://crash]")
    assert not crashed.ok and crashed.error == "page crashed"
    after = env.observe()
    assert after.url == good.url
    assert element_id(after, 'link "Oak desk"')
    recovered = run(env, "goto [/index.html]")
    assert recovered.ok, recovered.error


@browser_test
def test_only_the_starting_thread_may_use_it(env: BrowserEnvironment) -> None:
    errors: list[BaseException] = []

    def use() -> None:
        try:
            env.observe()
        except BaseException as error:  # noqa: BLE001 - the point is to see what was raised
            errors.append(error)

    worker = threading.Thread(target=use)
    worker.start()
    worker.join()
    assert len(errors) == 1 and isinstance(errors[0], BrowserThreadError)


@browser_test
def test_environments_inside_browser_kept_share_one_chromium_each_with_its_own_cookies(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite's tasks, one after another on one thread: one Chromium is launched for all of them, each
    starts with no cookies, and on leaving the thread runs no driver (a new one starts there)."""
    from playwright.sync_api import sync_playwright

    from planner.browser import driver

    launched: list[object] = []
    launch = driver.launch
    monkeypatch.setattr(driver, "launch", lambda *args, **kw: launched.append(launch(*args, **kw)) or launched[-1])

    def suite() -> list[str]:
        cookies = []
        with driver.browser_kept():
            for _ in range(3):
                with BrowserEnvironment(f"{site}/index.html") as task:
                    task.start()
                    page = task._require_page()
                    cookies.append(page.evaluate("document.cookie"))
                    page.evaluate("document.cookie = 'cart=desk'")
        with sync_playwright():  # fails on a thread whose driver still runs
            pass
        return cookies

    with ThreadPoolExecutor(1) as pool:
        cookies = pool.submit(suite).result()
    assert len(launched) == 1, f"{len(launched)} Chromium launches for three tasks"
    assert cookies == ["", "", ""], "a task saw the cookies of the one before"


@pytest.fixture(scope="module")
def fenced(site: str) -> Iterator[BrowserEnvironment]:
    with BrowserEnvironment(f"{site}/index.html", allowed_domains=[], timeout_ms=1500) as environment:
        yield environment


@browser_test
def test_allowed_domains_fence_blocks_other_hosts(fenced: BrowserEnvironment, site: str) -> None:
    port = urlsplit(site).port
    away = fenced.goto(f"http://localhost:{port}/index.html")
    assert not away.ok
    assert away.error == (
        "blocked: localhost is outside the allowed domains (127.0.0.1); an operator must approve an action "
        "that leaves them"
    )
    product = fenced.goto(f"{site}/product.html")
    assert product.ok, product.error
    offer = element_id(product.page, 'link "A partner offer"')
    clicked = fenced.execute(f"click [{offer}]")
    assert not clicked.ok
    assert clicked.error is not None and clicked.error.startswith("blocked: elsewhere.invalid is outside")


@browser_test
def test_slow_navigation_times_out_and_stays_put(fenced: BrowserEnvironment, site: str) -> None:
    product = fenced.goto(f"{site}/product.html")
    assert product.ok and product.page is not None
    slow_link = element_id(product.page, 'link "A slow page"')
    for result in (fenced.goto(f"{site}/slow?ms=10000"), fenced.execute(f"click [{slow_link}]")):
        assert not result.ok
        assert result.error == "navigation timed out after 1.5 s"
        assert result.page is not None and result.page.url == f"{site}/product.html"
        assert result.duration_ms < 7000, "given up at the timeout, long before the page would have answered"
