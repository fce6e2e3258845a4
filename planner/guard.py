"""Which browser actions a person must approve before they run.

Pure policy over the action text and what the environment says it would touch (`ElementInfo`),
so the rules are testable without a browser and the engine can ask before anything irreversible
happens. Two kinds of rule:

- Names. A risky term in an element's name, a password field, or Enter in a field whose form has a
  risky submit control. Names and terms are compared in one form (`normalize_name`), so spacing,
  case or letters that look Latin cannot hide a term.
- URLs. A goto (or a link, or a form's action) must stay on the allowed hosts over http(s), resolved
  by the WHATWG parser the browser follows, so what the guard decided on and where the browser goes
  cannot differ.

(docs/architecture.md, "planner/guard.py")
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache, cached_property
from urllib.parse import unquote

import ada_url
from pydantic import BaseModel, ConfigDict, Field

from planner.actions import ActionSyntaxError, Click, Goto, Select, Type, parse_action
from planner.protocols import ElementInfo

__all__ = [
    "Guard",
    "GuardRules",
    "allowed_hosts",
    "host_allowed",
    "is_web_url",
    "make_guard",
    "normalize_name",
    "resolve_url",
    "url_host",
]

Guard = Callable[[str, ElementInfo | None], str | None]
"""Returns the name of the rule an action trips, or None when it may run unattended."""

_WEB_SCHEMES = frozenset({"http:", "https:"})
_NO_OP_SCRIPT = re.compile(r"\s*(?:void\s*\(\s*0\s*\)|void\s+0)?\s*;?\s*", re.IGNORECASE)
"""The script of `javascript:`, `javascript:;`, `javascript:void(0)` and `javascript:void 0`."""
_IP_HOSTS = frozenset({ada_url.HostType.IPV4, ada_url.HostType.IPV6})

_DEFAULT_RISKY = [
    # spending money or committing to an order
    "buy",
    "purchase",
    "pay",
    "checkout",
    "place order",
    "submit order",
    "confirm order",
    "complete order",
    "add to cart",
    "add to basket",
    "add to bag",
    "subscribe",
    # destroying data
    "delete",
    "remove account",
    "close account",
]
"""Terms in normalized form. One word covers its phrases ("pay" covers "Pay now", "purchase"
covers "Confirm purchase") and its spellings with spaces ("checkout" covers "Check out"); a
phrase is listed only where its words alone are everyday words ("order", "cart", "account")."""


@cache
def _confusables() -> dict[int, str]:
    """A `str.translate` table from every letter, digit or mark that Unicode's TR39 data says looks
    like an ASCII letter or digit to that character, lowercase: the skeleton's prototype.

    Built on first use, once per process, from confusable-homoglyphs' copy of confusables.txt
    (0.9 MB of JSON, so not at import). ASCII letters keep their own reading, case aside (the
    matcher reads I and l alike, as TR39 does); ASCII digits fold as TR39 folds them (0 as o, 1 as
    l). Punctuation and symbols (| for l) stay separators: read as letters they would glue words
    together ("Checkout|" as "checkoutl") and hide more than they show.
    """
    from confusable_homoglyphs import confusables

    table: dict[int, str] = {}
    for prototype in string.ascii_letters + string.digits:
        for entry in confusables.confusables_data.get(prototype, ()):
            char = entry["c"].strip("\u200e")  # the data wraps right-to-left letters in LRM marks
            if len(char) == 1 and char not in string.ascii_letters and unicodedata.category(char)[0] in "LMN":
                table[ord(char)] = prototype.casefold()
    return table


def normalize_name(text: str) -> str:
    """The form names and terms are compared in: compatibility characters folded (NFKC: full-width
    and mathematical letters, non-breaking and ideographic spaces), invisible format characters
    (zero-width spaces and joiners, soft hyphens) and combining accents dropped, look-alike letters
    and digits read as the ASCII letter they look like (TR39 confusables: Cyrillic а as a, Greek Ρ
    as p, 0 as o), case folded, and every run of whitespace, punctuation or symbols turned into one
    space.

    Look-alikes are folded before case (Cyrillic В looks like B, its lowercase в like no Latin
    letter) and again after it (for lowercase forms only case folding produces).
    """
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    kept = (c for c in decomposed if unicodedata.category(c) not in ("Cf", "Mn", "Me"))
    table = _confusables()
    folded = unicodedata.normalize("NFKC", "".join(kept)).translate(table).casefold().translate(table)
    words = "".join(c if c.isalnum() else " " for c in folded)
    return " ".join(words.split())


_READ_ALIKE = {"i": "[il]", "l": "[il]", "m": "(?:m|r ?n)"}
"""ASCII letters TR39 confuses with other ASCII: I with l (so, case aside, i with l) and m with rn."""


def _term_pattern(term: str) -> str:
    """A normalized term's letters in order, with or without a space between any two: the term
    as written, as one word ("placeorder") or spelled out ("p l a c e o r d e r")."""
    return " ?".join(_READ_ALIKE.get(c, re.escape(c)) for c in term.replace(" ", ""))


class GuardRules(BaseModel):
    """What counts as risky. Names match whole words after `normalize_name`: "pay" hits "Pay now"
    and "PAY-NOW" but not "Display" or "Payment"; a phrase also matches written as one word
    ("PlaceOrder"). Letters spelled out one by one carry no word breaks, so a term anywhere in such
    a run counts ("B U Y N O W" holds "buy")."""

    model_config = ConfigDict(frozen=True)

    risky_names: list[str] = Field(default_factory=lambda: list(_DEFAULT_RISKY))
    guard_passwords: bool = True
    allowed_domains: list[str] = Field(default_factory=list)
    """Hosts a goto may reach without approval, subdomains included; the start URL's host always is."""

    @cached_property
    def _matcher(self) -> tuple[re.Pattern[str], tuple[str, ...]]:
        """One regex over every normalized term, one group per term, and the terms in group order;
        built once per rule set."""
        terms = tuple(term for term in dict.fromkeys(normalize_name(t) for t in self.risky_names) if term)
        groups = "|".join(f"({_term_pattern(term)})" for term in terms)
        return re.compile(rf"(?<!\S)(?:{groups})(?!\S)" if terms else r"(?!)"), terms

    def risky_term(self, text: str) -> str | None:
        """The risky term `text` holds first, as whole words, written as one word or spelled out:
        the one name rule, for an element's names and for what a page's dialog asks alike."""
        pattern, terms = self._matcher
        match = pattern.search(normalize_name(text))
        return None if match is None else terms[(match.lastindex or 0) - 1]  # the one group that matched


def resolve_url(url: str, base: str) -> str | None:
    """Where a goto lands, as an absolute URL, or None when it cannot be parsed.

    WHATWG resolution against `base` (the current page), exactly as a link's href would be
    resolved: `https:host/x` on an http page and `http:\\\\host/x` reach another host, while
    `http:host/x` on an http page is a relative path. The parser's output is canonical (IPv4
    numbers in dotted decimal, IDNA hosts, lowercase), so re-parsing it anywhere gives the same
    host. One convenience on top: `www.host` without a scheme means https://www.host, as people
    (and models) write it.
    """
    url = url.strip()
    if url[:4].lower() == "www.":
        url = "https://" + url
    try:
        return ada_url.join_url(base, url) if base else ada_url.URL(url).href
    except ValueError:
        return None


def url_host(url: str) -> str:
    """The canonical host of an absolute URL ("" for hostless schemes and unparseable text)."""
    try:
        return ada_url.URL(url).hostname
    except ValueError:
        return ""


def is_web_url(url: str) -> bool:
    """http and https are the web; javascript:, data:, file:, blob:, view-source: ... are not."""
    try:
        return ada_url.URL(url).protocol in _WEB_SCHEMES
    except ValueError:
        return False


def _leaves_the_web(url: str) -> str | None:
    """Why following a link or submitting a form to `url` needs approval though it reaches no
    other host: it is not a web URL, or cannot be parsed.

    blob: URLs (the page's own objects) pass, and so do javascript: URLs whose script does nothing
    (`javascript:void(0)`, `javascript:;` ... case, spaces and percent-escapes folded), which real
    sites put on every "Show more" anchor: what the page's own click handler then does is fenced
    by the environment, not judged here. Any other script is held.
    """
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return "an unparseable URL"
    scheme = parsed.protocol
    if scheme in _WEB_SCHEMES or scheme == "blob:":
        return None
    if scheme == "javascript:" and _NO_OP_SCRIPT.fullmatch(unquote(parsed.href[len(scheme) :])):
        return None
    return f"a non-web URL ({scheme})"


def _canonical_host(domain: str) -> str:
    """A configured domain in the form `url_host` returns hosts: "*.Example.org." -> "example.org"."""
    domain = domain.strip()
    if "://" not in domain:
        domain = "http://" + domain.lstrip("*.")
    return url_host(domain).rstrip(".")


def allowed_hosts(domains: Iterable[str], start_url: str) -> tuple[str, ...]:
    """The start URL's host plus the listed domains, canonical."""
    hosts = [url_host(start_url).rstrip("."), *(_canonical_host(d) for d in domains)]
    return tuple(dict.fromkeys(h for h in hosts if h))


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """True when `host` is one of `allowed` or a subdomain of one (IP addresses match exactly)."""
    host = host.lower().rstrip(".")
    if not host:
        return False
    return any(host == domain or (not _is_ip(domain) and host.endswith("." + domain)) for domain in allowed)


def _is_ip(host: str) -> bool:
    try:
        return ada_url.URL(f"http://{host}/").host_type in _IP_HOSTS
    except ValueError:
        return False


def make_guard(rules: GuardRules, start_url: str) -> Guard:
    """Build the engine's guard: action text and target element in, tripped rule's name (or None) out.

    For a goto the target carries the URL the environment will open (resolved against the page it
    is on); without a target (no browser) the goto is resolved against the start URL. A click or
    an Enter that follows a link or submits a form is held when the URL (resolved by the browser)
    leaves the allowed hosts or the web; see `_leaves_the_web` for the javascript: forms that pass.
    """
    hosts = allowed_hosts(rules.allowed_domains, start_url)

    def leaves(url: str) -> str | None:
        """The host a web URL leads to when that host is not allowed."""
        host = url_host(url)
        return None if host_allowed(host, hosts) else host

    def guard(action: str, target: ElementInfo | None) -> str | None:
        try:
            parsed = parse_action(action)
        except ActionSyntaxError:
            return None  # the environment's check() rejects it before it can run
        if isinstance(parsed, Goto):
            url = target.url if target is not None else resolve_url(parsed.url, start_url)
            if not url:
                return "goto to an unparseable URL"
            if not is_web_url(url):
                return f"goto to a non-web URL ({ada_url.URL(url).protocol})"
            host = leaves(url)
            return f"goto outside allowed domains ({host})" if host is not None else None
        if not isinstance(parsed, (Click, Type, Select)) or target is None:
            return None
        submits = isinstance(parsed, Type) and parsed.enter
        if rules.guard_passwords and isinstance(parsed, Type) and target.input_type.lower() == "password":
            return "password field"
        for text in (target.name, *target.texts):
            if (term := rules.risky_term(text)) is not None:
                return f"element named {text!r} matches {term!r}"
        if submits:
            for text in target.form_submits:
                if (term := rules.risky_term(text)) is not None:
                    return f"Enter submits a form with {text!r}, which matches {term!r}"
        if target.url and (isinstance(parsed, Click) or submits):
            verb = "click" if isinstance(parsed, Click) else "Enter"
            if not is_web_url(target.url):
                where = _leaves_the_web(target.url)
                return f"{verb} leads to {where}" if where is not None else None
            host = leaves(target.url)
            if host is not None:
                return f"{verb} leads outside allowed domains ({host})"
        return None

    return guard
