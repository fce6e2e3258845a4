"""The Claude backend: each planner question is one Messages API call answered by a tool call.

Why a tool call: the tool's `input_schema` is the pydantic output's JSON schema, so the model
answers in exactly the shape `planner.questions` validates, and we never parse free text. Not
structured outputs, whose schema per question would split the prompt cache, nor strict tools, which
would reduce the free-form maps of `Observation.rewrite` and `Candidate.fields` to empty objects.

Why every request carries all six tools and the same system text: they form one prefix shared by
every question of a session, long enough for the API to cache. What a request may carry depends on
the model family (`planner.models.capabilities`); a setting a family refuses is never sent.

An answer that does not validate is a `ModelOutputError` (retried, then the node fails); a refused
setting (`ModelSettingRefused`) or an unreachable API (`ModelUnavailable`) pauses the session; a
body that is not a Messages response is a `ModelEnvelopeError` (retried, then the session pauses).

The API key is read by the SDK from ANTHROPIC_API_KEY and never appears in prompts, call records or
error messages. (docs/architecture.md, "planner/models/claude.py")
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anthropic
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner.diagnosis import Trajectory
from planner.errors import ModelEnvelopeError, ModelOutputError, ModelUnavailable
from planner.models.capabilities import DEFAULT_MODEL, Effort, Family, Prices, family_of, is_known
from planner.models.prompts import (
    DIAGNOSIS_SYSTEM,
    DIAGNOSIS_TOOL,
    PROMPTS,
    SYSTEM,
    render_diagnosis,
    render_task,
    render_user,
    system_text,
)
from planner.questions import (
    CallRecord,
    Completion,
    Constraints,
    Diagnosis,
    Expansion,
    FinalAnswer,
    Observation,
    Question,
    Repair,
    Reply,
    View,
)

__all__ = [
    "DEFAULT_MODEL",
    "SESSION_EFFORT",
    "ClaudeModel",
    "ModelPriceUnknown",
    "ModelSettingRefused",
    "estimate_cost",
    "prefix_tokens",
]

SESSION_EFFORT: Effort = "medium"
"""The one effort of every call of a session on a model that thinks by default, unless the session
sets its own. One level for all questions keeps the cached prefix shared (the effort is part of the
cache key); medium because decomposing and repairing are where thinking pays, and it is the default
of Opus 5.5 and Haiku 5.5 themselves (low for reading pages cost a cache write on every switch)."""

_MAX_TOKENS = 2048
"""Output tokens for the answer itself: a whole expansion of `MAX_CHILDREN` sub-goals fits."""

_MAX_TIMEOUT = 600.0
"""Longest wait for one answer, in seconds: the SDK's limit for a request that is not streamed."""

_log = logging.getLogger(__name__)

_TOOLS = [
    {"name": p.tool, "description": p.tool_description, "input_schema": p.output.model_json_schema()}
    for p in PROMPTS.values()
]
"""Every question's tool, in a fixed order, so the tool list is part of the shared cached prefix."""

_PREFIX_CHARS = len(SYSTEM) + len(json.dumps(_TOOLS))
"""The shared prefix's size in characters (the task adds a few more)."""


def prefix_tokens(family: Family) -> int:
    """The shared prefix's size in `family`'s tokens, estimated from its characters per token."""
    return round(_PREFIX_CHARS * family.tokens_per_char)


_MAX_BODY = 1_000_000
"""Largest response body read, in bytes: an answer of `_MAX_TOKENS` tokens is a few kilobytes."""

_MAX_USAGE = 10_000_000
"""Largest token count believed for one field of one call: ten times the longest context of any model."""

_RAW_SHOWN = 500
"""Characters of an unusable body kept in the call record."""

_RAW_KEPT = 20_000
"""Characters of an answer kept in the call record: a whole `_MAX_TOKENS` answer, never a runaway one."""

_REQUEST_REFUSED = frozenset({400, 413, 422})
"""Statuses that reject the request itself: the same request fails again, so the node fails, the session does not pause."""

OutputT = TypeVar("OutputT", bound=BaseModel)


class ModelSettingRefused(ModelUnavailable):
    """The API refused a setting of the request (HTTP 400 naming it): no node and no retry can fix
    that, so the session pauses with the API's own sentence until the setting is changed."""


class ModelPriceUnknown(ModelUnavailable):
    """A session with a cost cap would call a model whose price is unknown: it pauses before the call
    until the session has a price, so the cap is never spent blind."""


def estimate_cost(model: str, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
    """Estimated USD for one call from the family's list prices; 0.0 for a model whose prices the
    capability table does not know (unknown, not free)."""
    prices = family_of(model).prices
    return prices.cost(input_tokens, output_tokens, cache_write, cache_read) if prices is not None else 0.0


_Tokens = Annotated[int, Field(strict=True, ge=0, le=_MAX_USAGE)]


class _Usage(BaseModel):
    """The token counts of one answer; a count that is not a whole number in [0, `_MAX_USAGE`] is refused."""

    input_tokens: _Tokens
    output_tokens: _Tokens
    cache_creation_input_tokens: _Tokens | None = None
    cache_read_input_tokens: _Tokens | None = None


class _Block(BaseModel):
    """One content block; only text, thinking and tool calls are read, blocks of other types are passed over."""

    type: str
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    input: Any = None

    @model_validator(mode="after")
    def _tool_call_shape(self) -> _Block:
        if self.type == "tool_use" and (not isinstance(self.name, str) or not isinstance(self.input, dict)):
            raise ValueError("a tool_use block needs a name and an object as input")
        return self


class _Message(BaseModel):
    """The parts of a Messages API response this backend uses; other fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["message"]
    content: list[_Block]
    stop_reason: str | None = None
    usage: _Usage


class ClaudeModel:
    """Implements `planner.protocols.Model` on the Anthropic Messages API."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        effort: Effort | None = None,
        prices: Prices | None = None,
        needs_price: Callable[[], bool] = lambda: False,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int = 3,
        client: anthropic.Anthropic | None = None,
    ) -> None:
        """`effort` is the session's own effort for every call; it must be one of the family's levels
        (`sessions.backends` checks a user's choice first and says so in a sentence; here it is a bug).
        `prices` replace the table's (a model it does not know, or a price that changed);
        `needs_price` says whether the session has a cost cap now (an operator may set one mid-run): a
        call without any price then pauses instead.
        `timeout` is how long to wait for an answer; by default as long as the SDK expects `max_tokens`
        output tokens to take (at least a minute, at most its ten-minute limit for a request that is not
        streamed), so a call with room for long thinking is not cut off while it thinks."""
        self.model = model
        self.name = f"claude:{model}"
        self.family = family_of(model)
        if effort is not None and effort not in self.family.effort_levels:
            raise ValueError(f"{self.family.name} ({model}) takes no effort {effort!r}")
        adaptive = "adaptive" in self.family.thinking_modes
        self.thinking = adaptive and (self.family.thinks_by_default or effort is not None)
        """Whether calls ask for adaptive thinking: on a family that thinks anyway (to get a summary),
        or with a session effort (xhigh and max need thinking on)."""
        default = (
            SESSION_EFFORT if self.family.thinks_by_default and SESSION_EFFORT in self.family.effort_levels else None
        )
        self.effort: Effort | None = effort or default
        self.forced = self.family.forced_tool_choice and not self.thinking
        self.max_tokens = self.family.max_tokens(self.effort, self.thinking, _MAX_TOKENS)
        expected = min(_MAX_TIMEOUT, max(60.0, 3600 * self.max_tokens / 128_000))
        self.timeout = timeout if timeout is not None else expected
        """Seconds to wait for one answer."""
        self.max_retries = max_retries
        self.prices = prices or self.family.prices
        self.needs_price = needs_price
        self.shared_prefix = prefix_tokens(self.family) >= self.family.cache_minimum
        self.instruction: str | None = None
        """An operator's instruction added to every prompt (`instructed`); None for a session's own model."""
        self.notice = None if is_known(model) else _unknown(model)
        if self.notice is not None:
            _log.warning(self.notice)
        self._client = client or anthropic.Anthropic(base_url=base_url, timeout=self.timeout, max_retries=max_retries)

    def instructed(self, instruction: str) -> ClaudeModel:
        """This model, sharing its client, with an operator's instruction at the end of every prompt
        (`prompts.render_user`): a counterfactual re-ask (`sessions.client.counterfactual`)."""
        model = copy.copy(self)
        model.instruction = instruction
        return model

    # -- questions ----------------------------------------------------------------------------------

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        return self._call(Question.CONSTRAINTS, view, Constraints)

    def expand(self, view: View) -> Reply[Expansion]:
        return self._call(Question.EXPAND, view, Expansion)

    def repair(self, view: View, reason: str) -> Reply[Repair]:
        return self._call(Question.REPAIR, view, Repair, detail=reason)

    def check_completion(self, view: View) -> Reply[Completion]:
        return self._call(Question.COMPLETE, view, Completion)

    def observe(self, view: View, action: str) -> Reply[Observation]:
        return self._call(Question.OBSERVE, view, Observation, detail=action)

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        return self._call(Question.FINAL_ANSWER, view, FinalAnswer)

    def diagnose(self, run: Trajectory) -> Reply[Diagnosis]:
        """A diagnosis of a finished run (`planner.diagnosis`): one call answered by the diagnose tool.

        Not part of the planning prefix: a diagnosis is asked once per run, after it ended, so its
        request is its own (system text, one tool) and is not marked for caching.
        """
        params = self.diagnosis_request(run)
        call = CallRecord(prompt=f"[system: diagnosis instructions]\n\n{params['messages'][0]['content'][0]['text']}")
        return self._answer(params, DIAGNOSIS_TOOL["name"], Diagnosis, call)

    def diagnosis_request(self, run: Trajectory) -> dict[str, Any]:
        """The Messages API arguments of a diagnosis, built from the same capability facts as every call."""
        tool = DIAGNOSIS_TOOL["name"]
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": [{"type": "text", "text": DIAGNOSIS_SYSTEM}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": render_diagnosis(run)}]}],
            "tools": [DIAGNOSIS_TOOL],
            "tool_choice": {"type": "tool", "name": tool} if self.forced else {"type": "auto"},
        }
        self._settings(params)
        return params

    # -- one call -----------------------------------------------------------------------------------

    def request(self, question: Question, view: View, detail: str = "") -> dict[str, Any]:
        """The Messages API arguments for one question (public so benchmarks can size prompts)."""
        tool = PROMPTS[question].tool
        system: dict[str, Any] = {"type": "text", "text": SYSTEM}
        task: dict[str, Any] = {"type": "text", "text": render_task(view)}
        tools = _TOOLS
        if self.shared_prefix:
            system["cache_control"] = task["cache_control"] = {"type": "ephemeral"}
        else:
            system["text"] = system_text(question)
            tools = [t for t in _TOOLS if t["name"] == tool]
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": [system],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        task,
                        {
                            "type": "text",
                            "text": render_user(question, view, detail=detail, instruction=self.instruction or ""),
                        },
                    ],
                }
            ],
            "tools": tools,
            "tool_choice": {"type": "tool", "name": tool} if self.forced else {"type": "auto"},
        }
        self._settings(params)
        return params

    def _settings(self, params: dict[str, Any]) -> None:
        """Add the thinking and effort settings every call of this session carries, the same on each."""
        if self.thinking:
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
        if self.effort is not None:
            params["output_config"] = {"effort": self.effort}

    def _call(self, question: Question, view: View, output: type[OutputT], detail: str = "") -> Reply[OutputT]:
        params = self.request(question, view, detail)
        user = params["messages"][0]["content"]
        call = CallRecord(prompt=f"[system: {question} instructions]\n\n{user[0]['text']}\n\n{user[1]['text']}")
        return self._answer(params, PROMPTS[question].tool, output, call)

    def _answer(self, params: dict[str, Any], tool: str, output: type[OutputT], call: CallRecord) -> Reply[OutputT]:
        """Send one request and validate the call of `tool` in its answer into `output`."""
        call.effort = params.get("output_config", {}).get("effort")
        started = time.perf_counter()
        message = self._send(params, call)
        call.latency_ms = round((time.perf_counter() - started) * 1000, 3)
        call.usage = self._usage(message.usage)
        call.thinking = [_kept(b.thinking) for b in message.content if b.type == "thinking" and b.thinking]
        block = next((b for b in message.content if b.type == "tool_use" and b.name == tool), None)
        if block is None:
            call.raw = _kept("".join(b.text or "" for b in message.content if b.type == "text"))
            if message.stop_reason == "max_tokens" and any(b.type == "thinking" for b in message.content):
                raise ModelOutputError(
                    f"the model's thinking used all {params['max_tokens']:,} output tokens before it called "
                    f"the {tool} tool (effort {call.effort or 'default'})",
                    call,
                )
            stop = _clip(str(message.stop_reason))
            other = next((b.name for b in message.content if b.type == "tool_use"), None)
            called = f"; it called {_short(other)} instead" if other is not None else ""
            raise ModelOutputError(f"the model did not call the {tool} tool (stop reason {stop}{called})", call)
        call.raw = _kept(json.dumps(block.input, ensure_ascii=False))
        if message.stop_reason == "max_tokens":
            raise ModelOutputError(f"the {tool} answer was cut off at {self.max_tokens} output tokens", call)
        try:
            return Reply(output.model_validate(block.input), call)
        except ValidationError as error:
            raise ModelOutputError(f"invalid {tool} answer: {_explain(error)}", call) from None

    def _send(self, params: dict[str, Any], call: CallRecord) -> _Message:
        """One Messages API request, its transport failures translated, its envelope checked."""
        if not _has_credentials(self._client):
            raise ModelUnavailable("no API key: set ANTHROPIC_API_KEY and resume the session")
        if self.prices is None and self.needs_price():
            raise ModelPriceUnknown(
                f"the price of {_short(self.model)} is unknown and this session has a cost cap: give it one "
                "with --price-in and --price-out (USD per million tokens) when you start the task, or set "
                "ANDOR_PRICE_IN and ANDOR_PRICE_OUT, or lift the cap; then resume the session"
            )
        try:
            response = self._client.messages.with_raw_response.create(**params).http_response
        except anthropic.APIStatusError as error:
            refused = _refused_setting(error)
            if refused is not None:
                raise ModelSettingRefused(
                    f"the Claude API refused a setting of this request to {_short(self.model)} (HTTP 400): "
                    f"{refused}; this is a configuration error, not the plan's: change --effort or the model "
                    "and start the task again, or resume once the model takes it"
                ) from None
            if error.status_code in _REQUEST_REFUSED:
                call.raw = _scrub(str(error.body))[:_RAW_SHOWN]
                raise ModelOutputError(self._status_message(error), call) from None
            raise ModelUnavailable(self._status_message(error)) from None
        except anthropic.APITimeoutError:
            raise ModelUnavailable(
                f"the Claude API did not answer within the timeout after {self.max_retries} retries; "
                "check the network and resume the session"
            ) from None
        except anthropic.APIConnectionError as error:
            cause = _scrub(str(error.__cause__ or error))
            if _answered_badly(error):
                raise self._envelope(f"sent an answer that is not complete HTTP ({cause})", call) from None
            raise ModelUnavailable(
                f"cannot reach the Claude API at {self._url} after {self.max_retries} retries "
                f"({cause}); check the network and resume the session"
            ) from None
        except anthropic.AnthropicError as error:
            raise ModelUnavailable(f"the Claude API call failed: {_scrub(str(error))}; resume the session") from None
        return self._read(response.status_code, response.headers.get("content-type", ""), response.content, call)

    def _read(self, status: int, content_type: str, body: bytes, call: CallRecord) -> _Message:
        """The Messages response in a successful HTTP answer, or `ModelEnvelopeError` saying what came instead."""
        call.raw = _scrub(body[: _RAW_SHOWN * 4].decode("utf-8", errors="replace"))[:_RAW_SHOWN]
        answered = f"answered HTTP {status} with"
        media = content_type.split(";", 1)[0].strip().lower()
        if not body:
            raise self._envelope(f"{answered} an empty body, not a Messages response", call)
        if len(body) > _MAX_BODY:
            raise self._envelope(
                f"{answered} a {len(body):,}-byte body, far more than any answer to this request", call
            )
        if not media.endswith("json"):
            shown = _clip(content_type)
            if "html" in media:
                kind = f"an HTML page ({shown})"
            else:
                kind = f"a body of type {shown}" if shown else "a body without a content-type"
            raise self._envelope(f"{answered} {kind}, not a Messages response", call)
        try:
            data = pydantic_core.from_json(body, allow_inf_nan=False)
        except ValueError as error:
            raise self._envelope(f"{answered} a body that is not valid JSON ({error})", call) from None
        if not isinstance(data, dict) or data.get("type") != "message":
            raise self._envelope(f"{answered} {_describe(data)}, not a Messages response", call)
        try:
            return _Message.model_validate(data)
        except ValidationError as error:
            raise self._envelope(f"{answered} a Messages response {_fault(error)}", call) from None

    def _envelope(self, what: str, call: CallRecord) -> ModelEnvelopeError:
        what = " ".join(_scrub(what).split())
        reason = f"the Claude API at {self._url} {what}; check ANTHROPIC_BASE_URL and resume the session"
        return ModelEnvelopeError(reason, call)

    @property
    def _url(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def _usage(self, usage: _Usage) -> dict[str, Any]:
        """Token counts in the engine's metric names, with an estimated cost (from checked counts only)."""
        counts: dict[str, Any] = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_input_tokens or 0,
            "cache_write_tokens": usage.cache_creation_input_tokens or 0,
        }
        prices = self.prices
        counts["cost_usd"] = (
            prices.cost(
                counts["input_tokens"],
                counts["output_tokens"],
                counts["cache_write_tokens"],
                counts["cache_read_tokens"],
            )
            if prices is not None
            else 0.0
        )
        return counts

    def _status_message(self, error: anthropic.APIStatusError) -> str:
        status = error.status_code
        body = error.body if isinstance(error.body, dict) else {}
        detail = str(body["error"].get("message") or "") if isinstance(body.get("error"), dict) else ""
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
        detail = f": {_clip(_scrub(detail), _RAW_SHOWN)}" if detail else ""
        return f"Claude API returned HTTP {status}{detail}; {advice}"


def _unknown(model: str) -> str:
    """The one sentence said when a model id is not in the capability table."""
    return (
        f"the Claude model {_short(model)} is not in planner/models/capabilities.py, so it runs as the most "
        "careful current model would (adaptive thinking with a summary, room for thinking in max_tokens, no forced "
        "tool choice, sampling, prefill or effort) and has no price unless the session gives one"
    )


_SETTING_WORDS = re.compile(
    r"tool_choice|thinking|effort|output_config|temperature|top_p|top_k|prefill|sampling parameter", re.IGNORECASE
)
"""Words by which an HTTP 400's message names a request setting (the wording of the API's refusals)."""


def _refused_setting(error: anthropic.APIStatusError) -> str | None:
    """The API's sentence when a 400 refuses a setting of the request (scrubbed and clipped), else None."""
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else body
    message = detail.get("message") if isinstance(detail, dict) else None
    if error.status_code != 400 or not isinstance(message, str) or not _SETTING_WORDS.search(message):
        return None
    return _clip(_scrub(message), _RAW_SHOWN)


def _explain(error: ValidationError) -> str:
    """A short, readable account of what was wrong with the tool input."""
    problems = []
    for item in error.errors()[:3]:
        where = _clip(".".join(str(part) for part in item["loc"])) or "answer"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def _answered_badly(error: anthropic.APIConnectionError) -> bool:
    """Whether the endpoint was reached but sent broken HTTP (a protocol or decoding error).

    Those classes are named the same in httpx and in httpx2, whichever the installed SDK uses; a
    connection refused or reset is not among them and stays "cannot reach".
    """
    cause = error.__cause__
    names = {klass.__name__ for klass in type(cause).__mro__} if cause is not None else set()
    return not names.isdisjoint({"ProtocolError", "DecodingError"})


def _describe(data: Any) -> str:
    """What a JSON body is, when it is not a message: an API error, another object, or not an object."""
    if isinstance(data, dict):
        error = data.get("error")
        if data.get("type") == "error" and isinstance(error, dict):
            return f"an API error ({_short(error.get('type'))}: {_short(error.get('message'))})"
        if "type" in data:
            return f"a JSON object of type {_short(data['type'])}"
        return "a JSON object without a type"
    kinds = {list: "a JSON list", str: "a JSON string", bool: "a JSON boolean", type(None): "JSON null"}
    return kinds.get(type(data), "a JSON number")


def _fault(error: ValidationError) -> str:
    """The first thing wrong with a message envelope, as the end of a sentence."""
    item = error.errors()[0]
    where = ".".join(str(part) for part in item["loc"]) or "message"
    if item["type"] == "missing":
        return f"without {where}"
    value = item.get("input")
    if item["loc"][:1] == ("usage",) and len(item["loc"]) == 2:
        return f"whose {where} is {_short(value)}, not a token count from 0 to {_MAX_USAGE:,}"
    if item["type"] in ("model_type", "model_attributes_type"):
        return f"whose {where} is {_short(value)}, not an object"
    return f"whose {where} is {_short(value)} ({item['msg'].removeprefix('Value error, ')})"


def _has_credentials(client: anthropic.Anthropic) -> bool:
    """Whether the client resolved a way to authenticate: an API key, a bearer token, or the SDK's
    own credential provider (`custom_auth`). Asked before each request, on the client's own
    attributes, because without one the SDK refuses the request with an untyped `TypeError`."""
    return client.api_key is not None or client.auth_token is not None or client.custom_auth is not None


def _short(value: Any) -> str:
    """A value as JSON, cut to a length that fits in a sentence."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return _clip(text)


def _clip(text: str, limit: int = 60) -> str:
    """Text from an answer, on one line and short enough for a sentence."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kept(text: str) -> str:
    """An answer as the call record keeps it: scrubbed, and cut at `_RAW_KEPT` characters."""
    text = _scrub(text)
    if len(text) <= _RAW_KEPT:
        return text
    return f"{text[:_RAW_KEPT]}... ({len(text) - _RAW_KEPT:,} more characters not kept)"


def _scrub(text: str) -> str:
    """Belt and braces: the key never belongs in a message, even if a server echoes it back."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    return text.replace(key, "[redacted]") if key else text
