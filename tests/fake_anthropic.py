"""A local stand-in for the Anthropic Messages API, speaking its wire format, for tests and benchmarks.

The real SDK is pointed at it with `base_url`, so requests, retries, timeouts and error handling go
through the same code paths as in production. Replies are scripted by (tool name, node
description): the node is read from the "## Current node" section every operator prompt carries.
Prompt caching is simulated: the first request with a given cached prefix (system text + task
block) is billed as a cache write, later ones as cache reads. Token counts are chars/4.

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

__all__ = ["FakeAnthropic", "RawReply", "current_node"]

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
    """The description of the node an operator request is about, from its prompt text."""
    text = body["messages"][0]["content"][-1]["text"]
    section = text.split("## Current node\n", 1)[1].split("\n", 1)[0]
    return section.split(": ", 1)[1]


def _cached_prefix(body: dict[str, Any]) -> str:
    parts = [block["text"] for block in body.get("system", []) if block.get("cache_control")]
    parts += [block["text"] for block in body["messages"][0]["content"] if block.get("cache_control")]
    return "".join(parts)


class FakeAnthropic:
    """A threaded HTTP server on 127.0.0.1 answering POST /v1/messages.

    `replies[(tool, description)]` is a tool input (dict), a list of them used in turn (the last one
    repeats), or a function of the request body; `(tool, "*")` answers any node without its own entry. `fail(status, times)` makes the next requests fail;
    `delay` makes every answer wait that many seconds (to provoke client timeouts). `raw(reply, times)`
    writes the next answers byte for byte (`times=None`: every answer until `repair()`).
    """

    def __init__(self, replies: dict[tuple[str, str], Reply | list[Reply]] | None = None) -> None:
        self.replies: dict[tuple[str, str], Reply | list[Reply]] = dict(replies or {})
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0
        self._failures: deque[int] = deque()
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

    def fail(self, status: int, times: int = 1) -> None:
        """Answer the next `times` requests with this HTTP error status."""
        self._failures.extend([status] * times)

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
                status = self._failures.popleft()
                kind = {
                    400: "invalid_request_error",
                    401: "authentication_error",
                    404: "not_found_error",
                    429: "rate_limit_error",
                    529: "overloaded_error",
                }.get(status, "api_error")
                return status, {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}
            tool = body["tool_choice"]["name"]
            key = (tool, current_node(body))
            scripted = self.replies.get(key, self.replies.get((tool, "*")))
            if isinstance(scripted, list):
                index = self._served.get(key, 0)
                self._served[key] = index + 1
                scripted = scripted[min(index, len(scripted) - 1)]
            prefix = _cached_prefix(body)
            read = prefix in self._cache
            self._cache.add(prefix)
        if scripted is None:
            content = [{"type": "text", "text": f"I have no scripted answer for {key}."}]
            stop = "end_turn"
        else:
            tool_input = scripted(body) if callable(scripted) else scripted
            content = [{"type": "tool_use", "id": f"toolu_{len(self.requests):04d}", "name": tool, "input": tool_input}]
            stop = "tool_use"
        total = len(json.dumps(body["system"])) + len(json.dumps(body["messages"])) + len(json.dumps(body["tools"]))
        cached = len(prefix) // 4
        usage = {
            "input_tokens": max(total // 4 - cached, 1),
            "output_tokens": max(len(json.dumps(content)) // 4, 1),
            "cache_creation_input_tokens": 0 if read else cached,
            "cache_read_input_tokens": cached if read else 0,
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
