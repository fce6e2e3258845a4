"""The simulated operator on the bundled shop in real Chromium: the default policy rescues every task
the offline model fails with at most two edits; every intervention kind goes through the command queue
and the runner applies it; and `python -m demo eval` end to end (its --out JSON). Without a
browser: the report's totals, and the oracle condition only for the demo model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cli_helpers import cli, last_json
from conftest import SCRIPTS

from demo.evaluation import (
    NO_ORACLE,
    RESCUE_EDITS,
    RunResult,
    TaskResult,
    evaluate,
    format_table,
    report,
    run_condition,
)
from demo.operator_sim import Policy, load_policy
from demo.shop import ShopServer, start_shop
from demo.tasks import load_tasks
from planner.events import Kind
from planner.tree import NodeType
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore


def in_chromium(test: Callable[..., None]) -> Callable[..., None]:
    """A test that runs demo tasks in a real browser (the module's tests without one need neither mark)."""
    return pytest.mark.browser(pytest.mark.slow(test))


pytestmark = pytest.mark.backends("memory")

TASKS = {task.id: task for task in load_tasks()}
CORRECTED = sorted(task.id for task in TASKS.values() if task.correction is not None)
"""The baseline failures: tests/test_demo_suite.py checks that the offline model fails exactly these."""
LONG = "wireless-headphones-and-printers"
Rescues = tuple[SqlStore, dict[str, RunResult]]


@pytest.fixture
def shop() -> Iterator[ShopServer]:
    with start_shop() as server:
        yield server


def _operate(store: SqlStore, shop: ShopServer, task_id: str, policy: Policy) -> RunResult:
    """The operator condition of one task, on a thread of its own (a pytest worker may hold a Playwright)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(
            run_condition, store, TASKS[task_id], shop.url, "operator", model="demo", policy=policy, artifacts=None
        ).result()


def _rescue_all(store: SqlStore, policy: Policy) -> dict[str, RunResult]:
    """The operator condition of every baseline failure, each on a fresh shop, in one Chromium."""
    from planner.browser import browser_kept

    runs: dict[str, RunResult] = {}
    with browser_kept():
        for task_id in CORRECTED:
            with start_shop() as shop:
                runs[task_id] = run_condition(
                    store, TASKS[task_id], shop.url, "operator", model="demo", policy=policy, artifacts=None
                )
    return runs


@pytest.fixture(scope="module")
def rescues() -> Iterator[Rescues]:
    """The default policy's operator run of every baseline failure, once for the module, on a thread of
    its own (the tests below read them; the evaluation's other two conditions are the suite's runs)."""
    store = SqlStore("sqlite://")
    with ThreadPoolExecutor(1) as pool:
        runs = pool.submit(_rescue_all, store, load_policy()).result()
    yield store, runs
    store.close()


def _policy(*rules: dict[str, Any]) -> Policy:
    return Policy.model_validate({"name": "test", "rules": list(rules)})


def _applied(store: SqlStore, run: RunResult) -> list[dict[str, Any]]:
    return [e.payload.command for e in store.load(run.session_id) if e.kind is Kind.COMMAND_APPLIED]


@in_chromium
def test_the_default_policy_rescues_every_baseline_failure_with_at_most_two_edits(rescues: Rescues) -> None:
    """docs/benchmarks.md's figure: every run the offline model fails, the simulated operator turns into a success."""
    _, runs = rescues
    assert len(runs) >= 9
    not_rescued = {
        task: (run.status, run.missing, run.edit_kinds)
        for task, run in runs.items()
        if not (run.success and run.edits <= RESCUE_EDITS)
    }
    assert not not_rescued, f"not rescued with at most {RESCUE_EDITS} edits: {not_rescued}"


@in_chromium
def test_an_expanded_trigger_checks_the_next_page_of_each_listing(rescues: Rescues) -> None:
    """`expanded`: when a "check each result" step is expanded on a listing with a Next page link, the
    operator adds the next page and the same check after it, once per listing."""
    store, runs = rescues
    run = runs[LONG]
    rule = next(rule for rule in load_policy().rules if rule.name == "check-every-page")
    assert rule.when.on == "expanded"
    assert [(i["rule"], i["kind"], i["applied"]) for i in run.interventions] == [
        ("check-every-page", "inject", True)
    ] * 2
    tree = load_state(store, run.session_id).tree
    injects = [c for c in _applied(store, run) if c["kind"] == "inject"]
    for intervention, inject in zip(run.interventions, injects, strict=True):
        checked = tree[intervention["node"]]
        assert checked.type is NodeType.AND and checked.description.startswith("check each result for ")
        parent = tree.parent(checked)
        assert parent is not None and inject["parent"] == parent.id
        assert inject["position"] == parent.children.index(checked.id) + 1, "right after the check"
        assert inject["goals"] == ["next page", checked.description]
    urls = {
        urlsplit(e.data["url"])
        for e in store.load(run.session_id)
        if e.kind is Kind.ACTION_EXECUTED and e.data["ok"] and e.data["url"]
    }
    assert sorted(f"{u.path}?{u.query}" for u in urls if u.query == "page=2") == [
        "/category/headphones?page=2",
        "/category/printers?page=2",
    ], "each listing's second page was checked"
    assert "Sonora BassMax Over-Ear" in (run.answer or ""), "the headphone on page 2 is in the answer"


@in_chromium
def test_inject_and_approve_rescue_the_login_wall(rescues: Rescues) -> None:
    """The default policy signs in with the task's account when a step fails on the sign-in page."""
    store, runs = rescues
    run = runs["saved-items"]
    assert run.success, f"{run.status}: {run.answer} {run.interventions}"
    assert run.edit_kinds == ["inject"] and run.interventions[0]["rule"] == "sign-in-with-the-given-account"
    commands = _applied(store, run)
    inject = next(c for c in commands if c["kind"] == "inject")
    assert inject["goals"][:3] == [
        "type shopper@example.com into Email",
        "type {{ACCOUNT_PASSWORD}} into Password",
        "click Sign in",
    ]
    assert any(i["kind"] == "approve" and i["applied"] for i in run.interventions), "the password rule approved"
    assert run.wrong_step is not None and run.latency_steps is not None and run.latency_steps > 0


@in_chromium
def test_reject_and_prune_go_through_the_queue(store: SqlStore, shop: ShopServer) -> None:
    policy = _policy(
        {
            "name": "no-total",
            "when": {"on": "planned", "node": "^note the cart total$"},
            "then": {"do": "prune", "reason": "not needed"},
        },
        {
            "name": "no-cart",
            "when": {"on": "approval", "guard": "add to cart"},
            "then": {"do": "reject", "reason": "the cart stays empty"},
        },
    )
    run = _operate(store, shop, "add-backpack-to-cart", policy)
    assert [i["kind"] for i in run.interventions] == ["prune", "reject"] and all(
        i["applied"] for i in run.interventions
    )
    assert not run.success and run.edits == 2
    events = store.load(run.session_id)
    reasons = [(e.node_id, e.data.get("status"), e.data.get("reason")) for e in events if e.kind is Kind.STATUS_CHANGED]
    assert ("0.4", "PRUNED", "operator: not needed") in reasons
    assert ("0.3", "FAIL", "rejected by operator: the cart stays empty") in reasons
    assert not any(e.kind is Kind.ACTION_EXECUTED and e.node_id == "0.3" for e in events), "a rejected action ran"


@in_chromium
def test_force_picks_the_alternative_before_the_broken_filter(store: SqlStore, shop: ShopServer) -> None:
    policy = _policy(
        {
            "name": "sort-first",
            "when": {"on": "planned", "node": "^sort by price low to high$"},
            "then": {"do": "force"},
        }
    )
    run = _operate(store, shop, "over-ear-under-100", policy)
    assert run.success and run.edit_kinds == ["force"]
    events = store.load(run.session_id)
    assert any(e.kind is Kind.ALTERNATIVE_FORCED for e in events)
    failed = [e for e in events if e.kind is Kind.ACTION_EXECUTED and not e.data["ok"]]
    assert not failed, "the forced alternative never touched the broken price filter"


@in_chromium
def test_an_http_5xx_failure_triggers_a_reopen(store: SqlStore, shop: ShopServer) -> None:
    policy = _policy({"name": "retry", "when": {"on": "failed", "reason": r"HTTP 5\d\d"}, "then": {"do": "reopen"}})
    run = _operate(store, shop, "over-ear-under-100", policy)
    [retry] = run.interventions
    assert retry["kind"] == "reopen" and retry["applied"], run.interventions
    events = store.load(run.session_id)
    failures = [e.node_id for e in events if e.kind is Kind.ACTION_EXECUTED and not e.data["ok"]]
    assert failures == [retry["node"], retry["node"]], "the reopened action ran again (and hit the 500 again)"
    assert any(e.kind is Kind.NODE_RESET and e.node_id == retry["node"] for e in events)
    assert run.success, "the OR fallback still finds the answer after the retry"


@in_chromium
def test_python_m_sessions_eval_writes_the_three_way_json(tmp_path: Path) -> None:
    """Baseline fails, the default operator rescues with one edit (the sale item opened, it goes back and
    sorts by price), the oracle correction passes too."""
    out = tmp_path / "eval.json"
    done = cli(
        "eval",
        "--tasks",
        "cheapest-lumen-printer",
        "--out",
        str(out),
        "--db",
        str(tmp_path / "s.db"),
        timeout=300,
        program="demo",
    )
    assert done.returncode == 0, done.stderr
    assert "rescued: 1 of 1 baseline failures" in done.stdout
    summary = last_json(done)
    assert summary["rescued"] == 1.0 and summary["success"] == {"baseline": 0, "operator": 1, "oracle": 1}
    document = json.loads(out.read_text())
    [row] = document["tasks"]
    assert {"task", "baseline_success", "operator_success", "edits"} <= row.keys()
    assert (row["task"], row["baseline_success"], row["operator_success"], row["edits"]) == (
        "cheapest-lumen-printer",
        False,
        True,
        1,
    )
    assert row["edit_kinds"] == ["inject"] and row["oracle_success"] is True
    [intervention] = row["operator"]["interventions"]
    assert (intervention["rule"], intervention["node"]) == ("a-sale-badge-is-not-a-low-price", "0.2")
    assert row["operator"]["wrong_step"] == 2 and row["operator"]["latency_steps"] > 0, "after the sale item was opened"
    assert document["rescued"] == 1.0 and document["rescued_tasks"] == ["cheapest-lumen-printer"]


def _result(
    condition: str, success: bool, steps: int, calls: int, kinds: tuple[str, ...] = (), **latency: Any
) -> RunResult:
    """A run as `run_condition` reports it, with only what the report reads filled in."""
    return RunResult(
        condition=condition,
        success=success,
        status="succeeded" if success else "failed",
        answer=None,
        missing=[],
        edits=len(kinds),
        edit_kinds=list(kinds),
        approvals=0,
        interventions=[],
        steps=steps,
        model_calls=calls,
        actions=0,
        wall_s=0.0,
        wrong_step=None,
        intervention_step=None,
        latency_steps=latency.get("latency_steps"),
        latency_s=latency.get("latency_s"),
        session_id=condition,
    )


def test_the_report_totals_steps_model_calls_edit_kinds_and_latency_in_seconds() -> None:
    results = [
        TaskResult(
            "a",
            "lookup",
            _result("baseline", False, 10, 5),
            _result("operator", True, 14, 7, ("inject", "edit"), latency_steps=0, latency_s=0.5),
            _result("oracle", True, 12, 6),
        ),
        TaskResult(
            "b",
            "lookup",
            _result("baseline", False, 20, 9),
            _result("operator", True, 30, 12, ("inject",), latency_steps=4, latency_s=2.5),
            None,
        ),
        TaskResult("c", "lookup", _result("baseline", True, 8, 4), _result("operator", True, 8, 4), None),
    ]
    totals = report(results, model="demo", policy="default")
    assert totals["steps"] == {"baseline": 38, "operator": 52, "oracle": 12}
    assert totals["model_calls"] == {"baseline": 18, "operator": 23, "oracle": 6}
    assert totals["edit_kinds"] == {"edit": 1, "inject": 2} and totals["operator_edits"] == 3
    assert (totals["mean_latency_steps"], totals["mean_latency_s"]) == (2, 1.5), "over the runs that made an edit"
    assert totals["oracle"] is None and totals["rescued"] == 1.0
    table = format_table(results, totals)
    [total] = [line for line in table.splitlines() if line.startswith("all 3 ")]
    for cell in ("3 (edit 1, inject 2)", "38/52/12", "18/23/6", "mean 2 (1.5)"):
        assert cell in total, f"{cell!r} in the totals row: {total}"


@contextmanager
def _no_shop() -> Iterator[str]:
    yield "http://shop.invalid"


def test_the_oracle_runs_only_for_the_demo_model_whose_plan_its_correction_edits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A correction names node ids of the demo model's plan ("edit 0.2"); on another model's plan it would
    edit some other step and still be scored, so another model gets no oracle run, and the report says why."""
    ran: list[tuple[str, str]] = []

    def run(store: SqlStore, task: Any, url: str, condition: str, *, model: str, **_: Any) -> RunResult:
        ran.append((model, condition))
        return _result(condition, condition != "baseline", 10, 5)

    monkeypatch.setattr("demo.evaluation.run_condition", run)
    said: list[str] = []
    store = SqlStore("sqlite://")
    task = ["cheapest-lumen-printer"]
    scripted = f"script:{SCRIPTS / 'brownie.json'}"
    policy = load_policy()
    [other] = evaluate(store, policy=policy, site=_no_shop, model=scripted, only=task, progress=said.append)
    assert ran == [(scripted, "baseline"), (scripted, "operator")] and other.oracle is None
    assert said[0] == NO_ORACLE == "no oracle: its correction is written for the demo model's plan"
    totals = report([other], model=scripted, policy=policy.name)
    assert totals["oracle"] == NO_ORACLE and totals["oracle_tasks"] == 0
    assert NO_ORACLE in format_table([other], totals)
    ran.clear()
    [demo] = evaluate(store, policy=policy, site=_no_shop, model="demo", only=task)
    assert [condition for _, condition in ran] == ["baseline", "operator", "oracle"] and demo.oracle is not None
    store.close()
