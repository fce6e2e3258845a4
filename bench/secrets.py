"""What masking costs a reader: `python -m bench.secrets [--repeat N]`.

A 1,000-event session like a Claude run's (every model call records its prompt, about 6 KB, and every
page its observation, about 3 KB), whose task spells out a password the agent then types into a password
field. Prints, the fastest of `--repeat` runs each: reading the log from SQLite, folding it, and masking
it (`Secrets.mask_event` over every event), for the session as it is and for the same log without its
secret (which must cost nothing: the same events come back).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ElementInfo, Page
from planner.questions import CallRecord, Reply
from planner.secrets import Secrets, secrets_in
from planner.state import Recorder, SessionState, replay
from sessions.store.sql import SqlStore, database_url

PASSWORD = "demo-pass-123"
TASK = f"Sign in with the password {PASSWORD}, then visit every page of the shop"
_FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "


class _Prompting:
    """The scripted model, recording a prompt of about 6 KB per call, as the Claude adapter does."""

    name = "script"

    def __init__(self, script: Script) -> None:
        self._inner = ScriptedModel(script)

    def __getattr__(self, question: str) -> Callable[..., Reply[Any]]:
        answer = getattr(self._inner, question)

        def asked(view: Any, *rest: Any) -> Reply[Any]:
            prompt = f"{view.task}\n## Current page\n{view.observation}\n" + _FILLER * 40
            return Reply(answer(view, *rest).output, CallRecord(prompt=prompt, raw='{"summary": "a page"}'))

        return asked


class _Shop(DryEnvironment):
    """Pages of about 3 KB, element 3 a password field."""

    def observe(self) -> Page:
        return Page(url=self.url, title="shop", text=f"(at {self.url})\n" + _FILLER * 36)

    def target(self, action: str) -> ElementInfo | None:
        return ElementInfo(role="textbox", name="Password", input_type="password") if "[3]" in action else None


def session_log(events: int = 1000) -> list[Event]:
    """A scripted run of about `events` events that types the task's password into a password field first."""
    sections = max(1, events // 150)
    nodes: dict[str, Any] = {TASK: {"type": "AND", "children": ["sign in", *(f"section {s}" for s in range(sections))]}}
    nodes["sign in"] = {"type": "ACTION", "action": f"type [3] [{PASSWORD}] [1]"}
    for section in range(sections):
        pages = [f"visit page {section}.{i}" for i in range(25)]
        nodes[f"section {section}"] = {"type": "AND", "children": pages}
        nodes.update({page: {"type": "ACTION", "action": f"click [{10 + i}]"} for i, page in enumerate(pages)})
    state = SessionState()
    recorder = Recorder(state)
    config = EngineConfig(max_steps=100_000, guard=False, lookahead=0)
    recorder.record(
        Kind.SESSION_CREATED, task=TASK, start_url=DRY_START, model="script", config=config.model_dump(mode="json")
    )
    log = recorder.take()
    engine = Engine(state, _Prompting(Script.model_validate({"nodes": nodes})), _Shop())
    while (made := engine.step()) and len(log) < events:
        log += made
    return log[:events]


def _fastest(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.secrets", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    log = session_log()
    secrets = secrets_in(log)
    assert secrets.found == {PASSWORD}, "the run typed the password into the password field"
    holding = sum(PASSWORD in e.payload.model_dump_json() for e in log)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore(database_url(Path(tmp) / "bench.db"))
        store.create_session("bench", TASK, "script", log, status="running")
        read = _fastest(args.repeat, lambda: store.load("bench"))
        store.close()
    fold = _fastest(args.repeat, lambda: replay(log))
    masked = _fastest(args.repeat, lambda: [secrets.mask_event(e) for e in log])
    none = Secrets()
    plain = _fastest(args.repeat, lambda: [none.mask_event(e) for e in log])
    assert all(PASSWORD not in secrets.mask_event(e).payload.model_dump_json() for e in log)
    print(f"{len(log)} events, {holding} holding the password")
    print(f"read from SQLite      {read:8.1f} ms")
    print(f"fold                  {fold:8.1f} ms")
    print(f"mask (one password)   {masked:8.1f} ms")
    print(f"mask (no secrets)     {plain:8.3f} ms")


if __name__ == "__main__":
    main()
