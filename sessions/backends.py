"""Turn a session's recorded settings into the model and environment that run it.

A session stores its model spec (`script:PATH`, `demo`, ...) and, for scripts, the script itself,
so a resumed or forked session runs with exactly what it started with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.dry import DryEnvironment, is_dry
from planner.engine import Guard
from planner.errors import ScriptError
from planner.protocols import Environment, Model
from planner.scripted import Script, ScriptedModel, load_script
from planner.state import SessionState

__all__ = ["Backend", "prepare_model", "build_backend", "UnknownModel"]


class UnknownModel(ValueError):
    """A --model value that names no backend."""


@dataclass
class Backend:
    model: Model
    env: Environment
    guard: Guard | None = None

    def close(self) -> None:
        self.env.close()


def prepare_model(spec: str) -> dict[str, Any]:
    """Check a model spec up front and capture what a later resume needs (the script's content)."""
    if spec.startswith("script:"):
        script = load_script(spec.removeprefix("script:"))
        return {"script": script.model_dump(mode="json")}
    if spec in ("demo",):
        return {}
    raise UnknownModel(f"unknown model {spec!r}; use script:PATH or demo")


def build_backend(state: SessionState, artifacts: str | None = None) -> Backend:
    """The model and environment for a session, from what its first event recorded."""
    spec = state.model
    extra = state.model_data
    if spec.startswith("script:"):
        if "script" not in extra:
            raise ScriptError("this session's script was not recorded; it cannot be resumed")
        script = Script.model_validate(extra["script"])
        model: Model = ScriptedModel(script, name=spec)
        if is_dry(state.start_url):
            return Backend(model, DryEnvironment(script.fail_actions))
        return Backend(model, _browser(state, artifacts))
    raise UnknownModel(f"unknown model {spec!r}")


def _browser(state: SessionState, artifacts: str | None) -> Environment:
    raise UnknownModel("browser sessions are not available yet")
