"""A local stand-in for the Anthropic Messages API, speaking its wire format, for tests and benchmarks.

The real SDK is pointed at it with `base_url`, so requests, retries, timeouts and error handling go
through the same code paths as in production. Replies are scripted by (tool name, node
description): the tool is the forced one, or (with `tool_choice` auto or structured outputs) the
one the prompt's first line names ("Question: <tool>"); the node is read from the "## Current node"
section every question's prompt carries.

Each model family's rules come from `planner.models.capabilities`, the table the backend reads: a
setting the family refuses (forced tool choice, sampling parameters, a prefill, a thinking type it
does not take, an effort it does not have) is answered with HTTP 400 `invalid_request_error` and a
message worded like the API's, and so are forced tool choice together with thinking and an effort of
xhigh or max without thinking. A request that thinks (asked to, or on a family that thinks by
default) answers with a thinking block before the answer: its text is the summary only when the
display is "summarized" (asked for, or the family's default), and it is `thinking_tokens[effort]`
tokens long at the effort the call runs at (the family's default when none is sent). Thinking counts
toward `max_tokens`: a thinking that reaches it ends the answer there, with stop reason "max_tokens"
and no tool call, as the API does. A request with `output_config.format` (structured outputs) is
answered with the JSON as a text block instead of a tool call.

Prompt caching follows the documented prefix hierarchy tools -> system -> messages: each block marked
with `cache_control` is a breakpoint whose entry is keyed on the model, the tools (and a structured
output schema), the system blocks up to it, and, for a breakpoint in the messages, also `tool_choice`,
the thinking settings, the effort and the messages up to it (those settings invalidate the messages
level only). A breakpoint whose prefix is shorter than the family's `cache_minimum` is not cached.
The longest cached breakpoint is read; the rest of the longest eligible one is written. Token counts
are characters times the family's `tokens_per_char` (thinking counted as output).

Faults are scripted too: `fail(status)` answers with an API error, and `raw(RawReply(...))` writes
any bytes at all (a wrong status, headers or content type, a body that is not a Messages response,
a body cut off mid-way) so the client's handling of a broken endpoint can be tested end to end.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from planner.models.capabilities import Family, family_of

__all__ = ["FakeAnthropic", "RawReply", "current_node", "question_tool", "refusal"]

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class RawReply:
    """One HTTP answer written byte for byte, whatever the Messages API would have said.

    `body` is the bytes to send, or a function of the message the fake would have answered (so a
    test can break one field of an otherwise valid answer). `headers` replace the usual ones;
    content-length is the full body's length unless given. `cut_after` sends only that many body
    bytes and then closes the connection; `chunked` sends the body in chunked encoding (and, when
    cut, without its final chunk). `head` replaces the status line and headers entirely (a reply
    that is not HTTP at all). `delay` waits before answering.
    """

    body: bytes | Callable[[dict[str, Any]], bytes] = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    cut_after: int | None = None
    chunked: bool = False
    head: bytes | None = None
    delay: float = 0.0

    def render(self, message: dict[str, Any]) -> bytes:
        """The bytes on the wire for this reply, given the message the fake would have answered."""
        body = self.body(message) if callable(self.body) else self.body
        sent = body if self.cut_after is None else body[: self.cut_after]
        if self.chunked:
            sent = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in _chunks(sent))
            if self.cut_after is None:
                sent += b"0\r\n\r\n"
        if self.head is not None:
            return self.head + sent
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.chunked:
            headers.setdefault("transfer-encoding", "chunked")
        else:
            headers.setdefault("content-length", str(len(body)))
        headers.setdefault("connection", "close")
        lines = [f"HTTP/1.1 {self.status} Fake", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        return "\r\n".join(lines).encode("latin-1") + sent


def _chunks(data: bytes, size: int = 4096) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def current_node(body: dict[str, Any]) -> str:
    """The description of the node a question is about, from its prompt text."""
    text = body["messages"][0]["content"][-1]["text"]
    section = text.split("## Current node\n", 1)[1].split("\n", 1)[0]
    return section.split(": ", 1)[1]


def question_tool(body: dict[str, Any]) -> str:
    """The tool a request must be answered with: the forced one, else the one its prompt names."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") == "tool":
        return str(choice["name"])
    return body["messages"][0]["content"][-1]["text"].split("\n", 1)[0].removeprefix("Question: ")


def refusal(family: Family, body: dict[str, Any]) -> str | None:
    """The API's 400 message for a setting `family` refuses in this request, or None if it takes them all."""
    choice = (body.get("tool_choice") or {}).get("type")
    thinking = body.get("thinking") or {}
    kind = thinking.get("type")
    effort = (body.get("output_config") or {}).get("effort")
    if choice in ("tool", "any") and not family.forced_tool_choice:
        return 'tool_choice: type "tool" and "any" are not supported for this model.'
    for name in ("temperature", "top_p", "top_k"):
        if name in body and not family.sampling_params:
            return f"{name}: non-default sampling parameters are not supported for this model; remove {name}."
    if body["messages"][-1]["role"] == "assistant" and not family.prefill:
        return "Prefilling assistant messages is not supported for this model; end the conversation with a user turn."
    if kind is not None and kind not in family.thinking_modes:
        if kind == "disabled" and "between_tools" in family.thinking_modes:
            return (
                '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" instead.'
            )
        if kind == "enabled" and "adaptive" in family.thinking_modes:
            return (
                '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
                '"output_config.effort" to control thinking behavior.'
            )
        return f"{kind} thinking is not supported on this model."
    if effort is not None and effort not in family.effort_levels:
        return f'output_config.effort: "{effort}" is not supported for this model.'
    if choice in ("tool", "any") and _thinks(family, body):
        return "Thinking may not be enabled when tool_choice forces tool use."
    if effort in ("xhigh", "max") and not _thinks(family, body):
        return f'output_config.effort: "{effort}" requires thinking; set "thinking.type.adaptive".'
    return None


def _thinks(family: Family, body: dict[str, Any]) -> bool:
    kind = (body.get("thinking") or {}).get("type")
    return kind in ("adaptive", "enabled") or (kind is None and family.thinks_by_default)


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _breakpoints(body: dict[str, Any]) -> list[str]:
    """Each `cache_control` breakpoint's prefix, as the key its cache entry has (shortest first)."""
    schema = (body.get("output_config") or {}).get("format")
    tools = json.dumps([body["model"], body.get("tools", []), schema])
    prefixes: list[str] = []
    system: list[Any] = []
    for block in _blocks(body.get("system", [])):
        system.append({k: v for k, v in block.items() if k != "cache_control"})
        if block.get("cache_control"):
            prefixes.append(tools + json.dumps(system))
    settings = json.dumps(
        [body.get("tool_choice"), body.get("thinking"), (body.get("output_config") or {}).get("effort")]
    )
    messages: list[Any] = []
    for message in body["messages"]:
        for block in _blocks(message["content"]):
            messages.append([message["role"], {k: v for k, v in block.items() if k != "cache_control"}])
            if block.get("cache_control"):
                prefixes.append(tools + json.dumps(system) + settings + json.dumps(messages))
    return prefixes


def _prefix_tokens(body: dict[str, Any], key: str, per_char: float) -> int:
    """Tokens of the prompt up to a breakpoint: its key is the prompt up to there, plus a fixed header."""
    header = len(json.dumps([body["model"], [], (body.get("output_config") or {}).get("format")]))
    return round((len(key) - header) * per_char)


class FakeAnthropic:
    """A threaded HTTP server on 127.0.0.1 answering POST /v1/messages.

    `replies[(tool, description)]` is a tool input (dict), a list of them used in turn (the last one
    repeats), or a function of the request body; `(tool, "*")` answers any node without its own entry. `fail(status, times)` makes the next requests fail;
    `delay` makes every answer wait that many seconds (to provoke client timeouts). `raw(reply, times)`
    writes the next answers byte for byte (`times=None`: every answer until `repair()`). `thinking` is
    the thinking summary a thinking model sends before its answer: a text or a function of the request.
    """

    def __init__(self, replies: dict[tuple[str, str], Reply | list[Reply]] | None = None) -> None:
        self.replies: dict[tuple[str, str], Reply | list[Reply]] = dict(replies or {})
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0
        self.thinking: str | Callable[[dict[str, Any]], str] = lambda body: (
            f"The node '{current_node(body)}' needs {question_tool(body)}; I answer with that tool."
        )
        self.thinking_tokens: dict[str, int] = {
            "low": 1_500,
            "medium": 6_000,
            "high": 12_000,
            "xhigh": 24_000,
            "max": 40_000,
        }
        """How many output tokens a call's thinking takes at each effort (more than a short answer's
        budget at every level, as real thinking does)."""
        self._failures: deque[tuple[int, str | None]] = deque()
        self._raw: deque[RawReply] = deque()
        self._broken: RawReply | None = None
        self._served: dict[tuple[str, str], int] = {}
        self._cache: set[str] = set()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, status: int, times: int = 1, message: str | None = None) -> None:
        """Answer the next `times` requests with this HTTP error status (and this error message)."""
        self._failures.extend([(status, message)] * times)

    def raw(self, reply: RawReply, times: int | None = 1) -> None:
        """Write `reply` for the next `times` requests, or for every request until `repair()` (None)."""
        with self._lock:
            if times is None:
                self._broken = reply
            else:
                self._raw.extend([reply] * times)

    def repair(self) -> None:
        """Stop writing scripted raw replies: the endpoint answers properly again."""
        with self._lock:
            self._raw.clear()
            self._broken = None

    def _take_raw(self) -> RawReply | None:
        with self._lock:
            return self._raw.popleft() if self._raw else self._broken

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if self._failures:
                status, message = self._failures.popleft()
                kind = {
                    400: "invalid_request_error",
                    401: "authentication_error",
                    404: "not_found_error",
                    429: "rate_limit_error",
                    529: "overloaded_error",
                }.get(status, "api_error")
                return status, {"type": "error", "error": {"type": kind, "message": message or f"fake {kind}"}}
            family = family_of(body["model"])
            refused = refusal(family, body)
            if refused is not None:
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": refused}}
            tool = question_tool(body)
            key = (tool, current_node(body))
            scripted = self.replies.get(key, self.replies.get((tool, "*")))
            if isinstance(scripted, list):
                index = self._served.get(key, 0)
                self._served[key] = index + 1
                scripted = scripted[min(index, len(scripted) - 1)]
            per_char = family.tokens_per_char
            eligible = [
                (key, tokens)
                for key in _breakpoints(body)
                if (tokens := _prefix_tokens(body, key, per_char)) >= family.cache_minimum
            ]
            hits = [tokens for key, tokens in eligible if key in self._cache]
            read = max(hits, default=0)
            written = max((tokens for _, tokens in eligible), default=0) - read
            self._cache.update(key for key, _ in eligible)
        content: list[dict[str, Any]] = []
        thought = 0
        if _thinks(family, body):
            display = (body.get("thinking") or {}).get("display") or family.display
            summarized = display == "summarized"
            text = (self.thinking(body) if callable(self.thinking) else self.thinking) if summarized else ""
            content.append({"type": "thinking", "thinking": text, "signature": f"sig_{len(self.requests):04d}"})
            effort = (body.get("output_config") or {}).get("effort") or family.default_effort or "high"
            thought = self.thinking_tokens[effort]
        if thought >= body["max_tokens"]:
            stop = "max_tokens"
        elif scripted is None:
            content.append({"type": "text", "text": f"I have no scripted answer for {key}."})
            stop = "end_turn"
        elif (body.get("output_config") or {}).get("format"):
            answer = scripted(body) if callable(scripted) else scripted
            content.append({"type": "text", "text": json.dumps(answer)})
            stop = "end_turn"
        else:
            tool_input = scripted(body) if callable(scripted) else scripted
            content.append(
                {"type": "tool_use", "id": f"toolu_{len(self.requests):04d}", "name": tool, "input": tool_input}
            )
            stop = "tool_use"
        total = len(json.dumps(body["system"])) + len(json.dumps(body["messages"])) + len(json.dumps(body["tools"]))
        answer = round(len(json.dumps(content)) * per_char)
        usage = {
            "input_tokens": max(round(total * per_char) - read - written, 1),
            "output_tokens": min(body["max_tokens"], max(thought + answer, 1)),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }
        message = {
            "id": f"msg_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return 200, message

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if fake.delay:
                    time.sleep(fake.delay)
                raw = fake._take_raw()
                status, payload = fake._answer(body)
                if raw is not None:
                    self._write_raw(raw, payload)
                    return
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", f"req_{len(fake.requests):04d}")
                    if status != 200:
                        self.send_header("retry-after-ms", "5")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def _write_raw(self, raw: RawReply, message: dict[str, Any]) -> None:
                self.close_connection = True
                if raw.delay:
                    time.sleep(raw.delay)
                try:
                    self.wfile.write(raw.render(message))
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
