"""Observation size and browser action time on the bundled shop: `python -m bench.browser`.

Prints, per demo page, the compact observation the model reads next to the raw HTML, the overall
ratio (goal: at least 8x smaller), the same ratio with the pages' inline stylesheet left out (so
the figure does not rest on CSS alone), and the median time of a browser action with screenshots
on, as sessions run them.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from demo.shop import start_shop
from planner.browser.environment import BrowserEnvironment

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


def _element(text: str, role: str, name: str | None = None) -> int:
    from planner.models.offline import read_elements

    for element in read_elements(text):
        if element.role == role and (name is None or element.name == name):
            return element.id
    raise LookupError(f"no {role} {name or ''} on the page")


def _markup_chars(url: str) -> int:
    """The page's HTML without its inline <style> blocks."""
    try:
        with urllib.request.urlopen(url) as response:
            html = response.read().decode("utf-8")
    except urllib.error.HTTPError as error:  # the broken widget's error page is a page too
        html = error.read().decode("utf-8")
    return len(re.sub(r"<style\b.*?</style>", "", html, flags=re.DOTALL))


def main() -> None:
    with start_shop() as shop, tempfile.TemporaryDirectory() as shots:
        env = BrowserEnvironment(
            shop.url + "/",
            screenshot_dir=Path(shots),
            storage_path=Path(shots) / "browser-state.json",
            allowed_domains=[],  # fenced to the shop's host, as every browser session is
        )
        total_obs = total_html = total_markup = 0
        print(f"{'page':40} {'observation':>12} {'raw HTML':>10} {'ratio':>7} {'no CSS':>8} {'ratio':>7}")
        for path in PAGES:
            page = env.goto(shop.url + path).page
            assert page is not None
            markup = _markup_chars(shop.url + path)
            total_obs += len(page.text)
            total_html += page.html_chars
            total_markup += markup
            print(
                f"{path:40} {len(page.text):>12,} {page.html_chars:>10,} {page.html_chars / len(page.text):>6.1f}x"
                f" {markup:>8,} {markup / len(page.text):>6.1f}x"
            )
        ratio = total_html / total_obs
        print(
            f"{'all pages':40} {total_obs:>12,} {total_html:>10,} {ratio:>6.1f}x {total_markup:>8,}"
            f" {total_markup / total_obs:>6.1f}x  (goal >= {GOAL_RATIO:g}x)"
        )

        timings = []
        for _ in range(5):
            for template in ACTIONS:
                text = env.observe().text
                action = template
                if "{search}" in action:
                    action = action.format(search=_element(text, "searchbox"))
                if "{first}" in action:
                    action = action.format(first=_element(text, "link", "Inkwell Home 200"))
                result = env.execute(action if not action.startswith("goto") else f"goto [{shop.url}/]")
                assert result.ok, (action, result.error)
                timings.append(result.duration_ms)
        env.close()
    print(
        f"browser action time with screenshot ({len(timings)} actions): median {statistics.median(timings):.0f} ms, "
        f"p95 {sorted(timings)[int(len(timings) * 0.95)]:.0f} ms"
    )


if __name__ == "__main__":
    main()
