"""The client side of sessions: what the console and the CLI use to start, watch and command them.

`SessionClient` is the facade; `SessionView` one moment of a session; `Outcome` what became of a
command sent. The modules beside them are the client's tools (exports, reports, templates, re-asking
a model call, the attention inbox, Markdown escaping), all working from the log, none stepping a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner._lazy import lazy_exports

if TYPE_CHECKING:
    from sessions.backends import MODEL_HELP, default_model
    from sessions.client.client import SessionClient
    from sessions.client.outcomes import CommandRefused, Outcome, OutcomeKind
    from sessions.client.view import Follower, RunnerView, SessionView
    from sessions.store import SessionInfo

__all__ = [
    "MODEL_HELP",
    "CommandRefused",
    "Follower",
    "Outcome",
    "OutcomeKind",
    "RunnerView",
    "SessionClient",
    "SessionInfo",
    "SessionView",
    "default_model",
]

_HOME = {
    "MODEL_HELP": "sessions.backends",
    "default_model": "sessions.backends",
    "CommandRefused": "sessions.client.outcomes",
    "Follower": "sessions.client.view",
    "Outcome": "sessions.client.outcomes",
    "OutcomeKind": "sessions.client.outcomes",
    "RunnerView": "sessions.client.view",
    "SessionClient": "sessions.client.client",
    "SessionInfo": "sessions.store",
    "SessionView": "sessions.client.view",
}
"""Imported on first use: a tool module of the client (Markdown escaping, say) loads no database."""

__getattr__ = lazy_exports(__name__, _HOME, globals())
