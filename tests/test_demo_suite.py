"""The offline demo model on the bundled shop in real Chromium: the suite, the broken widget,
the guard, and the Figure 13 story (an operator's injected sub-goals fix a wrong decomposition)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, command, finish, last_json, session_status, spawn
from waiting import wait_until

from demo.shop import ShopServer, start_shop
from demo.suite import run_suite
from demo.tasks import check_answer, load_tasks
from planner.config import EngineConfig
from planner.events import Kind
from planner.state import RunStatus, SessionState
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASKS = {task.id: task for task in load_tasks()}


def threaded_suite(store: SqlStore, **options):  # type: ignore[no-untyped-def]
    """Run the suite on a thread of its own: a sync Playwright driver is bound to its thread, and
    pytest-playwright may already hold the main one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run_suite, store, **options).result()


@pytest.fixture(scope="module")
def suite_store() -> Iterator[SqlStore]:
    store = SqlStore("sqlite://")
    yield store
    store.close()


@pytest.fixture(scope="module")
def results(suite_store: SqlStore):  # type: ignore[no-untyped-def]
    return {row.task: row for row in threaded_suite(suite_store)}


@pytest.fixture
def shop() -> Iterator[ShopServer]:
    with start_shop() as server:
        yield server


CORRECTED = sorted(task.id for task in TASKS.values() if task.correction is not None)
"""The tasks the offline model gets wrong on purpose, each with the one command that fixes it."""


def test_the_offline_model_fails_exactly_the_tasks_that_carry_a_correction(results) -> None:  # type: ignore[no-untyped-def]
    failed = {task for task, row in results.items() if not row.success}
    assert failed == set(CORRECTED)
    wrong = results["keyboard-brand-backpack"]
    assert wrong.status == "succeeded" and "Acme" in (wrong.answer or "")
    assert wrong.missing == ["Northwind", "Northwind Metro 18L", "54.99"]


def _browser_actions(store: SqlStore, session_id: str) -> int:
    """Actions that ran in the browser (clicks, typing, going back), not the notes the model takes."""
    return sum(
        1 for e in store.load(session_id) if e.kind is Kind.ACTION_EXECUTED and not e.data["action"].startswith("note")
    )


def test_the_long_tasks_take_thirty_browser_actions_or_more(results, suite_store: SqlStore) -> None:  # type: ignore[no-untyped-def]
    long = {task: n for task, row in results.items() if (n := _browser_actions(suite_store, row.session_id)) >= 30}
    assert len(long) >= 2, f"only these tasks take 30 browser actions or more: {long}"
    assert "wireless-headphones-and-printers" in long, "the paginated one, even when it fails (page 1 only)"


def test_broken_price_filter_leads_to_the_or_fallback_with_rollback(results, suite_store: SqlStore) -> None:  # type: ignore[no-untyped-def]
    events = suite_store.load(results["over-ear-under-100"].session_id)
    failures = [e for e in events if e.kind is Kind.ACTION_EXECUTED and not e.data["ok"]]
    assert len(failures) == 1 and failures[0].data["error"].startswith("HTTP 500 at ")
    rollback = next(e for e in events if e.kind is Kind.ROLLBACK)
    assert rollback.data["ok"] and rollback.data["url"] == rollback.data["target"]
    assert rollback.data["url"].endswith("/category/headphones")
    next_action = next(e for e in events if e.kind is Kind.ACTION_EXECUTED and e.seq > rollback.seq)
    assert next_action.data["url"].endswith("/category/headphones?sort=price_asc")


def test_the_multi_item_task_keeps_a_candidate_table_that_matches_its_answer(results, suite_store: SqlStore) -> None:  # type: ignore[no-untyped-def]
    from planner.state import replay

    row = results["wireless-photo-printers"]
    candidates = replay(suite_store.load(row.session_id)).candidates
    qualifying = [c.name for c in candidates.values() if c.verdict == "qualifies"]
    rejected = [c for c in candidates.values() if c.verdict == "rejected"]
    assert len(qualifying) >= 3 and all(name in (row.answer or "") for name in qualifying)
    assert rejected and all(c.unmet and c.name not in (row.answer or "") for c in rejected)


def test_the_repair_task_recovers_only_with_repair(results, suite_store: SqlStore) -> None:  # type: ignore[no-untyped-def]
    row = results["top-rated-webcam"]
    assert row.success and row.repairs == 1
    with_no_repair = threaded_suite(suite_store, only=["top-rated-webcam"], config=EngineConfig(repair=False))[0]
    assert not with_no_repair.success and with_no_repair.status == "failed"


def test_guarded_actions_wait_for_approval_and_reject_fails_them(results, suite_store: SqlStore) -> None:  # type: ignore[no-untyped-def]
    approved = suite_store.load(results["checkout-french-press"].session_id)
    asked = [e.data["rule"] for e in approved if e.kind is Kind.APPROVAL_REQUESTED]
    assert asked == [
        "element named 'Add to cart' matches 'add to cart'",
        "element named 'Proceed to checkout' matches 'checkout'",
        "password field",
        "element named 'Place order' matches 'place order'",
    ]
    rejected = threaded_suite(suite_store, only=["add-backpack-to-cart"], approve=False)[0]
    assert not rejected.success and rejected.status == "paused", "with nothing left to try, a rejection pauses the run"
    events = suite_store.load(rejected.session_id)
    assert [e.data["action"] for e in events if e.kind is Kind.APPROVAL_REQUESTED and e.node_id == "0.3"]
    assert not any(e.kind is Kind.ACTION_EXECUTED and e.node_id == "0.3" for e in events), "a rejected action ran"
    reasons = [e.data.get("reason", "") for e in events if e.kind is Kind.STATUS_CHANGED and e.node_id == "0.3"]
    assert reasons[0] == "rejected by operator: suite runs without approval"


def test_figure_13_operator_injects_the_corrective_subgoals_through_the_cli(tmp_path: Path, shop: ShopServer) -> None:
    task = TASKS["keyboard-brand-backpack"]
    correction = task.correction
    assert correction is not None
    db = str(tmp_path / "s.db")
    runner = spawn(
        "run",
        "--db",
        db,
        "--task",
        task.task,
        "--model",
        "demo",
        "--start-url",
        shop.url + "/",
        "--paused",
        "--id",
        "fig13",
    )
    try:
        wait_until(
            lambda: session_status(db, "fig13") == "paused", "the session created paused to be listed", timeout=120
        )
        for steps in (1, 2):  # the task's constraints, then the root's expansion
            stepping = command(db, "fig13", "step")
            assert stepping["result"] == "applied", stepping

            def stepped(steps: int = steps) -> dict[str, Any] | None:
                trace = last_json(cli("export", "fig13", "--db", db))
                done = trace["session"]["status"] == "paused" and trace["metrics"]["steps"] >= steps
                return trace if done else None

            trace = wait_until(stepped, f"step {steps} to finish and the session to pause again", timeout=120)
        naive = [n["description"] for n in trace["nodes"] if n["parent"] == "0"]
        assert naive[0] == "search for backpacks from the top keyboard brand"
        inject = ["inject", "--parent", correction.parent, "--position", str(correction.position)]
        for goal in correction.goals:
            inject += ["--goal", goal]
        injected = command(db, "fig13", *inject)
        assert injected["result"] == "applied", injected
        resumed = command(db, "fig13", "resume")
        assert resumed["result"] == "applied", resumed
        out, _ = finish(runner, "the corrected Figure 13 run to finish", timeout=240)
    finally:
        runner.kill()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["status"] == "succeeded"
    assert check_answer(task, summary["final_answer"]).passed, summary["final_answer"]
    trace = last_json(cli("export", "fig13", "--db", db))
    injected = [n for n in trace["nodes"] if n["origin"] == "operator"]
    assert [n["status"] for n in injected] == ["SUCCESS"] * 3
    browser_actions = [
        e for e in trace["events"] if e["kind"] == "action_executed" and not e["detail"]["action"].startswith("note")
    ]
    shots = [Path(e["detail"]["screenshot"]) for e in browser_actions]
    assert shots and all(shot.is_file() and shot.parent == tmp_path / "artifacts" / "fig13" for shot in shots)
    assert all(e["detail"]["html_chars"] > 8 * e["detail"]["obs_chars"] > 0 for e in browser_actions)


def test_python_m_demo_runs_one_task_and_checks_its_answer(tmp_path: Path) -> None:
    """`python -m demo run TASK_ID`: a fresh shop, the offline model, the tree, and the verdict last."""
    done = cli("run", "cheapest-espresso", "--db", str(tmp_path / "s.db"), program="demo", timeout=240)
    summary = last_json(done)
    assert done.returncode == 0, done.stderr
    assert summary["status"] == "succeeded" and summary["criteria_met"] and summary["missing"] == [], summary


def _cart_after_a_restart(shop: ShopServer, storage: Path | None) -> str:
    """Add a backpack to the cart in one browser, then read the cart in a second one."""
    from planner.browser.environment import BrowserEnvironment
    from planner.models.offline import read_elements

    with BrowserEnvironment(shop.url + "/search?q=commuter", storage_path=storage) as first:
        product = next(e for e in read_elements(first.observe().text) if e.name == "Acme Commuter 20L")
        first.execute(f"click [{product.id}]")
        add = next(e for e in read_elements(first.observe().text) if e.name == "Add to cart")
        assert first.execute(f"click [{add.id}]").ok
    with BrowserEnvironment(shop.url + "/cart", storage_path=storage) as second:
        return second.observe().text


def test_a_restarted_browser_keeps_the_sessions_cookies(shop: ShopServer, tmp_path: Path) -> None:
    with ThreadPoolExecutor(1) as pool:
        kept = pool.submit(_cart_after_a_restart, shop, tmp_path / "browser-state.json").result()
        lost = pool.submit(_cart_after_a_restart, shop, None).result()
    assert "Acme Commuter 20L" in kept
    assert "Acme Commuter 20L" not in lost, "without a state file a new browser starts with an empty cart"


def _operator(store: SqlStore, session_id: str, correction: dict[str, object]) -> Callable[[SessionState], bool]:
    """Step twice (constraints, the root's expansion), send the correction, resume; approve guarded actions."""
    sent: list[str] = []

    def on_idle(state: SessionState) -> bool:
        if store.pending(session_id):
            return True
        if state.status is RunStatus.AWAITING_APPROVAL:
            queue_command(store, session_id, {"kind": "approve"})
        elif state.status is RunStatus.PAUSED and state.steps < 2:
            queue_command(store, session_id, {"kind": "step"})
        elif state.status is RunStatus.PAUSED and not sent:
            sent.append(queue_command(store, session_id, correction))
            queue_command(store, session_id, {"kind": "resume"})
        else:
            return False
        return True

    return on_idle


@pytest.mark.parametrize("task_id", CORRECTED)
def test_each_failing_task_is_rescued_by_its_one_recorded_correction(task_id: str, shop: ShopServer) -> None:
    task = TASKS[task_id]
    assert task.correction is not None
    store = SqlStore("sqlite://")
    session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path, paused=True)
    with ThreadPoolExecutor(1) as pool:
        state = pool.submit(
            Runner(store, session_id).run, on_idle=_operator(store, session_id, task.correction.command())
        ).result()
    applied = [e for e in store.load(session_id) if e.kind is Kind.COMMAND_APPLIED]
    assert [e.payload.command["kind"] for e in applied][:3] == ["step", "step", task.correction.kind]
    assert state.status is RunStatus.SUCCEEDED, f"{task_id}: {state.status.value} ({state.reason})"
    assert check_answer(task, state.final_answer or "").passed, f"{task_id}: {state.final_answer}"
