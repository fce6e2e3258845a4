"""The models the planner can plan with: adapters that implement `planner.protocols.Model`.

- `claude`: Claude through the Anthropic SDK, one forced tool call per question (`prompts` writes the prompts);
- `offline`: the deterministic demo model that grounds plain-verb sub-goals in the live page;
- `scripted`: answers from a JSON script, for tests, rehearsals and benchmarks;
- `replay`: answers with what a recorded session's model answered.

They sit above the core: each depends on `planner.questions` and `planner.protocols`, and the core never
imports them, so the engine can be tested and run without any SDK. The pure models are imported eagerly;
`ClaudeModel` and `DEFAULT_MODEL` load on first use (module `__getattr__`), because importing the Anthropic
SDK takes seconds (3 s measured here) and only Claude sessions need it: `import planner.models.scripted`
never imports `anthropic`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from planner.models.offline import OfflineModel, Playbook
from planner.models.replay import ReplayModel, recorded_calls
from planner.models.scripted import Script, ScriptedModel, load_script

if TYPE_CHECKING:
    from planner.models.claude import DEFAULT_MODEL, ClaudeModel

__all__ = [
    "DEFAULT_MODEL",
    "ClaudeModel",
    "OfflineModel",
    "Playbook",
    "ReplayModel",
    "Script",
    "ScriptedModel",
    "load_script",
    "recorded_calls",
]

_LAZY = {"ClaudeModel": "planner.models.claude", "DEFAULT_MODEL": "planner.models.claude"}


def __getattr__(name: str) -> Any:
    """Load the Anthropic-backed names on first use, so importing this package stays free of the SDK."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
