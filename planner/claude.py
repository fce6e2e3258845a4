"""The Claude backend: each planner operator is one Messages API call answered by a forced tool call.

Why a forced tool call: the tool's `input_schema` is the pydantic output's JSON schema, so the
model answers in exactly the shape `planner.operators` validates, and we never parse free text.

Why every request carries all six tools and the same system text: together with the task they
form one prefix shared by every operator of a session, marked with `cache_control`. A prefix per
operator would be shorter than the minimum the API caches (1,024-4,096 tokens, by model) and so
never be cached; the shared one is, and every later call reads it. Only the volatile part (which
operator, the tree context, the page observation) is billed at the full rate. `tool_choice`
forces the one tool the operator answers with. For a model whose cache minimum is longer than
that prefix (`CACHE_MINIMUM`), caching cannot work, so each call sends just its own operator's tool
and instructions, uncached: the smallest request is then the cheapest.

Failures map onto the engine's two error kinds: an answer that does not validate, or a request the
API refuses as malformed (HTTP 400/413/422, which no retry can fix), raises `ModelOutputError` (the
engine retries, then fails the node with the reason); an API that still cannot be reached after the
SDK's own retries, or that rejects the key or the model id, raises `ModelUnavailable` (the engine
pauses the session and `resume` tries again once the cause is fixed). The API key is read by the SDK from ANTHROPIC_API_KEY and never
appears in prompts, call records or error messages.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, TypeVar

import anthropic
from pydantic import BaseModel, ValidationError

from planner.errors import ModelOutputError, ModelUnavailable
from planner.operators import (
    CallRecord,
    Completion,
    Constraints,
    Expansion,
    FinalAnswer,
    Observation,
    Repair,
    Reply,
    View,
)
from planner.prompts import PROMPTS, SYSTEM, render_task, render_user, system_text

__all__ = ["ClaudeModel", "DEFAULT_MODEL", "PRICES", "CACHE_MINIMUM", "estimate_cost", "cache_minimum"]

DEFAULT_MODEL = "claude-sonnet-4-6"
"""A current model the SDK knows and does not flag as deprecated."""

_MAX_TOKENS = 2048

_TOOLS = [
    {"name": p.tool, "description": p.tool_description, "input_schema": p.output.model_json_schema()}
    for p in PROMPTS.values()
]
"""Every operator's tool, in a fixed order, so the tool list is part of the shared cached prefix."""

CACHE_MINIMUM: dict[str, int] = {
    "claude-sonnet-4-6": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
}
"""Shortest prefix, in tokens, the API caches for a model (longest matching prefix of the id; other
models: 1,024). Below it `cache_control` is silently ignored; `bench.tokens` checks our prefix."""

_PREFIX_TOKENS = (len(SYSTEM) + len(json.dumps(_TOOLS))) // 4
"""The shared prefix's size in tokens, estimated at four characters a token (the task adds a few more)."""

_REQUEST_REFUSED = frozenset({400, 413, 422})
"""Statuses that reject the request itself: the same request fails again, so the node fails, the session does not pause."""

PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-8": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-7": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-1": (15.0, 75.0, 18.75, 1.50),
    "claude-opus-4-2025": (15.0, 75.0, 18.75, 1.50),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.30),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku": (0.80, 4.0, 1.0, 0.08),
}
"""USD per million tokens: (input, output, cache write, cache read). An *estimate* from list prices;
the invoice is authoritative. Looked up by longest matching prefix, so dated ids resolve too; a
model missing here is recorded with cost 0.0 (unknown), never guessed."""

OutputT = TypeVar("OutputT", bound=BaseModel)


def cache_minimum(model: str) -> int:
    """The shortest prefix in tokens that `model` caches (see `CACHE_MINIMUM`)."""
    key = max((k for k in CACHE_MINIMUM if model.startswith(k)), key=len, default=None)
    return CACHE_MINIMUM[key] if key is not None else 1024


def estimate_cost(model: str, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
    """Estimated USD for one call; 0.0 for a model missing from `PRICES` (unknown, not free)."""
    key = max((k for k in PRICES if model.startswith(k)), key=len, default=None)
    if key is None:
        return 0.0
    price_in, price_out, price_write, price_read = PRICES[key]
    total = input_tokens * price_in + output_tokens * price_out + cache_write * price_write + cache_read * price_read
    return round(total / 1_000_000, 8)


class ClaudeModel:
    """Implements `planner.protocols.Model` on the Anthropic Messages API."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        timeout: float = 60,
        max_retries: int = 3,
        client: anthropic.Anthropic | None = None,
    ) -> None:
        self.model = model
        self.name = f"claude:{model}"
        self.max_retries = max_retries
        self.shared_prefix = _PREFIX_TOKENS >= cache_minimum(model)
        self._client = client or anthropic.Anthropic(base_url=base_url, timeout=timeout, max_retries=max_retries)

    # -- operators ----------------------------------------------------------------------------------

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        return self._call("constraints", view, Constraints)

    def expand(self, view: View) -> Reply[Expansion]:
        return self._call("expand", view, Expansion)

    def repair(self, view: View, reason: str) -> Reply[Repair]:
        return self._call("repair", view, Repair, detail=reason)

    def check_completion(self, view: View) -> Reply[Completion]:
        return self._call("complete", view, Completion)

    def observe(self, view: View, action: str) -> Reply[Observation]:
        return self._call("observe", view, Observation, detail=action)

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        return self._call("final_answer", view, FinalAnswer)

    # -- one call -----------------------------------------------------------------------------------

    def request(self, operator: str, view: View, detail: str = "") -> dict[str, Any]:
        """The Messages API arguments for one operator call (public so benchmarks can size prompts)."""
        tool = PROMPTS[operator].tool
        system: dict[str, Any] = {"type": "text", "text": SYSTEM}
        task: dict[str, Any] = {"type": "text", "text": render_task(view)}
        tools = _TOOLS
        if self.shared_prefix:
            system["cache_control"] = task["cache_control"] = {"type": "ephemeral"}
        else:
            system["text"] = system_text(operator)
            tools = [t for t in _TOOLS if t["name"] == tool]
        return {
            "model": self.model,
            "max_tokens": _MAX_TOKENS,
            "system": [system],
            "messages": [
                {
                    "role": "user",
                    "content": [task, {"type": "text", "text": render_user(operator, view, detail=detail)}],
                }
            ],
            "tools": tools,
            "tool_choice": {"type": "tool", "name": tool},
        }

    def _call(self, operator: str, view: View, output: type[OutputT], detail: str = "") -> Reply[OutputT]:
        params = self.request(operator, view, detail)
        user = params["messages"][0]["content"]
        call = CallRecord(prompt=f"[system: {operator} instructions]\n\n{user[0]['text']}\n\n{user[1]['text']}")
        started = time.perf_counter()
        try:
            response = self._client.messages.create(**params)
        except anthropic.APIStatusError as error:
            if error.status_code in _REQUEST_REFUSED:
                call.raw = _scrub(str(error.body))
                raise ModelOutputError(self._status_message(error), call) from None
            raise ModelUnavailable(self._status_message(error)) from None
        except anthropic.APITimeoutError:
            raise ModelUnavailable(
                f"the Claude API did not answer within the timeout after {self.max_retries} retries; "
                "check the network and resume the session"
            ) from None
        except anthropic.APIConnectionError as error:
            raise ModelUnavailable(
                f"cannot reach the Claude API at {self._client.base_url} after {self.max_retries} retries "
                f"({_scrub(str(error.__cause__ or error))}); check the network and resume the session"
            ) from None
        except TypeError as error:
            if "authentication" in str(error):
                raise ModelUnavailable("no API key: set ANTHROPIC_API_KEY and resume the session") from None
            raise
        call.latency_ms = round((time.perf_counter() - started) * 1000, 3)
        call.usage = self._usage(response.usage)
        tool = PROMPTS[operator].tool
        block = next((b for b in response.content if b.type == "tool_use" and b.name == tool), None)
        if block is None:
            call.raw = "".join(getattr(b, "text", "") for b in response.content)
            raise ModelOutputError(f"the model did not call the {tool} tool (stop reason {response.stop_reason})", call)
        call.raw = json.dumps(block.input, ensure_ascii=False)
        if response.stop_reason == "max_tokens":
            raise ModelOutputError(f"the {tool} answer was cut off at {_MAX_TOKENS} output tokens", call)
        try:
            return Reply(output.model_validate(block.input), call)
        except ValidationError as error:
            raise ModelOutputError(f"invalid {tool} answer: {_explain(error)}", call) from None

    def _usage(self, usage: Any) -> dict[str, Any]:
        """Token counts in the engine's metric names, with an estimated cost."""
        counts = {
            "input_tokens": usage.input_tokens or 0,
            "output_tokens": usage.output_tokens or 0,
            "cache_read_tokens": getattr(usage, "cache_read_input_tokens", None) or 0,
            "cache_write_tokens": getattr(usage, "cache_creation_input_tokens", None) or 0,
        }
        counts["cost_usd"] = estimate_cost(
            self.model,
            counts["input_tokens"],
            counts["output_tokens"],
            counts["cache_write_tokens"],
            counts["cache_read_tokens"],
        )
        return counts

    def _status_message(self, error: anthropic.APIStatusError) -> str:
        status = error.status_code
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("error", {}).get("message", "") if isinstance(body.get("error"), dict) else ""
        if status == 401:
            advice = "the API key was rejected: check ANTHROPIC_API_KEY and resume the session"
        elif status == 403:
            advice = "the API key may not use this model: check its permissions and resume"
        elif status == 404:
            advice = f"the API has no model {self.model!r}: check the id; start the task again with --model claude:<id>"
        elif status in (429, 529) or status >= 500:
            advice = f"still failing after {self.max_retries} retries: wait a little and resume the session"
        elif status in _REQUEST_REFUSED:
            advice = "the API refused this request as it was built (too long or malformed)"
        else:
            advice = "the request was refused: check the model id and resume"
        detail = f": {_scrub(detail)}" if detail else ""
        return f"Claude API returned HTTP {status}{detail}; {advice}"


def _explain(error: ValidationError) -> str:
    """A short, readable account of what was wrong with the tool input."""
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "answer"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def _scrub(text: str) -> str:
    """Belt and braces: the key never belongs in a message, even if a server echoes it back."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    return text.replace(key, "[redacted]") if key else text
