"""Turn a session's recorded settings into the model and environment that run it.

A session stores its model spec (`script:PATH`, `demo`, ...) and, for scripts, the script itself,
so a resumed or forked session runs with exactly what it started with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from planner.browser.dry import DryEnvironment, is_dry
from planner.config import EngineConfig
from planner.engine import Guard
from planner.errors import PlannerError, ScriptError
from planner.events import Event
from planner.guard import GuardRules, make_guard
from planner.inputs import InputError, exists_as_file, parse_json, read_text_file, shown
from planner.models.capabilities import DEFAULT_MODEL, EFFORTS, Effort, Prices, family_of
from planner.models.offline import OfflineModel, Playbook
from planner.models.replay import ReplayModel, recorded_calls
from planner.models.scripted import Script, ScriptedModel, load_script
from planner.protocols import Environment, Model
from planner.state import SessionState, replay
from sessions.errors import UnknownModel
from sessions.store import EventStore, SessionNotFound, database_target
from sessions.store.artifacts import ArtifactStore

if TYPE_CHECKING:
    from planner.browser.server import BrowserEndpoint

__all__ = [
    "EFFORTS",
    "EFFORT_HELP",
    "MODEL_HELP",
    "PRICE_VARIABLES",
    "Backend",
    "ModelSpec",
    "artifacts_root",
    "build_backend",
    "default_model",
    "parse_model_spec",
    "prepare_model",
]

MODEL_HELP = (
    "demo (the offline demo model, default), script:PATH (a scripted model), claude or claude:MODEL_ID "
    "(the Claude API; needs ANTHROPIC_API_KEY) or replay:SESSION_ID / replay:TRACE.json (replays the answers "
    "a recorded session got, from the store or from a file written by `export`)"
)
EFFORT_HELP = (
    "how much a Claude model thinks on every call: " + ", ".join(EFFORTS) + " (default: medium on models "
    "that think by default, one level for the whole session so the prompt cache holds)"
)
MODEL_CHOICES = "demo, script:PATH, claude, claude:MODEL_ID, replay:SESSION_ID or replay:TRACE.json (see --help)"
"""The short form of MODEL_HELP, for an error message that must stay one line."""


_BROWSER_STATE = "browser-state.json"
"""Cookies and local storage of a session's browser, next to its screenshots; a resume starts from them."""


@dataclass
class Backend:
    model: Model
    env: Environment
    guard: Guard | None = None

    def close(self) -> None:
        self.env.close()


def artifacts_root(db: str | None) -> Path:
    """Screenshots live next to the database they belong to: the directory of the default store
    (`sessions.store.artifacts.LocalArtifacts`) for a database file, else var/artifacts."""
    target = str(database_target(db or None))
    if "://" in target:
        return Path("var/artifacts")
    return Path(target).expanduser().resolve().parent / "artifacts"


def default_model() -> str:
    """Claude when an API key is configured, otherwise the offline demo model."""
    return "claude" if os.environ.get("ANTHROPIC_API_KEY") else "demo"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A `--model` value read once: which backend, and its argument (a script path, a Claude model id
    or "" for the default one, a session id or trace file to replay)."""

    kind: Literal["demo", "script", "claude", "replay"]
    arg: str = ""


_WITH_ARG: tuple[Literal["script", "replay"], ...] = ("script", "replay")
"""The kinds written with their argument after a colon (`script:PATH`, `replay:SESSION`)."""


def parse_model_spec(spec: str) -> ModelSpec:
    """The one reading of the model-spec grammar (see `MODEL_HELP`); `UnknownModel` for anything else."""
    if spec == "demo":
        return ModelSpec("demo")
    if spec == "claude":
        return ModelSpec("claude")
    kind, colon, arg = spec.partition(":")
    if colon and kind in _WITH_ARG:
        return ModelSpec(kind, arg)
    if colon and kind == "claude" and arg:
        return ModelSpec("claude", arg)
    raise UnknownModel(f"unknown model '{shown(spec, 60)}'; use {MODEL_CHOICES}")


def prepare_model(
    spec: str,
    store: EventStore | None = None,
    *,
    playbook: Playbook | None = None,
    effort: str | None = None,
) -> dict[str, Any]:
    """Check a model spec up front and capture what a later resume needs, so a resume never reads a
    file that may have changed since: the script's content, the recorded answers of a replayed
    session (read from `store` or the default store), the demo model's `playbook` (None when the task is
    not a bundled one, which the session then says when the demo model cannot plan),
    or a Claude session's own effort level (`--effort`), checked against the model's family."""
    model = parse_model_spec(spec)
    if effort is not None:
        if model.kind != "claude":
            raise UnknownModel(f"--effort applies to Claude models only, not '{shown(spec, 60)}'; drop --effort")
        return {"effort": _checked_effort(model.arg or DEFAULT_MODEL, effort)}
    if model.kind == "script":
        return {"script": load_script(model.arg).model_dump(mode="json")}
    if model.kind == "replay":
        return {"calls": [call.to_json() for call in recorded_calls(_recorded_events(model.arg, store))]}
    if model.kind == "demo":
        return {"playbook": playbook.model_dump(mode="json") if playbook is not None else None}
    return {}


TRACE_LIMIT = 200_000_000
"""Bytes a trace file may have: a long Claude run with its prompts is tens of MB."""
MAX_SESSION_ID_CHARS = 200
"""Longer than any id a session can have; a longer replay source is not worth a database query."""


def _recorded_events(source_name: str, store: EventStore | None) -> list[Event]:
    from sessions.store.sql import open_store

    if not source_name.strip():
        raise UnknownModel("give a session id or a trace file after `replay:`, e.g. replay:3f2a9c1b7d4e")
    if source_name.endswith(".json") or "/" in source_name or exists_as_file(source_name):
        return _trace_events(source_name)
    if len(source_name) > MAX_SESSION_ID_CHARS:
        raise UnknownModel(f"cannot replay '{shown(source_name)}': no such session in the store")
    source = store or open_store()
    try:
        events = source.load(source_name)
    except SessionNotFound:
        events = []
    finally:
        if store is None:
            source.close()
    if not events:
        raise UnknownModel(f"cannot replay '{shown(source_name)}': no such session in the store")
    return events


def _trace_events(path: str) -> list[Event]:
    """The events of a trace file, as `python -m sessions export` writes it.

    The file comes from anywhere, so its events are folded here once: a log that does not fold
    (a missing field, a wrong type, events out of order) is refused now rather than mid-run.
    """
    name = shown(path)
    try:
        rows = parse_json(read_text_file(path, TRACE_LIMIT))["events"]
        events = [
            Event.from_data(row["seq"], row["kind"], row["node_id"], row["detail"], row.get("version", 1))
            for row in rows
        ]
        replay(events)
        return events
    except InputError as error:
        raise UnknownModel(f"cannot replay '{name}': {error}") from None
    except (PlannerError, ValueError, KeyError, TypeError, AttributeError) as error:
        problem = shown(error, 80)
        raise UnknownModel(f"cannot replay '{name}': not a trace written by `export` ({problem})") from None


def _checked_effort(model_id: str, effort: object) -> Effort:
    """`effort` if the model's family takes it (`planner.models.capabilities`), else one sentence saying which it takes."""
    family = family_of(model_id)
    if effort not in EFFORTS:
        raise UnknownModel(f"unknown effort '{shown(effort, 40)}'; use one of {', '.join(EFFORTS)}")
    if effort not in family.effort_levels:
        if not family.effort_levels:
            raise UnknownModel(f"{family.name} ({shown(model_id, 60)}) takes no effort setting; drop --effort")
        levels = ", ".join(family.effort_levels)
        raise UnknownModel(f"{family.name} ({shown(model_id, 60)}) takes effort {levels}, not {effort}")
    return effort


PRICE_VARIABLES = ("ANDOR_PRICE_IN", "ANDOR_PRICE_OUT")
"""The environment's input and output price of a Claude model, in USD per million tokens: used when the
session has none (`EngineConfig.model_prices`), read again on every resume."""


def _environment_prices() -> tuple[float, float] | None:
    """The prices in `PRICE_VARIABLES`, both or none; a value that is not a price is refused in a sentence."""
    values = [os.environ.get(name, "").strip() for name in PRICE_VARIABLES]
    if not any(values):
        return None
    try:
        rates = EngineConfig.model_validate({"model_prices": values}).model_prices
    except ValidationError:
        rates = None
    if rates is None:
        raise UnknownModel(
            f"{' and '.join(PRICE_VARIABLES)} must both be prices in USD per million tokens, above 0 and at most "
            f"1000 (got {shown(values[0], 20) or 'nothing'} and {shown(values[1], 20) or 'nothing'})"
        )
    return rates


def _model(state: SessionState) -> Model:
    spec = parse_model_spec(state.model)
    if spec.kind == "script":
        if "script" not in state.model_data:
            raise ScriptError("this session's script was not recorded; it cannot be resumed")
        return ScriptedModel(Script.model_validate(state.model_data["script"]), name=state.model)
    if spec.kind == "demo":
        # A session from before playbooks were recorded runs as one whose task has none: the model
        # says so when it cannot plan, rather than taking today's tasks file for the old one.
        recorded = state.model_data.get("playbook")
        return OfflineModel({state.task: Playbook.model_validate(recorded)} if recorded is not None else {})
    if spec.kind == "claude":
        from planner.models.claude import ClaudeModel  # the SDK import is slow; only Claude sessions pay it

        model_id = spec.arg or DEFAULT_MODEL
        recorded = state.model_data.get("effort")
        effort = _checked_effort(model_id, recorded) if recorded is not None else None
        rates = state.config.model_prices or _environment_prices()
        prices = Prices.from_rates(*rates) if rates is not None else None
        return ClaudeModel(
            model_id, effort=effort, prices=prices, needs_price=lambda: state.config.max_cost_usd is not None
        )
    if "calls" not in state.model_data:
        raise UnknownModel("this session's recorded answers were not captured; it cannot be resumed")
    return ReplayModel(state.model_data["calls"], name=state.model)


def build_backend(
    state: SessionState,
    artifacts: ArtifactStore | None = None,
    session_id: str | None = None,
    *,
    browser_endpoint: BrowserEndpoint | None = None,
) -> Backend:
    """The model and environment for a session, from what its first event recorded (the raw log's
    state: the environment types its declared secrets). The browser
    writes its screenshots and state into the session's directory of `artifacts` (none without it).
    `browser_endpoint` (a Playwright browser server's ws:// address, or what gives it) drives a
    Chromium elsewhere, or one shared by a worker's sessions, instead of launching one."""
    model = _model(state)
    start = state.start_url
    if is_dry(start):
        script = model.script if isinstance(model, ScriptedModel) else None
        fail = script.fail_actions if script is not None else []
        latency = script.latency if script is not None else None
        return Backend(model, DryEnvironment(fail, secrets=state.secrets.declared, latency=latency))
    from planner.browser.environment import BrowserEnvironment

    shots = artifacts.session_dir(session_id) if artifacts is not None and session_id else None
    storage = shots / _BROWSER_STATE if shots is not None else None
    rules = GuardRules(allowed_domains=list(state.config.allowed_domains))
    env = BrowserEnvironment(
        start or "",
        screenshot_dir=shots,
        storage_path=storage,
        allowed_domains=rules.allowed_domains,  # the fence behind the guard: the same hosts, enforced in the browser
        browser_endpoint=browser_endpoint,
        guard_rules=rules,  # the page's own confirm dialogs are held by the guard's name rule
        request_rules=state.config.request_rules,  # the effect fence's policy until the first action brings its own
        secrets=state.secrets.declared,  # typed where the model writes {{NAME}}, hidden from what it is sent
    )
    return Backend(model, env, make_guard(rules, start or ""))
