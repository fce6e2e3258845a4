"""Prompt size and call count of the Claude backend: `python -m bench.tokens`.

Prints, on the bundled demo shop:
1. raw HTML size against the compact observation the prompts carry, per page;
2. approximate prompt tokens per operator call on the default model (`--model` another id), in its
   family's tokenizer (characters x `tokens_per_char` from `planner.models.capabilities`, an
   approximation, not a tokenizer), split into the cached prefix (tools + system + task) and the
   per-call part, with the observation rendered compactly and, for comparison, as raw HTML; then
   which families cache that prefix;
3. model calls per browser action (model_call events / action_executed events that are not notes)
   for demo-task runs, against the goal of at most 2.2, with lookahead (the default) and without
   it (`lookahead=0`, one expansion call per node) for comparison. `--db DB --session ID` counts a
   recorded session instead (for instance a real Claude run);
4. for the model of section 2: the calls of those runs per operator, the effort each is sent with,
   input tokens per call and per browser action, and their estimated input cost (the prefix read
   from the cache, output and thinking tokens not included: they depend on the answers).

No API call is made: prompts are rendered exactly as `ClaudeModel` would send them. The compact
observation needs Chromium; without it section 1 and 2 fall back to raw HTML only and say so.
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
from planner.operators import Operator, View
from planner.tree import Node, NodeType, Status, Tree

__all__ = ["calls_per_action", "main", "operator_calls", "prompt_tokens"]

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
    """Per operator: (cached prefix tokens, per-call tokens) in `model`'s tokenizer, tools counted in the prefix."""
    claude = ClaudeModel(model)
    sizes = {}
    for operator in PROMPTS:
        request = claude.request(operator, view, _DETAIL.get(operator, ""))
        task_block, context = request["messages"][0]["content"]
        prefix = len(request["system"][0]["text"]) + len(json.dumps(request["tools"])) + len(task_block["text"])
        sizes[operator] = (_tokens(prefix, model), _tokens(len(context["text"]), model))
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


def operator_calls(events: Iterable[Event]) -> Counter[str]:
    """How many model calls each operator made in one session's log."""
    return Counter(str(event.payload.operator) for event in events if isinstance(event.payload, ModelCalled))


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
    print(f"2. Prompt tokens per operator call on the espresso results page, {family.name} ({model})")
    print(f"   ({family.tokens_per_char:g} tokens per character, approximate)")
    print(f"   {'operator':14} {'cached prefix':>13} {'per call':>9} {'per call, raw HTML':>19}")
    raw_sizes = prompt_tokens(_view(raw_results, base + PAGES[1]), model)
    sizes = prompt_tokens(_view(compact or raw_results, base + PAGES[1]), model)
    for operator, (prefix, call) in sizes.items():
        print(f"   {operator:14} {prefix:>13} {call:>9} {raw_sizes[operator][1]:>19}")
    print(f"   (observations are cut at {OBSERVATION_BUDGET} characters, planner.models.prompts.OBSERVATION_BUDGET)")
    print("   the prefix (tools + system) is shared by every operator; each family caches it if long enough:")
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
        ratio = total_calls / total_actions
        verdict = "meets" if ratio <= GOAL_CALLS_PER_ACTION else "misses"
        print(f"   overall: {ratio:.2f} calls per action ({verdict} the goal of <= {GOAL_CALLS_PER_ACTION})")


def _print_default_calls(
    sessions: Sequence[tuple[str, list[Event]]], sizes: dict[str, tuple[int, int]], model: str
) -> None:
    """Section 4: calls per operator, effort, and input tokens and cost per call and per action."""
    claude, family = ClaudeModel(model), family_of(model)
    calls: Counter[str] = Counter()
    actions = 0
    for _, events in sessions:
        calls += operator_calls(events)
        actions += calls_per_action(events)[1]
    total = sum(calls.values())
    print()
    print(f"4. Calls and input tokens per call on {family.name} ({model}), demo tasks, lookahead on")
    print(f"   {'operator':14} {'calls':>6} {'effort':>7} {'cached':>7} {'uncached':>9} {'input $/call':>13}")
    cached_total = uncached_total = 0
    cost_total = 0.0
    for operator in PROMPTS:
        count = calls[str(operator)]
        prefix, call = sizes[operator]
        cost = family.prices.cost(call, 0, 0, prefix) if family.prices else 0.0
        effort = claude.effort_for(Operator(operator)) or "-"
        print(f"   {operator:14} {count:>6} {effort:>7} {prefix:>7} {call:>9} {cost:>13.5f}")
        cached_total, uncached_total, cost_total = (
            cached_total + count * prefix,
            uncached_total + count * call,
            cost_total + count * cost,
        )
    if total and actions:
        print(
            f"   overall: {total} calls for {actions} browser actions = {total / actions:.2f} calls per action; "
            f"per call ~{uncached_total / total:,.0f} uncached + ~{cached_total / total:,.0f} cached input tokens"
        )
        print(
            f"   per browser action ~{(uncached_total + cached_total) / actions:,.0f} input tokens, "
            f"~${cost_total / actions:.4f} input (prefix from cache; output and thinking tokens extra)"
        )


def _demo_runs(tasks: Sequence[str] | None, lookahead: int) -> list[tuple[str, list[Event]]]:
    """Run demo tasks with the offline model in the browser and return their logs."""
    from demo.suite import run_suite
    from sessions.sql import open_store

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
        from sessions.sql import open_store

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
