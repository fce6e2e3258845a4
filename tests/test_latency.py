"""Simulated latency (`planner.latency`): a scripted model and the dry environment that take as long as
real ones, the same for the same question on a resume, as long-tailed as a hosted model."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from planner.browser.dry import DryEnvironment
from planner.errors import ScriptError
from planner.events import ModelCalled
from planner.latency import Latency
from planner.models.scripted import load_script
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner

TASK = "check two products"
SCRIPT = {
    "nodes": {
        TASK: {"type": "AND", "children": ["open 1", "note 1"]},
        "open 1": {"type": "ACTION", "action": "click [1]"},
        "note 1": {"type": "ACTION", "action": "note [checked]"},
    },
    "final_answer": "checked",
}


def test_a_delay_depends_on_the_seed_and_the_question_never_on_how_often_it_was_asked() -> None:
    latency = Latency(seed=4)
    assert latency.model_delay("expand", "n3") == latency.model_delay("expand", "n3")
    assert latency.model_delay("expand", "n3") != latency.model_delay("observe", "n3")
    assert latency.model_delay("expand", "n3") != Latency(seed=5).model_delay("expand", "n3")
    assert Latency(model_median_s=0).model_delay("expand", "n3") == 0
    assert Latency(action_median_s=0).action_delay("click [1]") == 0


def test_delays_have_the_median_and_the_long_tail_asked_for() -> None:
    delays = [Latency(seed=seed).model_delay("expand", f"n{n}") for seed in range(40) for n in range(50)]
    percentiles = statistics.quantiles(delays, n=100)
    assert 2.7 < statistics.median(delays) < 3.3
    assert 3.5 < percentiles[98] / statistics.median(delays) < 7, "spread 0.7: the 99th percentile at ~5x the median"
    assert max(Latency(max_s=4, seed=s).model_delay("expand", "n1") for s in range(200)) == 4


def test_the_dry_environment_waits_for_an_action_but_not_for_a_note() -> None:
    env = DryEnvironment(latency=Latency(action_median_s=0.2, action_spread=0))
    started = time.monotonic()
    assert env.execute("click [1]").ok
    clicked = time.monotonic() - started
    started = time.monotonic()
    assert env.execute("note [seen]").ok
    noted = time.monotonic() - started
    assert clicked >= 0.2 and noted < 0.1, (clicked, noted)


def test_a_scripted_session_takes_its_delays_at_every_model_call(tmp_path: Path) -> None:
    latency = Latency(model_median_s=0.05, model_spread=0, action_median_s=0.05, action_spread=0)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({**SCRIPT, "latency": latency.model_dump()}))
    store = SqlStore("sqlite://")
    session_id = create_session(store, TASK, f"script:{script}", start_url="dry://start")
    Runner(store, session_id).run()
    calls = [e.payload for e in store.load(session_id) if isinstance(e.payload, ModelCalled)]
    assert store.session(session_id).status == "succeeded"
    assert calls and all(call.latency_ms >= 50 for call in calls), [call.latency_ms for call in calls]
    store.close()


def test_a_script_with_an_impossible_latency_is_refused_in_a_sentence() -> None:
    with pytest.raises(ScriptError, match="latency"):
        load_script(json.dumps({**SCRIPT, "latency": {"model_median_s": -1}}))
