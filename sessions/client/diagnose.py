"""Diagnose a finished session and store the diagnosis with it (`python -m sessions diagnose ID`).

The diagnosis is one `diagnosed` event appended to the session's log. That is the only event a
finished session ever takes from outside its runner, and only once the runner has let go of it (no
lease holder), so the append can never race the runner's last writes; a session that is still
running or paused is refused with a sentence saying so.

`--model demo` (and the scripted and replay models, which cannot reason about a run) use the offline
rules of `planner.diagnosis`; `claude` / `claude:MODEL_ID` ask Claude, retrying a diagnosis that is
malformed or cites a step or node the run does not have.
"""

from __future__ import annotations

import json
import time
from typing import Any

from planner.diagnosis import DiagnosisRun, diagnose, offline_diagnosis, trajectory
from planner.events import Diagnosed, Event, Kind
from planner.models.capabilities import DEFAULT_MODEL
from planner.state import replay
from sessions.backends import parse_model_spec
from sessions.store import EventStore
from sessions.store.reading import ended, load_events

__all__ = ["diagnose_command", "diagnose_session"]


def diagnose_session(
    store: EventStore, session_id: str, model: str = "demo", *, retries: int | None = None, base_url: str | None = None
) -> Diagnosed:
    """Diagnose `session_id` with `model` (a `--model` spec) and append the result; returns what was stored.

    A diagnosis that fails (bad answers until the retries ran out) is stored too, with its reason, so
    the attempt and its cost are on record. `retries` defaults to the session's retry budget for model answers (`expansion_retries`).
    """
    spec = parse_model_spec(model)
    info = ended(store, session_id, "diagnose it once it has succeeded or failed")
    events = load_events(store, session_id)  # masked: the model diagnosing it is shown no secret
    state = replay(events)
    if spec.kind == "claude":
        from planner.models.claude import ClaudeModel

        claude = ClaudeModel(spec.arg or DEFAULT_MODEL, base_url=base_url)
        run = diagnose(
            claude.diagnose, trajectory(state, events), state.config.expansion_retries if retries is None else retries
        )
    else:
        run = DiagnosisRun(offline_diagnosis(state, events), None, 1)
    payload = Diagnosed(
        model=model, diagnosis=run.diagnosis, error=run.error, attempts=run.attempts, usage=list(run.usage)
    )
    event = Event(state.seq + 1, Kind.DIAGNOSED, None, payload, payload.VERSION, time.time())
    store.append(session_id, [event], status=info.status, reason=info.reason, steps=info.steps, cause=info.cause)
    return payload


def diagnose_command(store: EventStore, session_id: str, model: str = "demo") -> tuple[str, int]:
    """The CLI's `diagnose`: (the last stdout line, the exit code). 0 with a diagnosis, 1 when it failed.

    Errors of the sessions and planner trees propagate for the CLI's usual one-sentence handling.
    """
    stored = diagnose_session(store, session_id, model)
    line: dict[str, Any] = {"session_id": session_id, "model": model, "attempts": stored.attempts}
    if stored.diagnosis is None:
        line["error"] = stored.error
        return json.dumps(line), 1
    line["diagnosis"] = stored.diagnosis.model_dump(mode="json")
    return json.dumps(line, ensure_ascii=False), 0
