"""Prompt size and call count of the Claude backend: `python -m bench.tokens`.

Prints, on the bundled demo shop:
1. raw HTML size against the compact observation the prompts carry, per page;
2. approximate prompt tokens per question on the default model (`--model` another id), split into
   the cached prefix and the per-call part; then which families cache that prefix;
3. model calls per browser action for demo-task runs, against the goal of at most 2.2, with and
   without lookahead (`--db DB --session ID` counts a recorded session instead);
4. for the model of section 2: tokens, cache reads and the estimated cost per browser action.

No API call is made: prompts are rendered exactly as `ClaudeModel` would send them. The compact
observation needs Chromium; without it section 1 and 2 fall back to raw HTML only and say so.
(docs/architecture.md, "bench/tokens.py")
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import urllib.request
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from planner.actions import is_note
from planner.config import EngineConfig
from planner.events import ActionExecuted, Event, Kind, ModelCalled
from planner.models.capabilities import DEFAULT_MODEL, FAMILIES, family_of
from planner.models.claude import ClaudeModel, prefix_tokens
from planner.models.prompts import OBSERVATION_BUDGET, PROMPTS
from planner.questions import View
from planner.tree import Node, NodeType, Status, Tree

__all__ = ["calls_per_action", "main", "prompt_tokens", "question_calls"]

GOAL_CALLS_PER_ACTION = 2.2
PAGES = ("/", "/search?q=espresso", "/search?q=espresso&sort=price_asc")
TASK = (
    'Search the shop for "espresso", open the cheapest espresso machine in the results, and tell me its name and price.'
)
_DETAIL = {"repair": "no link named like 'Price: low to high'", "observe": "click [12]"}


def _tokens(chars: int, model: str = DEFAULT_MODEL) -> int:
    """Approximate tokens in `model`'s tokenizer: characters times its family's `tokens_per_char`
    (four characters a token before the Sonnet 5 tokenizer, about 30% more tokens since)."""
    return round(chars * family_of(model).tokens_per_char)


def _view(observation: str, url: str) -> View:
    """A mid-run tree: the search done, the current node about to open the cheapest result."""
    tree = Tree()
    nodes = [
        Node(id="0", description=TASK, type=NodeType.AND, status=Status.VISITED, children=["0.1", "0.2", "0.3"]),
        Node(
            id="0.1",
            parent="0",
            description="search for espresso",
            type=NodeType.ACTION,
            status=Status.SUCCESS,
            action="type [3] [espresso] [1]",
        ),
        Node(id="0.2", parent="0", description="open the cheapest espresso machine", status=Status.VISITED),
        Node(id="0.3", parent="0", description="note the name and price"),
    ]
    tree.nodes = {node.id: node for node in nodes}
    return View(
        task=TASK,
        tree=tree,
        node=tree["0.2"],
        notes=(),
        progress="searched for espresso",
        observation=observation,
        url=url,
    )


def prompt_tokens(view: View, model: str = DEFAULT_MODEL) -> dict[str, tuple[int, int]]:
    """Per question: (cached prefix tokens, per-call tokens) in `model`'s tokenizer, tools counted in the prefix."""
    claude = ClaudeModel(model)
    sizes: dict[str, tuple[int, int]] = {}
    for question in PROMPTS:
        request = claude.request(question, view, _DETAIL.get(question, ""))
        task_block, context = request["messages"][0]["content"]
        prefix = len(request["system"][0]["text"]) + len(json.dumps(request["tools"]))
        sizes[question] = (_tokens(prefix, model), _tokens(len(task_block["text"]) + len(context["text"]), model))
    return sizes


def calls_per_action(events: Iterable[Event]) -> tuple[int, int]:
    """(model calls, browser actions) of one session's log; notes are not browser actions."""
    calls = actions = 0
    for event in events:
        if event.kind is Kind.MODEL_CALL:
            calls += 1
        elif isinstance(event.payload, ActionExecuted) and not is_note(event.payload.action):
            actions += 1
    return calls, actions


def _observations(base: str) -> dict[str, tuple[str, str | None]]:
    """Raw HTML and compact observation (None without a browser) of each demo page."""
    raw = {path: urllib.request.urlopen(base + path, timeout=10).read().decode() for path in PAGES}
    product = re.search(r'href="(/product/[^"]+)"', raw[PAGES[1]])
    if product:
        raw[product[1]] = urllib.request.urlopen(base + product[1], timeout=10).read().decode()
    compact: dict[str, str | None] = dict.fromkeys(raw)
    try:
        from planner.browser.environment import BrowserEnvironment

        env = BrowserEnvironment(base + PAGES[0])
    except Exception as error:  # noqa: BLE001 - any launch failure means "no browser here"; we say so
        print(f"(no browser: {error}; compact observations skipped)")
    else:
        try:
            for path in raw:
                env.goto(base + path)
                compact[path] = env.observe().text
        finally:
            env.close()
    return {path: (raw[path], compact[path]) for path in raw}


def question_calls(events: Iterable[Event]) -> Counter[str]:
    """How many times each question was asked in one session's log (every attempt counts)."""
    return Counter(str(event.payload.question) for event in events if isinstance(event.payload, ModelCalled))


def _print_pages(base: str, model: str) -> dict[str, tuple[int, int]]:
    """Sections 1 and 2; returns the prompt sizes on the results page for section 4."""
    pages = _observations(base)
    print(f"1. Page size: raw HTML vs compact observation (tokens ~ chars x {family_of(model).tokens_per_char:g})")
    print(f"   {'page':40} {'html chars':>10} {'obs chars':>10} {'html tok':>9} {'obs tok':>8} {'ratio':>6}")
    for path, (html, text) in pages.items():
        obs = len(text) if text is not None else 0
        ratio = f"{len(html) / obs:.1f}x" if obs else "-"
        print(
            f"   {path:40} {len(html):>10} {obs:>10} {_tokens(len(html), model):>9} {_tokens(obs, model):>8} {ratio:>6}"
        )
    raw_results, compact = pages[PAGES[1]]
    print()
    family = family_of(model)
    print(f"2. Prompt tokens per question on the espresso results page, {family.name} ({model})")
    print(f"   ({family.tokens_per_char:g} tokens per character, approximate)")
    print(f"   {'question':14} {'cached prefix':>13} {'per call':>9} {'per call, raw HTML':>19}")
    raw_sizes = prompt_tokens(_view(raw_results, base + PAGES[1]), model)
    sizes = prompt_tokens(_view(compact or raw_results, base + PAGES[1]), model)
    for question, (prefix, call) in sizes.items():
        print(f"   {question:14} {prefix:>13} {call:>9} {raw_sizes[question][1]:>19}")
    print(f"   (observations are cut at {OBSERVATION_BUDGET} characters, planner.models.prompts.OBSERVATION_BUDGET)")
    print("   the prefix (tools + system) is shared by every question; each family caches it if long enough:")
    for other in FAMILIES:
        tokens, minimum = prefix_tokens(other), other.cache_minimum
        verdict = "cached" if tokens >= minimum else "NOT cached (too short): calls send one tool, uncached"
        print(f"     {other.name:26} ~{tokens:>5} tokens, minimum {minimum:>5} -> {verdict}")
    return sizes


def _print_calls(sessions: Sequence[tuple[str, list[Event]]], title: str) -> None:
    print()
    print(f"3. Model calls per browser action, {title} (goal <= {GOAL_CALLS_PER_ACTION})")
    total_calls = total_actions = 0
    for name, events in sessions:
        calls, actions = calls_per_action(events)
        total_calls, total_actions = total_calls + calls, total_actions + actions
        ratio = f"{calls / actions:.2f}" if actions else "-"
        print(f"   {name:28} calls {calls:>4}  actions {actions:>3}  calls/action {ratio}")
    if total_actions:
        overall = total_calls / total_actions
        verdict = "meets" if overall <= GOAL_CALLS_PER_ACTION else "misses"
        print(f"   overall: {overall:.2f} calls per action ({verdict} the goal of <= {GOAL_CALLS_PER_ACTION})")


def _print_default_calls(
    sessions: Sequence[tuple[str, list[Event]]], sizes: dict[str, tuple[int, int]], model: str
) -> None:
    """Section 4: calls per question and their effort, cached share, calls and cost per browser action."""
    claude, family = ClaudeModel(model), family_of(model)
    calls: Counter[str] = Counter()
    actions = runs = 0
    for _, events in sessions:
        calls += question_calls(events)
        actions += calls_per_action(events)[1]
        runs += 1
    total = sum(calls.values())
    print()
    print(f"4. Calls, cache and cost on {family.name} ({model}), demo tasks, lookahead on")
    print(f"   effort {claude.effort or '-'} on every call, max_tokens {claude.max_tokens:,}")
    print(f"   {'question':14} {'calls':>6} {'cached':>7} {'uncached':>9} {'input $/call':>13}")
    cached = written = uncached = 0
    input_cost = 0.0
    for question in PROMPTS:
        count = calls[str(question)]
        prefix, call = sizes[question]
        each = family.prices.cost(call, 0, 0, prefix) if family.prices and claude.shared_prefix else 0.0
        print(f"   {question:14} {count:>6} {prefix:>7} {call:>9} {each:>13.5f}")
        uncached += count * call
        if claude.shared_prefix:
            cached += count * prefix
        else:
            uncached += count * prefix
        input_cost += count * each
    if not (total and actions):
        return
    prefix = max(p for p, _ in sizes.values())
    if claude.shared_prefix:  # each run's first call writes the prefix instead of reading it
        written, cached = runs * prefix, cached - runs * prefix
    share = cached / (cached + written + uncached)
    prices = family.prices
    print(
        f"   overall: {total} calls for {actions} browser actions = {total / actions:.2f} calls per action; "
        f"{share:.0%} of input tokens read from the cache ({written:,} written, {cached:,} read, {uncached:,} uncached)"
    )
    if prices is None:
        print("   cost per browser action: unknown (the table has no price for this model)")
        return
    per_thousand = prices.cost(0, 1000 * total, 0, 0) / actions
    print(
        f"   cost per browser action: ~${prices.cost(uncached, 0, written, cached) / actions:.4f} input and cache, "
        f"plus ~${per_thousand:.4f} for every 1,000 output tokens (thinking and answer) a call takes"
    )


def _demo_runs(tasks: Sequence[str] | None, lookahead: int) -> list[tuple[str, list[Event]]]:
    """Run demo tasks with the offline model in the browser and return their logs."""
    from demo.suite import run_suite
    from sessions.store.sql import open_store

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        try:
            rows = run_suite(store, only=list(tasks) if tasks else None, config=EngineConfig(lookahead=lookahead))
            return [(row.task, store.load(row.session_id)) for row in rows]
        finally:
            store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tokens", description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="store to read --session from (default $ANDOR_DB)")
    parser.add_argument("--session", help="count calls per action of this recorded session instead of demo runs")
    parser.add_argument("--task", action="append", help="demo task id to run (repeatable; default: all)")
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"Claude model id to size prompts for (default {DEFAULT_MODEL})"
    )
    args = parser.parse_args(argv)

    from demo.shop import start_shop

    with start_shop() as shop:
        sizes = _print_pages(shop.url, args.model)
    if args.session:
        from sessions.store.sql import open_store

        store = open_store(args.db)
        try:
            _print_calls([(args.session, store.load(args.session))], "recorded session")
        finally:
            store.close()
        return 0
    default = EngineConfig().lookahead
    runs = _demo_runs(args.task, default)
    _print_calls(runs, f"demo tasks, lookahead {default}")
    _print_calls(_demo_runs(args.task, 0), "demo tasks, lookahead off")
    _print_default_calls(runs, sizes, args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
