"""A local stand-in for the Anthropic Messages API, speaking its wire format, for tests and benchmarks.

The real SDK is pointed at it with `base_url`, so requests, retries, timeouts and error handling go
through the same code paths as in production. Replies are scripted by (tool name, node
description): the node is read from the "## Current node" section every operator prompt carries.
Prompt caching is simulated: the first request with a given cached prefix (system text + task
block) is billed as a cache write, later ones as cache reads. Token counts are chars/4.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeAnthropic", "current_node"]

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


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
    `delay` makes every answer wait that many seconds (to provoke client timeouts).
    """

    def __init__(self, replies: dict[tuple[str, str], Reply | list[Reply]] | None = None) -> None:
        self.replies: dict[tuple[str, str], Reply | list[Reply]] = dict(replies or {})
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0
        self._failures: deque[int] = deque()
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

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, status: int, times: int = 1) -> None:
        """Answer the next `times` requests with this HTTP error status."""
        self._failures.extend([status] * times)

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
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if fake.delay:
                    time.sleep(fake.delay)
                status, payload = fake._answer(body)
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

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server signature
                return None

        return Handler
