"""kill -9 the runner at random points; every session resumes and ends exactly as an uninterrupted run."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, last_json, spawn
from conftest import trials

pytestmark = pytest.mark.slow

TASK = "long task"
VOLATILE = {"latency_ms", "duration_ms"}


def long_script() -> dict[str, Any]:
    """About 200 steps: ordered groups, a failing action with repair, an OR fallback, notes."""
    nodes: dict[str, Any] = {TASK: {"type": "AND", "children": [f"group {g}" for g in range(12)] + ["choose"]}}
    fail = []
    repairs = {}
    for g in range(12):
        steps = [f"g{g} step {s}" for s in range(3)]
        nodes[f"group {g}"] = {"type": "AND", "children": steps}
        for s, step in enumerate(steps):
            action = f"click [{g * 10 + s}]" if s < 2 else f"note [fact {g}]"
            nodes[step] = {"type": "ACTION", "action": action}
        if g % 4 == 1:
            fail.append(f"click [{g * 10 + 1}]")
            repairs[f"group {g}"] = {"add": [f"g{g} retry"]}
            nodes[f"g{g} retry"] = {"type": "ACTION", "action": f"click [{g * 10 + 9}]"}
    nodes["choose"] = {
        "type": "OR",
        "children": [{"description": "plan A", "score": 0.9}, {"description": "plan B", "score": 0.4}],
    }
    nodes["plan A"] = {"type": "ACTION", "action": "click [900]"}
    nodes["plan B"] = {"type": "ACTION", "action": "click [901]"}
    fail.append("click [900]")
    return {"nodes": nodes, "fail_actions": fail, "repairs": repairs}


def comparable(trace: dict[str, Any]) -> dict[str, Any]:
    session = {k: v for k, v in trace["session"].items() if k != "id"}
    events = [
        (e["seq"], e["kind"], e["node_id"], {k: v for k, v in e["detail"].items() if k not in VOLATILE})
        for e in trace["events"]
    ]
    return {"session": session, "nodes": trace["nodes"], "events": events, "metrics": trace["metrics"]}


def event_count(db: Path, session_id: str) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("select count(*) from events where session_id = ?", (session_id,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _killed_run(db: Path, model: str, kill_at: int) -> int:
    """Start the run in a process of its own, SIGKILL it once `kill_at` events are stored (it may get
    past that, or end, before the poll sees it: once 3 of 8 runs did), and return how many are."""
    proc = spawn("run", "--db", str(db), "--task", TASK, "--model", model, "--id", "ref")
    deadline = time.monotonic() + 60
    while event_count(db, "ref") < kill_at and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.kill()  # SIGKILL: no finally blocks, no clean shutdown
    proc.wait()
    return event_count(db, "ref")


def test_kill_nine_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    script = tmp_path / "long.json"
    script.write_text(json.dumps(long_script()))
    model = f"script:{script}"
    reference_db = tmp_path / "ref.db"
    ref = last_json(cli("run", "--db", str(reference_db), "--task", TASK, "--model", model, "--id", "ref"))
    assert ref["status"] == "succeeded"
    expected = comparable(last_json(cli("export", "ref", "--db", str(reference_db))))
    total = len(expected["events"])
    assert total > 300

    rng = random.Random(20261130)
    kills = sorted(rng.sample(range(2, total - 5), 8))
    interrupted = 0
    for run, kill_at in enumerate(kills):
        for attempt in range(3):  # a run that got past its kill point first is run again, killed earlier
            db = tmp_path / f"crash{run}-{attempt}.db"
            killed_at = _killed_run(db, model, kill_at >> attempt)
            if killed_at < total:
                break
        if killed_at < total:
            interrupted += 1
            resumed = last_json(cli("resume", "ref", "--db", str(db)))
            assert resumed["status"] == "succeeded", (kill_at, resumed)
        actual = comparable(last_json(cli("export", "ref", "--db", str(db))))
        assert actual == expected, f"run {run} killed after {killed_at} events diverged"
    assert interrupted >= 6, "the runs finished before they could be killed; the test proved nothing"


def test_two_resumes_started_together_after_kill_nine_run_the_session_once(tmp_path: Path) -> None:
    """The issue's probe: two `resume` processes right after a kill -9 once both ran the session.
    One must run it; the other must be refused (or find it already ended), and the log must be the
    uninterrupted run's."""
    script = tmp_path / "long.json"
    script.write_text(json.dumps(long_script()))
    model = f"script:{script}"
    reference_db = tmp_path / "ref.db"
    assert last_json(cli("run", "--db", str(reference_db), "--task", TASK, "--model", model, "--id", "ref"))
    expected = comparable(last_json(cli("export", "ref", "--db", str(reference_db))))
    total = len(expected["events"])
    rng = random.Random(7)
    interrupted, count = 0, trials(12, 6)
    for trial in range(count):
        db = tmp_path / f"race{trial}.db"
        proc = spawn("run", "--db", str(db), "--task", TASK, "--model", model, "--id", "ref")
        kill_at = rng.randint(5, total // 2)
        deadline = time.monotonic() + 60
        while event_count(db, "ref") < kill_at and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert event_count(db, "ref") >= kill_at, f"trial {trial}: the run never reached event {kill_at}"
        proc.kill()
        proc.wait()
        # On a loaded machine the run can reach its end before the kill lands: then both resumes
        # find it ended, which is right, but that trial raced nothing.
        ended = event_count(db, "ref") == total
        interrupted += not ended
        resumers = [spawn("resume", "ref", "--db", str(db)) for _ in range(2)]
        outcomes = []
        for resumer in resumers:
            _out, err = resumer.communicate(timeout=120)
            outcomes.append((resumer.returncode, err.strip().splitlines()[-1] if err.strip() else ""))
        ran = [code for code, _ in outcomes if code == 0]
        refused = [line for code, line in outcomes if code == 2]
        assert (len(ran) >= 1 or ended) and len(ran) + len(refused) == 2, f"trial {trial}: {outcomes}"
        assert all("is being run by process" in line or "has ended" in line for line in refused), outcomes
        actual = comparable(last_json(cli("export", "ref", "--db", str(db))))
        assert actual == expected, f"trial {trial}: the log differs from an uninterrupted run's"
    assert interrupted >= count // 3, (
        f"only {interrupted} of {count} kills landed before the run's end: the probe raced too little"
    )
