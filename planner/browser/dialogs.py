"""How an environment answers a page's own dialogs (`alert`, `confirm`, `prompt`, `beforeunload`).

A browser driven by Playwright dismisses every dialog nobody handles, so a `confirm` silently
answers "cancel" and neither the agent nor the operator learns what the page asked. Here every
dialog is answered and reported: an alert is accepted, a confirm or prompt whose message is harmless
is accepted (a prompt with its default answer), and one whose message holds a risky term by the
guard's name rule (`GuardRules.risky_term`, the rule element names are held by) is dismissed unless
an operator approved the action that caused it. Pure policy, no browser, so the real and the dry
environment answer alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.guard import GuardRules

__all__ = ["DialogAnswer", "answer_dialog"]

_SHOWN_LIMIT = 200
"""A longer message is clamped in reports (the page's own text, shown to a model and an operator)."""


@dataclass(frozen=True, slots=True)
class DialogAnswer:
    """What to do with one dialog, and what to tell about it.

    `accept` (with `text`, a prompt's answer); `report`, one sentence for the action's result and the
    observation; `held`, set when the dialog was dismissed for want of approval: the phrase an
    operator is asked to approve ("the page asked to confirm 'Delete your account?', which matches
    'delete'").
    """

    accept: bool
    report: str
    text: str | None = None
    held: str | None = None


def _quoted(text: str) -> str:
    shown = " ".join(text.split())
    if len(shown) > _SHOWN_LIMIT:
        shown = shown[: _SHOWN_LIMIT - 1] + "…"
    return f"'{shown}'"


def answer_dialog(kind: str, message: str, default: str, rules: GuardRules, approved: bool) -> DialogAnswer:
    """Answer a dialog of `kind` (Playwright's `Dialog.type`) showing `message`; `default` is a
    prompt's default answer, `approved` says an operator approved the action that opened it."""
    if kind == "alert":
        return DialogAnswer(True, f"the page showed an alert: {_quoted(message)}; accepted")
    if kind == "prompt":
        asked = f"the page asked for an answer to {_quoted(message)}"
        answered = f"answered {_quoted(default)}" if default else "answered with an empty text"
    elif kind == "beforeunload":
        asked = "the page asked to confirm leaving it" + (f": {_quoted(message)}" if message.strip() else "")
        answered = "accepted"
    else:
        asked, answered = f"the page asked to confirm {_quoted(message)}", "accepted"
    text = default if kind == "prompt" else None
    term = rules.risky_term(message)
    if term is None:
        return DialogAnswer(True, f"{asked}; {answered}", text)
    if approved:
        return DialogAnswer(True, f"{asked}; {answered}, as an operator approved the action", text)
    return DialogAnswer(
        False,
        f"{asked}; dismissed, since accepting it needs an operator's approval",
        held=f"{asked}, which matches {term!r}",
    )
