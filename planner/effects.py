"""What a page may do to a server while the agent acts: the effect fence's policy.

The action guard (`planner.guard`) judges an action by what it is called, before it runs, and a page
can always call a control something innocent ("Continue") and make it do something else. The effect
fence judges what an action *does*: every request the page sends that can change state on a server
(any method but GET, HEAD and OPTIONS, whether a form post, fetch, XHR or `sendBeacon`, and every
message a page sends on a WebSocket) is held until an operator approves it, whatever control caused
it. The browser (`planner.browser.environment`) enforces it with Playwright's routes; this module
says, for one request, what to do with it.

The policy is data, per host, path and method (`RequestRule`, stored with the session in
`EngineConfig.request_rules`): the first rule that matches a request decides, and without one a
state-changing request is held and anything else allowed. A rule can also hold or block a GET, for
a site whose links act ("GET /order?confirm=1"): the default cannot know such a site.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from email.message import Message
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Annotated
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from planner.errors import PlannerError

__all__ = [
    "SAFE_METHODS",
    "WEBSOCKET",
    "RequestRule",
    "RuleSyntaxError",
    "SentRequest",
    "Verdict",
    "decide",
    "request_fields",
    "rule_for",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods a server must not change state for (RFC 9110, section 9.2.1); every other one may."""
WEBSOCKET = "WEBSOCKET"
"""The method a rule names for a message a page sends on a WebSocket (the handshake itself is a GET)."""

_MAX_FIELDS = 30
_MAX_VALUE = 200
_SENSITIVE_NAME = re.compile(r"pass|pwd|secret|token|api.?key|auth|card|cvv|cvc|\bpin\b|ssn|otp", re.IGNORECASE)
"""Field names whose values an approval box never shows (a password field of a form posts as one of these)."""
_HIDDEN = "••••"
_METHOD = re.compile(r"^(\*|[A-Z]+)$")


class RuleSyntaxError(PlannerError):
    """A rule written as text (`RequestRule.parse`) that cannot be read; the message says how to write it."""


class Verdict(StrEnum):
    ALLOW = "allow"
    """Let it through: the request does nothing an operator needs to see."""
    HOLD = "hold"
    """Refuse it for now and ask an operator; approved, the action runs again and the request is let through."""
    BLOCK = "block"
    """Refuse it, and never ask."""


class RequestRule(BaseModel):
    """One line of a session's request policy: requests to `host` (a glob over the host name, "*" for
    any), at `path` (a glob over the URL's path, query excluded), by one of `methods` ("*" for any;
    `WEBSOCKET` for a page's WebSocket messages) get `verdict`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Verdict
    methods: tuple[Annotated[str, StringConstraints(min_length=1, max_length=20)], ...] = Field(
        default=("*",), min_length=1, max_length=10
    )
    host: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=253)] = "*"
    path: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)] = "*"

    @field_validator("methods", mode="before")
    @classmethod
    def _upper_methods(cls, methods: object) -> object:
        if isinstance(methods, str):
            methods = (methods,)
        if isinstance(methods, (list, tuple)):
            methods = tuple(str(m).strip().upper() for m in methods)
            for method in methods:
                if not _METHOD.match(method):
                    raise ValueError(f"{method!r} is not an HTTP method (POST, PUT, DELETE, ..., WEBSOCKET or *)")
        return methods

    @field_validator("host")
    @classmethod
    def _lower_host(cls, host: str) -> str:
        return host.lower().rstrip(".")

    @field_validator("path")
    @classmethod
    def _rooted_path(cls, path: str) -> str:
        if not path.startswith(("/", "*")):
            raise ValueError(f"the path {path!r} must start with / (or be *)")
        return path

    def matches(self, method: str, host: str, path: str) -> bool:
        return (
            ("*" in self.methods or method in self.methods)
            and fnmatchcase(host, self.host)
            and fnmatchcase(path or "/", self.path)
        )

    def spelled(self) -> str:
        """The rule as `parse` reads it: "allow POST 127.0.0.1/search"."""
        return f"{self.verdict.value} {','.join(self.methods)} {self.host}{'' if self.path == '*' else self.path}"

    @classmethod
    def parse(cls, text: str) -> RequestRule:
        """Read "VERDICT METHODS HOST[PATH]": `allow POST shop.example/search`, `hold GET */order*`,
        `block * */admin/*`, `allow WEBSOCKET chat.example`."""
        words = text.split()
        if len(words) != 3:
            raise RuleSyntaxError(
                f"write a request rule as VERDICT METHODS HOST/PATH (for example 'allow POST shop.example/search'), "
                f"not {text.strip()[:80]!r}"
            )
        verdict, methods, where = words
        if verdict.lower() not in {v.value for v in Verdict}:
            raise RuleSyntaxError(f"a request rule starts with allow, hold or block, not {verdict[:20]!r}")
        host, slash, path = where.partition("/")
        try:
            return cls(
                verdict=Verdict(verdict.lower()),
                methods=tuple(m for m in methods.split(",") if m),
                host=host or "*",
                path=slash + path if slash else "*",
            )
        except ValidationError as error:
            first = error.errors()[0]
            reason = str(first["msg"]).removeprefix("Value error, ")
            if first["loc"] and first["loc"][0] in ("host", "path"):
                reason = f"its {first['loc'][0]}: {reason[0].lower()}{reason[1:]}"
            raise RuleSyntaxError(f"request rule {text.strip()[:80]!r}: {reason}") from None


class SentRequest(BaseModel):
    """A request a page sent while an action ran, as an operator judges it: `method` and `url`, what
    sent it (`kind`: form, fetch, xhr, beacon, navigation, websocket, other) and the `fields` it
    carries, sensitive ones masked (`request_fields`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    url: str
    kind: str = ""
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """What an approval lets through once: this method at this URL (not its body, which may carry a
        fresh token each time the page sends it)."""
        return f"{self.method} {self.url}"

    def describe(self) -> str:
        """ "POST /order on 127.0.0.1" (the path with its query, cut when long)."""
        parts = urlsplit(self.url)
        where = parts.path or "/"
        if parts.query:
            where += "?" + parts.query
        if len(where) > 120:
            where = where[:119] + "…"
        host = parts.hostname or self.url[:60]
        return f"{self.method} {where} on {host}"

    def allowing_rule(self) -> RequestRule:
        """The rule "always allow" adds from an approval box: this method, this host, this path."""
        parts = urlsplit(self.url)
        return RequestRule(
            verdict=Verdict.ALLOW, methods=(self.method,), host=parts.hostname or "*", path=parts.path or "/"
        )


def rule_for(rules: Iterable[RequestRule], method: str, url: str) -> RequestRule | None:
    """The first rule that matches a request, or None."""
    parts = urlsplit(url)
    host, path = (parts.hostname or "").lower(), parts.path or "/"
    method = method.upper()
    return next((rule for rule in rules if rule.matches(method, host, path)), None)


def decide(rules: Sequence[RequestRule], method: str, url: str) -> Verdict:
    """What to do with a request: the first matching rule's verdict, else hold a state-changing one."""
    rule = rule_for(rules, method, url)
    if rule is not None:
        return rule.verdict
    return Verdict.ALLOW if method.upper() in SAFE_METHODS else Verdict.HOLD


def request_fields(content_type: str, body: bytes | None) -> tuple[tuple[str, str], ...]:
    """The fields a request body carries, for an operator to read: a form's (urlencoded or multipart)
    name and value, a JSON object's top-level keys, otherwise the body as text, cut short. A field whose
    name says it is a secret (password, token, card...) shows as "••••"."""
    if not body:
        return ()
    kind = content_type.split(";")[0].strip().lower()
    text = body.decode("utf-8", "replace")
    pairs: list[tuple[str, str]]
    if kind == "application/x-www-form-urlencoded":
        pairs = parse_qsl(text, keep_blank_values=True)
    elif kind == "multipart/form-data":
        pairs = _multipart(content_type, body)
    elif kind.endswith("json"):
        try:
            loaded = json.loads(text)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            pairs = [
                (str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in loaded.items()
            ]
        else:
            pairs = [("body", text)]
    elif kind.startswith("text/") or not kind:
        pairs = [("body", text)]
    else:
        pairs = [("body", f"{len(body):,} bytes of {kind}")]
    return tuple(
        (_cut(name, 80), _HIDDEN if _SENSITIVE_NAME.search(name) else _cut(value, _MAX_VALUE))
        for name, value in pairs[:_MAX_FIELDS]
    )


def _multipart(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """A multipart form's fields, read by the standard library's MIME parser; a file shows its name and size."""
    message = Message()
    message["content-type"] = content_type
    boundary = message.get_boundary()
    if not boundary:
        return [("body", f"{len(body):,} bytes of multipart data")]
    pairs = []
    for part in body.split(b"--" + boundary.encode("latin-1"))[1:]:
        head, _, content = part.partition(b"\r\n\r\n")
        disposition = Message()
        for line in head.decode("utf-8", "replace").splitlines():
            header, colon, value = line.partition(":")
            if colon:
                disposition[header.strip()] = value.strip()
        name = disposition.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        content = content.removesuffix(b"\r\n")
        filename = disposition.get_param("filename", header="content-disposition")
        value = (
            f"(file {filename}, {len(content):,} bytes)"
            if isinstance(filename, str)
            else content.decode("utf-8", "replace")
        )
        pairs.append((name, value))
    return pairs


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
