"""The planner's exception tree.

PlannerError
├── InvalidTransition   a status change that the transition rules forbid (a bug, never user input)
├── EventOrderError     an event whose sequence number is not the next one
├── ModelOutputError    a model reply that is malformed or semantically wrong; retried by the engine
├── ModelUnavailable    the model could not be reached after its own retries; the session pauses
│   ├── ModelEnvelopeError  the endpoint answered, but not with a usable response (an HTML page, a
│   │                       cut-off body, impossible token counts); retried by the engine, then pauses
│   ├── ModelSettingRefused the API refused a setting it names (a 400): a configuration error, the session
│   │                       pauses with the API's sentence (defined in `planner.models.claude`)
│   └── ModelPriceUnknown   a model with no known price in a session with a cost cap: paused before the
│                           first call, until a price is given (defined in `planner.models.claude`)
├── ScriptError         a scripted-model file that cannot be used
├── InputError          a file or text that cannot be read (defined in `planner.inputs`, with the readers)
├── ActionSyntaxError   an action string of no form in the vocabulary (defined in `planner.actions`, with the parser)
├── RuleSyntaxError     a request rule written as text that cannot be read (defined in `planner.effects`)
├── BrowserUnavailable  no usable Chromium (defined in `planner.browser.chromium`, next to the code that finds one)
├── BrowserThreadError  a browser environment used from a thread other than its own (a bug; `planner.browser.driver`)
└── CommandRejected     an operator command that cannot be applied; its message is shown to a person

Subclasses defined elsewhere live next to the code that raises them; callers catch them by type,
or `PlannerError` for "anything the planner refused on purpose".
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CommandRejected",
    "EventOrderError",
    "InvalidTransition",
    "ModelEnvelopeError",
    "ModelOutputError",
    "ModelUnavailable",
    "PlannerError",
    "ScriptError",
]


class PlannerError(Exception):
    """Base of every error the planner raises on purpose."""


class InvalidTransition(PlannerError):
    """A status change the rules in `planner.status` do not allow."""


class EventOrderError(PlannerError):
    """An event applied out of sequence: state would silently diverge from the log."""


class ModelOutputError(PlannerError):
    """The model answered, but the answer cannot be used.

    `call` carries the recorded call (prompt, raw reply, usage) so the failed attempt is still logged.
    """

    def __init__(self, reason: str, call: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.call = call


class ModelUnavailable(PlannerError):
    """The model could not be reached after the transport's retries; resuming later may succeed."""


class ModelEnvelopeError(ModelUnavailable):
    """The model's endpoint answered, but with something that is not a usable response.

    A proxy's HTML error page, a body cut off mid-way or token counts no real answer has: the next
    attempt may well be fine, so the engine records the failed call and retries within its budget;
    an endpoint that keeps answering like that pauses the session, as `ModelUnavailable` does.
    `call` carries the prompt and the start of what came back, so the failed attempt is logged.
    """

    def __init__(self, reason: str, call: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.call = call


class ScriptError(PlannerError):
    """A scripted-model file is missing, unreadable or not of the documented shape."""


class CommandRejected(PlannerError):
    """An operator command that cannot be applied now; the message says why in plain words."""
