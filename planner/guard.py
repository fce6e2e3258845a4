"""Which browser actions a person must approve before they run.

Pure policy over the action text and the element it would touch (`ElementInfo`), so the rules
are testable without a browser and the engine can ask before anything irreversible happens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from planner.actions import ActionSyntaxError, Click, Goto, Select, Type, parse_action
from planner.protocols import ElementInfo

__all__ = ["GuardRules", "Guard", "make_guard", "allowed_hosts", "host_allowed", "url_host", "resolve_url"]

Guard = Callable[[str, ElementInfo | None], str | None]
"""Returns the name of the rule an action trips, or None when it may run unattended."""

_WEB_SCHEMES = frozenset({"http", "https"})
_DEFAULT_RISKY = ["buy", "place order", "checkout", "add to cart", "delete", "pay", "purchase"]


class GuardRules(BaseModel):
    """What counts as risky. Names match whole words, case-insensitively: "pay" hits "Pay now"
    but not "Display"."""

    model_config = ConfigDict(frozen=True)

    risky_names: list[str] = Field(default_factory=lambda: list(_DEFAULT_RISKY))
    guard_passwords: bool = True
    allowed_domains: list[str] = Field(default_factory=list)
    """Hosts a goto may reach without approval, subdomains included; the start URL's host always is."""


def _normalize_domain(domain: str) -> str:
    domain = domain.strip().lower()
    if "://" in domain:
        domain = urlsplit(domain).hostname or ""
    return domain.split(":", 1)[0].lstrip("*").strip(".")


def url_host(url: str) -> str:
    """The lowercase host of a URL, "" for relative URLs and hostless schemes."""
    return (urlsplit(url).hostname or "").lower()


def allowed_hosts(domains: Iterable[str], start_url: str) -> tuple[str, ...]:
    """The start URL's host plus the listed domains, normalized."""
    hosts = [url_host(start_url), *(_normalize_domain(d) for d in domains)]
    return tuple(dict.fromkeys(h for h in hosts if h))


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """True when `host` is one of `allowed` or a subdomain of one."""
    host = host.lower().rstrip(".")
    return any(host == domain or host.endswith("." + domain) for domain in allowed)


def _name_pattern(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(term.strip()) + r"(?!\w)", re.IGNORECASE)


def make_guard(rules: GuardRules, start_url: str) -> Guard:
    """Build the engine's guard: action text and target element in, tripped rule's name (or None) out."""
    patterns = [(term.strip(), _name_pattern(term)) for term in rules.risky_names if term.strip()]
    hosts = allowed_hosts(rules.allowed_domains, start_url)

    def guard(action: str, target: ElementInfo | None) -> str | None:
        try:
            parsed = parse_action(action)
        except ActionSyntaxError:
            return None  # the environment's check() rejects it before it can run
        if isinstance(parsed, Goto):
            parts = urlsplit(resolve_url(parsed.url, start_url))
            if parts.scheme.lower() not in _WEB_SCHEMES:
                return f"goto to a non-web URL ({parts.scheme}:)"
            host = (parts.hostname or "").lower()
            if host and not host_allowed(host, hosts):
                return f"goto outside allowed domains ({host})"
            return None
        if not isinstance(parsed, (Click, Type, Select)) or target is None:
            return None
        if rules.guard_passwords and isinstance(parsed, Type) and target.input_type.lower() == "password":
            return "password field"
        for term, pattern in patterns:
            if pattern.search(target.name):
                return f"element named {target.name!r} matches {term.lower()!r}"
        return None

    return guard


def resolve_url(url: str, base: str) -> str:
    """Where a goto lands: absolute URLs as they are, ``//host`` and ``www.`` ones as web URLs,
    anything else relative to `base` (the current page), as a link's href would be."""
    url = url.strip()
    if url.startswith("//"):
        return (urlsplit(base).scheme or "https") + ":" + url
    if url.lower().startswith("www."):
        return "https://" + url
    if urlsplit(url).scheme:
        return url
    return urljoin(base, url)
