"""Durable step cost and big-session reads: `python -m bench.durable [--cli] [--repeat N]`.

Runs a scripted 1,041-node tree (a root AND of 40 AND children with 25 actions each) on the dry
environment twice: through the engine alone in memory, and through `Runner` on a SQLite file store,
where every step is committed before the next one starts. Prints milliseconds per step for both,
their ratio, and the database's growth (file plus WAL, after a checkpoint) and events per step.

With `--cli`, it also builds an ~11,000-event session and times `python -m sessions list`, `show`
and `export` as subprocesses (wall time, median of `--repeat`), with bare interpreter start-up for
reference. Figures only, no assertions: the machine it runs on decides them.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Kind
from planner.models.scripted import Script, ScriptedModel
from planner.state import Recorder, SessionState
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner

GOALS = {"ms_per_step": 0.5, "bytes_per_step": 1024, "list_s": 0.4, "show_s": 1.0, "export_s": 1.0}
ROOT = Path(__file__).resolve().parent.parent


def wide_script(groups: int = 40, actions: int = 25) -> tuple[dict[str, Any], int]:
    """A root AND of `groups` AND children with `actions` actions each: 1 + groups * (1 + actions) nodes."""
    nodes: dict[str, dict[str, Any]] = {"task": {"type": "AND", "children": [f"g{g}" for g in range(groups)]}}
    for g in range(groups):
        nodes[f"g{g}"] = {"type": "AND", "children": [f"g{g}.a{a}" for a in range(actions)]}
        for a in range(actions):
            nodes[f"g{g}.a{a}"] = {"type": "ACTION", "action": f"click [{g * actions + a}]"}
    return {"nodes": nodes}, 1 + groups * (1 + actions)


def engine_alone(script: dict[str, Any]) -> tuple[int, float]:
    """Steps and seconds for the engine on its own, events dropped as made (as the runner does)."""
    config = EngineConfig(max_steps=100_000, max_children=100)
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(
        Kind.SESSION_CREATED, task="task", start_url=DRY_START, model="script", config=config.model_dump(mode="json")
    )
    recorder.take()
    engine = Engine(state, ScriptedModel(Script.model_validate(script)), DryEnvironment())
    started = time.perf_counter()
    while engine.step():
        pass
    elapsed = time.perf_counter() - started
    assert state.status.value == "succeeded", state.reason
    return state.steps, elapsed


def _db_bytes(path: Path) -> int:
    """The database file plus its WAL after a passive checkpoint (what the session costs on disk)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def runner_durable(script: dict[str, Any], tmp: Path, session_id: str = "bench") -> tuple[int, float, int, int]:
    """Steps, seconds, bytes grown and events for the same tree through `Runner` on a SQLite file."""
    db = tmp / "durable.db"
    script_file = tmp / "script.json"
    script_file.write_text(json.dumps(script))
    store = SqlStore(database_url(db))
    create_session(
        store,
        "task",
        f"script:{script_file}",
        start_url=DRY_START,
        config=EngineConfig(max_steps=100_000, max_children=100),
        session_id=session_id,
    )
    before_bytes, before_seq = _db_bytes(db), store.session(session_id).last_seq
    backend = Backend(ScriptedModel(Script.model_validate(script)), DryEnvironment())
    runner = Runner(store, session_id, backend)
    started = time.perf_counter()
    state = runner.run()
    elapsed = time.perf_counter() - started
    assert state.status.value == "succeeded", state.reason
    events = store.session(session_id).last_seq - before_seq
    store.close()
    return state.steps, elapsed, _db_bytes(db) - before_bytes, events


def durable(repeat: int) -> None:
    script, nodes = wide_script()
    alone, ours, grown = [], [], []
    for _ in range(repeat):
        steps, seconds = engine_alone(script)
        alone.append(seconds * 1000 / steps)
        with tempfile.TemporaryDirectory() as tmp:
            run_steps, run_seconds, size, events = runner_durable(script, Path(tmp))
        ours.append(run_seconds * 1000 / run_steps)
        grown.append(size / run_steps)
    engine_ms, runner_ms, per_step = (statistics.median(v) for v in (alone, ours, grown))
    print(f"tree: {nodes:,} nodes, {steps:,} steps, {events / run_steps:.2f} events/step (median of {repeat})")
    print(f"engine alone (memory):         {engine_ms:.3f} ms/step")
    print(
        f"runner, SQLite file, durable:  {runner_ms:.3f} ms/step (goal <= {GOALS['ms_per_step']}), "
        f"{runner_ms / engine_ms:.1f}x the engine alone"
    )
    print(f"database growth:               {per_step:,.0f} bytes/step (goal <= {GOALS['bytes_per_step']:,})")


def _timed(args: list[str], env: dict[str, str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(args, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=600)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cli(repeat: int) -> None:
    """Time the read subcommands on an ~11,000-event session made by the runner itself."""
    script, _ = wide_script(groups=72, actions=25)  # ~3,750 steps, ~11,200 events
    with tempfile.TemporaryDirectory() as tmp:
        steps, _, _, events = runner_durable(script, Path(tmp), session_id="big")
        db = str(Path(tmp) / "durable.db")
        env = {**os.environ, "ANDOR_DB": db}
        python = [sys.executable]
        startup = _timed([*python, "-c", "pass"], env, repeat)
        figures = {
            "list": _timed([*python, "-m", "sessions", "list"], env, repeat),
            "show": _timed([*python, "-m", "sessions", "show", "big"], env, repeat),
            "export": _timed([*python, "-m", "sessions", "export", "big"], env, repeat),
        }
    print(f"session: {events + 2:,} events, {steps:,} steps; wall time, median of {repeat}")
    print(f"python -c pass (start-up):     {startup:.2f} s")
    for name, seconds in figures.items():
        print(f"python -m sessions {name:<7}:   {seconds:.2f} s (goal <= {GOALS[f'{name}_s']} s)")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.durable", description=__doc__.splitlines()[0])
    parser.add_argument("--cli", action="store_true", help="also time list/show/export on an ~11,000-event session")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is printed")
    args = parser.parse_args()
    durable(args.repeat)
    if args.cli:
        cli(args.repeat)


if __name__ == "__main__":
    main()
