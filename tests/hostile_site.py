"""The hostile gallery's site: its pages on 127.0.0.1, another host on 127.0.0.2 and a WebSocket
endpoint, each recording everything that reaches it, so a test counts at the server what a page did.

Every case lives under its own path prefix (`/<case>/...`, and the WebSocket path `/<case>`): a page
uses relative URLs, so what it sends is filed under its case however late it arrives, and a check
made after the last case sees a late duplicate too. A page that needs an absolute URL names its own
host `{{HOME}}`, the other host `{{OTHER}}` and the WebSocket endpoint `{{WS}}`, each with the case's
prefix; a request at the site's root names its case in its query (`/order?confirm=1&case={{CASE}}`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self
from urllib.parse import parse_qsl, urlencode, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

PAGES = Path(__file__).parent / "pages" / "hostile"
HOME, OTHER = "127.0.0.1", "127.0.0.2"


@dataclass(frozen=True)
class Arrival:
    """One request a server received: `target` is its path and query with the case's prefix removed
    ("order?x=1"; at the root, the path with its case parameter removed: "/order?confirm=1"); a
    WebSocket message arrives with method WEBSOCKET and its text as `body`."""

    host: str
    case: str
    method: str
    target: str
    body: bytes = b""


class _Ledger:
    """What arrived, appended from the servers' threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrivals: list[Arrival] = []

    def add(self, arrival: Arrival) -> None:
        with self._lock:
            self._arrivals.append(arrival)

    def all(self) -> list[Arrival]:
        with self._lock:
            return list(self._arrivals)


def _split(path: str) -> tuple[str, str]:
    """A request's case and target: ("case", "order?x=1") for "/case/order?x=1"; at the root, the case
    its query names: ("c", "/order?confirm=1") for "/order?confirm=1&case=c"."""
    parts = urlsplit(path)
    query = parse_qsl(parts.query, keep_blank_values=True)
    named = dict(query).get("case")
    if named is not None:
        rest = urlencode([(key, value) for key, value in query if key != "case"])
        return named, parts.path + (f"?{rest}" if rest else "")
    case, _, rest = path.lstrip("/").partition("/")
    return case, rest


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return None

    def _any(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        case, target = _split(self.path)
        site = self.server.site
        site.record(Arrival(self.server.host, case, self.command, target, body))
        page = urlsplit(target).path
        if self.server.host == HOME and page.endswith(".html") and (PAGES / page).is_file():
            text = (PAGES / page).read_text(encoding="utf-8")
            for name, origin in (("HOME", site.origin), ("OTHER", site.other_origin), ("WS", site.ws_origin)):
                text = text.replace(f"{{{{{name}}}}}", f"{origin}/{case}")
            text = text.replace("{{CASE}}", case)
            self._send(200, text.encode())
        elif page == "armed":
            self._send(200 if case in site.armed else 204, b"")
        else:
            done = (
                f"<!doctype html><meta charset=utf-8><title>Done</title><p>The server did {self.command} {target}.</p>"
            )
            self._send(200, done.encode())

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _any

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if status != 204:
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, site: HostileSite) -> None:
        self.host, self.site = host, site
        super().__init__((host, 0), _Handler)


class HostileSite:
    """The three servers, serving while the site is entered (`with HostileSite() as site:`)."""

    def __init__(self) -> None:
        self._ledger = _Ledger()
        self.armed: set[str] = set()
        self._home = _Server(HOME, self)
        self._other = _Server(OTHER, self)
        self._ws = serve(self._socket, HOME, 0)
        self.origin = f"http://{HOME}:{self._home.server_address[1]}"
        self.other_origin = f"http://{OTHER}:{self._other.server_address[1]}"
        self.ws_origin = f"ws://{HOME}:{self._ws.socket.getsockname()[1]}"

    def _socket(self, connection: ServerConnection) -> None:
        case = connection.request.path.strip("/") if connection.request is not None else ""
        try:
            for message in connection:
                data = message.encode() if isinstance(message, str) else message
                self.record(Arrival(HOME, case, "WEBSOCKET", "", data))
        except ConnectionClosed:
            pass

    def url(self, case: str, page: str) -> str:
        return f"{self.origin}/{case}/{page}"

    def arm(self, case: str) -> None:
        """Let the case's page do what it waits to do (its `armed` answers 200 from now on)."""
        self.armed.add(case)

    def record(self, arrival: Arrival) -> None:
        self._ledger.add(arrival)

    @property
    def arrivals(self) -> list[Arrival]:
        """Everything that reached any of the three servers, in the order it arrived."""
        return self._ledger.all()

    def count(self, case: str, method: str, target: str) -> int:
        """How many `method target` requests (a WEBSOCKET message: any) reached this host for `case`."""
        return sum(
            1
            for a in self.arrivals
            if a.host == HOME
            and a.case == case
            and a.method == method
            and (method == "WEBSOCKET" or a.target == target)
        )

    def at_other_host(self) -> list[Arrival]:
        return [a for a in self.arrivals if a.host == OTHER]

    def __enter__(self) -> Self:
        for server in (self._home, self._other, self._ws):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self._home, self._other):
            server.shutdown()
            server.server_close()
        self._ws.shutdown()
