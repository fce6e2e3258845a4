"""The headless CLI contract: run, command (from another process), resume, fork, list, export."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_helpers import cli, last_json, spawn
from conftest import BROWNIE_TASK, SCRIPTS

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


def test_run_prints_a_json_summary_last(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE)
    summary = last_json(result)
    assert result.returncode == 0
    assert summary["status"] == "succeeded"
    assert summary["final_answer"] == "Fudgy vegan brownies (4.8 stars)"
    assert summary["steps"] == 12  # constraint extraction, then the paper's 11 steps
    listed = last_json(cli("list", "--db", db))["sessions"]
    assert [s["session_id"] for s in listed] == [summary["session_id"]]


def test_failed_run_exits_1_and_ablation_flags_apply(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", f"script:{SCRIPTS / 'brownie_fail.json'}", "--no-repair")
    assert result.returncode == 1
    assert last_json(result)["status"] == "failed"
    trace = last_json(cli("export", last_json(result)["session_id"], "--db", db))
    assert trace["session"]["config"]["repair"] is False
    assert trace["metrics"]["deleted"] == 1


def test_export_is_the_documented_trace_and_time_travels(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    trace = last_json(cli("export", session_id, "--db", db))
    assert set(trace) >= {"session", "nodes", "events", "metrics"}
    assert trace["session"]["status"] == "succeeded"
    assert {"id", "parent", "type", "status", "description", "action", "origin"} <= set(trace["nodes"][0])
    assert {"seq", "kind", "node_id", "detail"} == set(trace["events"][0])
    early = last_json(cli("export", session_id, "--db", db, "--at", "8"))
    assert early["session"]["status"] == "running"
    assert len(early["events"]) == 8
    assert [n["id"] for n in early["nodes"]] == ["0", "0.1", "0.2", "0.3"]


def test_commands_from_another_process_steer_a_paused_run(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            {
                "nodes": {
                    "do it": {"type": "AND", "children": ["first", "second"]},
                    "first": {"type": "ACTION", "action": "click [1]"},
                    "second": {"type": "ACTION", "action": "click [2]"},
                    "injected": {"type": "ACTION", "action": "note [operator was here]"},
                }
            }
        )
    )
    runner = spawn("run", "--db", db, "--task", "do it", "--model", f"script:{script}", "--breakpoint", "after_expansion", "--id", "abc")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = last_json(cli("list", "--db", db))["sessions"]
            if listed and listed[0]["status"] == "paused":
                break
            time.sleep(0.1)
        rejected = cli("command", "abc", "--db", db, "--wait", "prune", "--node", "0", "--reason", "x")
        assert rejected.returncode == 1
        assert last_json(rejected)["reason"] == "the root cannot be pruned; stop the session instead"
        applied = last_json(cli("command", "abc", "--db", db, "--wait", "inject", "--parent", "0", "--goal", "injected", "--position", "1"))
        assert applied["result"] == "applied"
        pruned = last_json(cli("command", "abc", "--db", db, "--wait", "prune", "--node", "0.2", "--reason", "not needed"))
        assert pruned["result"] == "applied"
        while runner.poll() is None and time.monotonic() < deadline:
            cli("command", "abc", "--db", db, "--wait", "--timeout", "5", "resume")
        out, err = runner.communicate(timeout=10)
    finally:
        runner.kill()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["status"] == "succeeded"
    assert summary["final_answer"] == "operator was here"
    nodes = {n["id"]: n for n in last_json(cli("export", "abc", "--db", db))["nodes"]}
    assert nodes["0.3"]["origin"] == "operator" and nodes["0.3"]["status"] == "SUCCESS"
    assert nodes["0.2"]["status"] == "PRUNED"


def test_pause_then_resume_command_continues_in_a_new_process(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--id", "p1")
    time.sleep(1.0)
    runner.terminate()  # Ctrl-C / SIGTERM leaves it paused and resumable
    out, _ = runner.communicate(timeout=10)
    assert json.loads(out.strip().splitlines()[-1])["status"] == "paused"
    resumed = cli("resume", "p1", "--db", db)
    assert last_json(resumed)["status"] == "succeeded"


def test_fork_copies_history_and_runs_independently(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    fork = last_json(cli("fork", session_id, "--at", "12", "--db", db))
    assert fork["status"] == "paused"
    cli("command", fork["session_id"], "--db", db, "prune", "--node", "0.3", "--reason", "skip the note")
    resumed = last_json(cli("resume", fork["session_id"], "--db", db))
    assert resumed["status"] == "succeeded"
    forked = last_json(cli("export", fork["session_id"], "--db", db))
    original = last_json(cli("export", session_id, "--db", db))
    assert forked["session"]["forked_from"] == [session_id, 12]
    assert {n["id"]: n["status"] for n in forked["nodes"]}["0.3"] == "PRUNED"
    assert {n["id"]: n["status"] for n in original["nodes"]}["0.3"] == "SUCCESS"


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    missing = cli("run", "--db", db, "--task", "x", "--model", "script:/no/such.json", check=False)
    assert missing.returncode == 2 and "script file /no/such.json does not exist" in missing.stderr
    unknown = cli("command", "nope", "--db", db, "pause", check=False)
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr
    empty = cli("run", "--db", db, "--task", "  ", "--model", BROWNIE, check=False)
    assert empty.returncode == 2 and "the task is empty" in empty.stderr
    budget = cli("run", "--db", db, "--task", "x", "--model", BROWNIE, "--max-steps", "0", check=False)
    assert budget.returncode == 2 and "max_steps" in budget.stderr
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    blank = cli("command", session_id, "--db", db, "inject", "--parent", "0", "--goal", " ", check=False)
    assert blank.returncode == 2 and "sub-goal cannot be blank" in blank.stderr
    fork = cli("fork", session_id, "--at", "999", "--db", db, check=False)
    assert fork.returncode == 2 and "cannot fork at 999" in fork.stderr


def test_constraints_and_lookahead_are_set_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--lookahead", "0", "--id", "c1")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not last_json(cli("list", "--db", db))["sessions"]:
            time.sleep(0.1)
        set_ = last_json(cli("command", "c1", "--db", db, "--wait", "constraints", "vegan", "rated 4 or more"))
        assert set_["result"] == "applied"
        assert last_json(cli("command", "c1", "--db", db, "--wait", "resume"))["result"] == "applied"
        out, _ = runner.communicate(timeout=30)
    finally:
        runner.kill()
    assert json.loads(out.strip().splitlines()[-1])["status"] == "succeeded"
    trace = last_json(cli("export", "c1", "--db", db))
    assert trace["session"]["config"]["lookahead"] == 0
    calls = [e for e in trace["events"] if e["kind"] == "model_call"]
    assert not any(c["detail"]["operator"] == "constraints" for c in calls), "the operator's constraints stand"
    expanded = {c["node_id"] for c in calls if c["detail"]["operator"] == "expand"}
    assert {"0.1", "0.3"} <= expanded, "without lookahead every action node has its own expansion"

    no_constraints = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--no-constraints"))
    steps = [e["detail"]["work"] for e in last_json(cli("export", no_constraints["session_id"], "--db", db))["events"] if e["kind"] == "step"]
    assert "constraints" not in steps
    bad = cli("run", "--db", db, "--task", "x", "--model", BROWNIE, "--lookahead", "-1", check=False)
    assert bad.returncode == 2 and "lookahead" in bad.stderr
