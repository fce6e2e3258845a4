"""The environments the planner acts through: adapters that implement `planner.protocols.Environment`.

- `environment`: `BrowserEnvironment`, a real Chromium driven by Playwright's sync API, composed of one
  part per concern: `driver` (the thread's Playwright and Chromium; `browser_kept`), `fence` (what a request may reach),
  `page_events` (what the page does on its own), `navigation`, `observer` (reading the page and its
  ids), `aim` (where a click lands: a point of the element itself, or a sentence naming what covers
  it), `controls` (editors, drop-downs, sliders), `screenshots`, and `promises` with `waiting` (what an
  action promised that comes late); `failures` says how an action fails; `storage` keeps its cookies
  and its folder readable by its user only;
- `observation`: turns Playwright's ARIA snapshot into the page text a model reads (pure text work);
- `chromium`: finds and launches a Chromium without downloading one (`python -m planner.browser.chromium`);
- `dry`: `DryEnvironment`, no browser at all, for tests, rehearsals and benchmarks;
- `dialogs`: how both answer a page's `alert`, `confirm` and `prompt` (pure policy, the guard's name rule);
- `effect_fence`: which state-changing requests an action may send (bookkeeping both share, no browser);
- `marks`: the page scripts that mark what the accessibility tree leaves out (role-less clickables, editors);
- `editor_api`: what an editor holds and how to replace it, through the editor's own API where its page has one.

They sit above the core: the engine sees only the `Environment` protocol and never imports this package.
`dry` and `observation` are imported eagerly (the standard library and the core only); the Playwright-backed
names load on first use (module `__getattr__`), so that a dry session, and every test and benchmark that uses
one, neither pays for nor needs a Playwright install: `import planner.browser.dry` never imports `playwright`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from planner.browser.dry import DRY_START, DryEnvironment, is_dry
from planner.browser.observation import render_page

if TYPE_CHECKING:
    from planner.browser.chromium import BrowserUnavailable, find_chromium, launch_args
    from planner.browser.driver import BrowserThreadError, browser_kept
    from planner.browser.environment import BrowserEnvironment

__all__ = [
    "DRY_START",
    "BrowserEnvironment",
    "BrowserThreadError",
    "BrowserUnavailable",
    "DryEnvironment",
    "browser_kept",
    "find_chromium",
    "is_dry",
    "launch_args",
    "render_page",
]

_LAZY = {
    "BrowserEnvironment": "planner.browser.environment",
    "BrowserThreadError": "planner.browser.driver",
    "BrowserUnavailable": "planner.browser.chromium",
    "browser_kept": "planner.browser.driver",
    "find_chromium": "planner.browser.chromium",
    "launch_args": "planner.browser.chromium",
}


def __getattr__(name: str) -> Any:
    """Load the Playwright-backed names on first use, so importing this package stays free of Playwright."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
