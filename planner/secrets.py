"""Secrets: values the agent may type but no person, file or model prompt may see. One module owns masking.

A secret is declared with a session or found while it runs (a value the agent is about to type into
a password field). The task and the model write a declared one as `{{NAME}}`; only the browser ever
holds its value:

- `fill` puts the values in where an action is typed (the browser types the value);
- `hide` is what the model is shown of a page: a declared value as its `{{NAME}}`, a found one as `MASK`;
- `mask` is what people and files see: every value as `MASK`, also as it appears URL-encoded,
  HTML-escaped or JSON-escaped (a form posted in a URL, a page's markup, a model's raw JSON reply).

Clients read masked events (`mask_event`), so the console, the exports and the command line show
nothing else; the runner and the engine read the raw log. A declared value shorter than `MIN_CHARS`
is refused: masking it would hide ordinary text everywhere. (docs/architecture.md, "planner/secrets.py")
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Iterable, Mapping
from enum import Enum
from types import MappingProxyType
from typing import Any, NoReturn
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

from planner.actions import ActionSyntaxError, Type, parse_action
from planner.config import EngineConfig
from planner.events import PAYLOADS, Event, Kind, SecretFound, SessionCreated
from planner.inputs import InputError

__all__ = ["MASK", "MIN_CHARS", "PLACEHOLDER", "Secrets", "placeholders", "secrets_in", "typed_text"]

MASK = "••••"
"""What a secret is shown as."""
MIN_CHARS = 4
"""The shortest value a secret may be declared with."""
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]{0,63})\}\}")
"""`{{NAME}}`: a letter or underscore, then letters, digits and underscores, 64 characters at most."""


def placeholders(text: str) -> list[str]:
    """The names `text` writes as placeholders, each once, in the order they first appear."""
    return list(dict.fromkeys(match[1] for match in PLACEHOLDER.finditer(text)))


def typed_text(action: str) -> str | None:
    """The text a `type` action types, None for any other action (or one that does not parse)."""
    try:
        parsed = parse_action(action)
    except ActionSyntaxError:
        return None
    return parsed.text if isinstance(parsed, Type) else None


def _forms(value: str) -> set[str]:
    """`value` as a page, a URL or a JSON text may hold it: as is, URL-encoded, HTML-escaped, JSON-escaped."""
    forms = {
        value,
        quote(value),
        quote(value, safe=""),
        quote_plus(value),
        html.escape(value),
        html.escape(value, quote=False),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
    }
    return {form for form in forms if form}


def _pattern(forms: Iterable[str]) -> re.Pattern[str] | None:
    """One regular expression matching any of `forms`, the longest first (so a value that contains
    another is replaced whole); None for none."""
    ordered = sorted(set(forms), key=lambda form: (-len(form), form))
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


class Secrets:
    """The secrets of one session: `declared` (name -> value) and `found` (values, nameless). Immutable.

    Equal when they hold the same secrets; its repr names the declared ones and counts the found ones,
    never showing a value.
    """

    __slots__ = ("_declared", "_found", "_hidden", "_pattern")
    _declared: Mapping[str, str]
    _found: frozenset[str]
    _hidden: dict[str, str]
    _pattern: re.Pattern[str] | None

    def __init__(self, declared: Mapping[str, str] | None = None, found: Iterable[str] = ()) -> None:
        declared = dict(declared or {})
        for name, value in declared.items():
            if not PLACEHOLDER.fullmatch("{{" + str(name) + "}}"):
                raise InputError(
                    f"'{str(name)[:70]}' is not a secret's name; use a letter or underscore, then letters, digits "
                    "or underscores (64 at most)"
                )
            if not isinstance(value, str) or len(value) < MIN_CHARS:
                raise InputError(
                    f"the secret {name} is shorter than {MIN_CHARS} characters; masking it would hide ordinary text "
                    "wherever it appears"
                )
        found_values = frozenset(value for value in found if value)
        hidden: dict[str, str] = {}
        for value in found_values:
            hidden.update(dict.fromkeys(_forms(value), MASK))
        for name, value in sorted(declared.items(), key=lambda item: len(item[1])):
            hidden.update(dict.fromkeys(_forms(value), "{{" + name + "}}"))
        setter = object.__setattr__
        setter(self, "_declared", MappingProxyType(declared))
        setter(self, "_found", found_values)
        setter(self, "_hidden", hidden)
        setter(self, "_pattern", _pattern(hidden))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Secrets is immutable")

    @property
    def declared(self) -> Mapping[str, str]:
        return self._declared

    @property
    def found(self) -> frozenset[str]:
        return self._found

    def values(self) -> frozenset[str]:
        """Every secret value, declared or found."""
        return self._found | frozenset(self._declared.values())

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secrets):
            return NotImplemented
        return dict(self._declared) == dict(other._declared) and self._found == other._found

    def __hash__(self) -> int:
        return hash((frozenset(self._declared.items()), self._found))

    def __reduce__(self) -> tuple[type[Secrets], tuple[dict[str, str], frozenset[str]]]:
        """Copied and pickled by what it holds (its immutability keeps the default way from setting slots)."""
        return Secrets, (dict(self._declared), self._found)

    def __repr__(self) -> str:
        return f"Secrets(declared={sorted(self._declared)}, found={len(self._found)} values)"

    def with_found(self, value: str) -> Secrets:
        """These secrets and `value`, found typed into a password field."""
        if not value or value in self._found:
            return self
        return Secrets(self._declared, self._found | {value})

    def fill(self, text: str) -> str:
        """`text` with each placeholder of a declared secret replaced by its value (what the browser
        types); a placeholder of no declared secret stays as written."""
        if not self._declared or "{{" not in text:
            return text
        return PLACEHOLDER.sub(lambda match: self._declared.get(match[1], match[0]), text)

    def hide(self, text: str) -> str:
        """What a model may be shown of `text` (a page's text, URL or title): each declared value as its
        `{{NAME}}`, each found value as `MASK`, in every form `mask` knows."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda match: self._hidden[match[0]], text)

    def mask(self, text: str) -> str:
        """What a person or a file may see of `text`: every secret value as `MASK`, in every form."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def revealed_by(self, typed: str) -> str | None:
        """The value typing `typed` (placeholders and all) into a password field would reveal, to record as
        found; None when that is no new secret: nothing typed, a value already secret, or only
        placeholders of declared secrets."""
        value = self.fill(typed)
        if not value or value in self._found or value in self._declared.values():
            return None
        if not PLACEHOLDER.sub(lambda match: "" if match[1] in self._declared else match[0], typed):
            return None
        return value

    def mask_event(self, event: Event) -> Event:
        """A copy of `event` with every text its payload holds masked; the event itself when none changes
        (always, for a session without secrets).

        The payload is walked as the typed object it is rather than as its JSON text, which would also
        rewrite a field name or an enum value equal to a secret: field names, enum members and numbers
        stay as they are, every string (a mapping's keys included) is masked. Settings are no text and
        stay too (`EngineConfig`, a `config_changed`): a setting's value equal to a secret ("root") is
        no secret shown, and masked it would no longer be a setting. The copy is validated as its
        kind's payload, as a stored one is read.
        """
        if self._pattern is None or event.kind is Kind.CONFIG_CHANGED:
            return event
        masked, changed = self._walk(event.payload)
        if not changed:
            return event
        payload = PAYLOADS[event.kind].model_validate(masked)
        return dataclasses.replace(event, payload=payload)

    def _walk(self, value: Any) -> tuple[Any, bool]:
        """`value` with its strings masked, and whether any changed; an unchanged part is the same object."""
        if isinstance(value, str):
            if isinstance(value, Enum):
                return value, False
            masked = self.mask(value)
            return masked, masked != value
        if isinstance(value, EngineConfig):
            return value, False
        if isinstance(value, BaseModel) or dataclasses.is_dataclass(value):
            names = type(value).model_fields if isinstance(value, BaseModel) else value.__dataclass_fields__
            fields = {name: self._walk(getattr(value, name)) for name in names}
            if not any(changed for _, changed in fields.values()):
                return value, False
            return {name: item for name, (item, _) in fields.items()}, True
        if isinstance(value, Mapping):
            pairs = [(self._walk(key), self._walk(item)) for key, item in value.items()]
            if not any(key[1] or item[1] for key, item in pairs):
                return value, False
            return {key: item for (key, _), (item, _) in pairs}, True
        if isinstance(value, list | tuple):
            items = [self._walk(item) for item in value]
            if not any(changed for _, changed in items):
                return value, False
            return [item for item, _ in items], True
        return value, False


def secrets_in(events: Iterable[Event], known: Secrets | None = None) -> Secrets:
    """The secrets a log declares (its `session_created`) and finds (its `secret_found`), added to `known`."""
    known = known if known is not None else Secrets()
    declared = dict(known.declared)
    found = set(known.found)
    for event in events:
        payload = event.payload
        if isinstance(payload, SessionCreated):
            declared.update(payload.secrets)
        elif isinstance(payload, SecretFound):
            found.add(payload.value)
    if declared == dict(known.declared) and found == set(known.found):
        return known
    return Secrets(declared, found)
