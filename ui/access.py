"""Who the console's operator is, what they may do, and whether the console may serve at all.

The operator is known, in this order, from a sign-in proxy's header (`ANDOR_AUTH_HEADER`; beyond
loopback trusted only with `ANDOR_AUTH_PROXY_SECRET` set, since anyone who reaches the console
directly can write that header), from Streamlit's `st.login`, or else as the machine's operator,
which is only safe when nobody else can reach the page, so the console then serves only while
`server.address` is a loopback address.

Roles (watch, edit, approve) come from `ANDOR_ROLES`; without it the machine's operator on loopback
has every role and a signed-in operator may only watch; an operator given no role is refused. What
each command needs is one table (`COMMAND_ROLES`), which `ui.commands.send` enforces for every
command the console sends (docs/architecture.md, "ui/access.py").
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import streamlit as st

from planner.commands import Command, sender
from sessions.client.identity import UnusableOperator, local_operator
from sessions.client.markdown import md

__all__ = [
    "COMMAND_ROLES",
    "PROXY_SECRET_HEADER",
    "ROLES",
    "WRITE_ROLES",
    "AccessRefused",
    "Headers",
    "NotSignedIn",
    "Operator",
    "admit",
    "current",
    "drawing_for",
    "identify",
    "is_loopback",
    "locked",
    "parse_roles",
    "refusal",
    "refused_now",
    "show_operator",
]

ROLES = ("watch", "edit", "approve")
"""Every role, in the order a sentence lists them."""
_EVERY = frozenset(ROLES)
_WATCH = frozenset({"watch"})

COMMAND_ROLES: dict[str, tuple[str, frozenset[str]]] = {
    "pause": ("pause the run", frozenset({"edit"})),
    "resume": ("resume the run", frozenset({"edit"})),
    "step": ("step the run", frozenset({"edit"})),
    "stop": ("stop the run", frozenset({"edit"})),
    "inject": ("inject sub-goals", frozenset({"edit"})),
    "prune": ("prune", frozenset({"edit"})),
    "edit": ("edit a description", frozenset({"edit"})),
    "reopen": ("reopen a node", frozenset({"edit"})),
    "force": ("force an alternative", frozenset({"edit"})),
    "undo": ("undo an edit", frozenset({"edit"})),
    "plan": ("change the plan", frozenset({"edit"})),
    "breakpoints": ("set breakpoints", frozenset({"edit"})),
    "breakpoint": ("set a breakpoint", frozenset({"edit"})),
    "constraints": ("change the constraints", frozenset({"edit"})),
    "budget": ("change the cost cap", frozenset({"edit"})),
    "approve": ("approve an action", frozenset({"approve"})),
    "reject": ("reject an action", frozenset({"approve"})),
    # An edited action replaces a planned one (an edit) and, when it is guarded, also approves it.
    "edit_action": ("replace an action", frozenset({"edit", "approve"})),
}
"""Each command kind: what the refusal says the operator may not do, and the roles it needs (all of them).
Templates and an adopted counterfactual are sent as these kinds (inject, plan, edit_action, ...)."""

WRITE_ROLES: dict[str, tuple[str, frozenset[str]]] = {
    "start": ("start a session", frozenset({"edit"})),
    "fork": ("fork a session", frozenset({"edit"})),
    "templates": ("change the plan templates", frozenset({"edit"})),
    "verdict": ("accept or reject an answer", frozenset({"approve"})),
}
"""What the console writes to the store without a command (a new session, a fork, the template
library), in `COMMAND_ROLES`' terms: a watcher changes nothing, whichever way the write goes."""

_ROLES_SYNTAX = "write NAME=ROLE+ROLE entries separated by commas, with * for everyone else"

PROXY_SECRET_HEADER = "X-Andor-Proxy-Secret"
"""The request header in which the sign-in proxy sends `ANDOR_AUTH_PROXY_SECRET`, proving that a
request came through it (and so that its `ANDOR_AUTH_HEADER` is the proxy's, not a client's)."""
_MIN_SECRET_CHARS = 16
"""A shorter shared secret could be guessed by trying: the console would then trust a forged header."""


class AccessRefused(Exception):
    """The console will not serve this request, or not to this person; the message is the page's one sentence."""


class NotSignedIn(AccessRefused):
    """`st.login` is configured and this browser has not signed in yet: the page offers the sign-in."""


class Headers(Protocol):
    """What is read of the request's headers (`st.context.headers`): every value of one header."""

    def get_all(self, key: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Operator:
    """The person at this page: their name as commands carry it (None: not known) and their roles."""

    name: str | None
    roles: frozenset[str]

    @property
    def label(self) -> str:
        return self.name or "this operator"

    def refusal(self, kind: str) -> str | None:
        """Why this operator may not send a command of this kind (or make a write of `WRITE_ROLES`), in one
        sentence; None when they may."""
        verb, needed = COMMAND_ROLES[kind] if kind in COMMAND_ROLES else WRITE_ROLES[kind]
        missing = [role for role in ROLES if role in needed and role not in self.roles]
        if not missing:
            return None
        roles = " and ".join(missing)
        return f"{self.label} may not {verb}: needs the {roles} role{'s' if len(missing) > 1 else ''}"

    def sign(self, command: Command) -> Command | str:
        """The command as this operator sends it (`by` is always theirs: a page cannot send for someone
        else), or the sentence saying why they may not send it."""
        refused = self.refusal(command.kind)
        return refused if refused else command.model_copy(update={"by": self.name})


@lru_cache(maxsize=8)
def parse_roles(text: str) -> dict[str, frozenset[str]]:
    """`ANDOR_ROLES` as {operator name (case-folded) or "*": roles}; any role includes watch.

    Raises ValueError with one sentence naming the first bad entry."""
    table: dict[str, frozenset[str]] = {}
    for entry in text.split(","):
        name, equals, spelled = (part.strip() for part in entry.partition("="))
        if not entry.strip():
            raise ValueError(f"ANDOR_ROLES has an empty entry; {_ROLES_SYNTAX}")
        if not equals or not name or not spelled:
            raise ValueError(f"ANDOR_ROLES entry '{entry.strip()}' is not NAME=ROLE; {_ROLES_SYNTAX}")
        roles = [role.strip() for role in spelled.split("+")]
        unknown = [role for role in roles if role not in _EVERY]
        if unknown:
            raise ValueError(
                f"ANDOR_ROLES entry '{entry.strip()}' names an unknown role '{unknown[0]}'; "
                "the roles are watch, edit and approve"
            )
        key = name.casefold()
        if key in table:
            raise ValueError(f"ANDOR_ROLES names '{name}' twice; give each operator one entry")
        table[key] = frozenset(roles) | _WATCH
    return table


def is_loopback(address: str | None) -> bool:
    """Whether only this machine can reach a server listening on `address`. Unset or empty, Streamlit
    listens on every interface, so that is not loopback."""
    if not address:
        return False
    if address.strip().casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost may resolve to anything
        return False


def identify(env: Mapping[str, str], headers: Headers, address: str | None, user: Mapping[str, Any] | None) -> Operator:
    """The operator of one request: `env` the console's environment, `headers` the request's, `address`
    the server's `server.address`, `user` the `st.user` of a console with `st.login` configured (None
    without). Raises `AccessRefused` (or `NotSignedIn`) with the page's sentence."""
    name: str | None
    header = env.get("ANDOR_AUTH_HEADER", "").strip()
    if header:
        _through_proxy(env.get("ANDOR_AUTH_PROXY_SECRET", "").strip(), header, headers, address)
        name, signed_in = _from_header(header, headers.get_all(header)), True
    elif user is not None:
        name, signed_in = _from_login(user), True
    elif is_loopback(address):
        try:
            name, signed_in = local_operator(), False
        except UnusableOperator as error:
            raise AccessRefused(str(error)) from None
    else:
        raise AccessRefused(
            f"This console listens on {address or 'every interface'} without a sign-in, so it serves no one: "
            "listen on 127.0.0.1, or set ANDOR_AUTH_HEADER and ANDOR_AUTH_PROXY_SECRET behind a signing-in proxy, "
            "or configure st.login in .streamlit/secrets.toml."
        )
    spelled = env.get("ANDOR_ROLES", "").strip()
    if not spelled:
        return Operator(name, _WATCH if signed_in else _EVERY)
    try:
        table = parse_roles(spelled)
    except ValueError as error:
        raise AccessRefused(f"{error}.") from None
    roles = table.get((name or "").casefold(), table.get("*", frozenset()))
    if not roles:
        raise AccessRefused(f"{name or 'This operator'} has no role on this console (see ANDOR_ROLES).")
    return Operator(name, roles)


def _through_proxy(secret: str, header: str, headers: Headers, address: str | None) -> None:
    """Refuse a request whose `header` may not be the sign-in proxy's: beyond loopback, any client can
    send it, so the request must carry the proxy's shared `secret` (compared in constant time, so the
    time a refusal takes says nothing about how much of a guess was right). On loopback without a
    secret, only this machine reaches the console, and its proxy is trusted."""
    if not secret:
        if is_loopback(address):
            return
        raise AccessRefused(
            f"This console listens on {address or 'every interface'} and would trust any client's {header} header, "
            "so it serves no one: set ANDOR_AUTH_PROXY_SECRET to a long random value that the sign-in proxy sends "
            f"in the {PROXY_SECRET_HEADER} header."
        )
    if len(secret) < _MIN_SECRET_CHARS:
        raise AccessRefused(
            f"ANDOR_AUTH_PROXY_SECRET is shorter than {_MIN_SECRET_CHARS} characters, so the console serves no one: "
            "give it a long random value, such as `openssl rand -hex 32` prints."
        )
    sent = headers.get_all(PROXY_SECRET_HEADER)
    if len(sent) != 1 or not hmac.compare_digest(sent[0].encode(), secret.encode()):
        raise AccessRefused(
            f"This request did not come through the sign-in proxy (no valid {PROXY_SECRET_HEADER} header), "
            "so it is refused."
        )


def _from_header(header: str, values: list[str]) -> str:
    """The proxy's one value of the header: none, several (a client's own beside the proxy's) or an
    unusable one are all refused, never guessed between."""
    if not values:
        raise AccessRefused(f"This console is behind a sign-in proxy and this request has no {header} header.")
    name = sender({"by": values[0]}) if len(values) == 1 else None
    if name is None:
        raise AccessRefused(f"The request's {header} header does not name one operator, so it is refused.")
    return name


def _from_login(user: Mapping[str, Any]) -> str:
    if not user.get("is_logged_in"):
        raise NotSignedIn("Sign in to use this console.")
    for claim in ("email", "name", "sub"):
        name = sender({"by": user.get(claim)})
        if name is not None:
            return name
    raise AccessRefused("The sign-in gave no usable e-mail address or name, so this console cannot say who you are.")


def current() -> Operator:
    """The operator of the request being drawn (or of the press being handled); see `identify`."""
    login = st.user if st.secrets.load_if_toml_exists() and "auth" in st.secrets else None
    return identify(os.environ, st.context.headers, st.get_option("server.address"), login)


_DRAWN_FOR = "_access_drawn_for"
"""Session state: the operator (or the refusal) the page is being drawn for, resolved once per run."""


def drawing_for() -> Operator | AccessRefused:
    """Resolve the operator for the run about to draw (the page's whole run, and each run of the live
    panel's fragment): the twenty-odd buttons of a redraw ask `refusal` of it instead of reading the
    request, the secrets and the environment again (0.2 ms each). `ui.commands.send` still asks
    `current` itself: a press is judged by the rule, never by what a page was drawn with."""
    try:
        drawn: Operator | AccessRefused = current()
    except AccessRefused as refused:
        drawn = refused
    st.session_state[_DRAWN_FOR] = drawn
    return drawn


def refused_now(kind: str) -> str | None:
    """Why the operator of the press being handled may not do `kind` (None: they may), judged by the
    rule (`current`), as `ui.commands.send` judges a command: for the writes of `WRITE_ROLES`."""
    try:
        return current().refusal(kind)
    except AccessRefused as refused:
        return str(refused)


def refusal(kind: str) -> str | None:
    """Why the operator at this page may not send a command of this kind (None: they may): a view
    disables the button or form and shows this as its help."""
    drawn = st.session_state.get(_DRAWN_FOR)
    if drawn is None:
        drawn = drawing_for()
    return str(drawn) if isinstance(drawn, AccessRefused) else drawn.refusal(kind)


def locked(kind: str) -> dict[str, Any]:
    """A button's `disabled` and `help` when the operator may not send this kind ({} when they may), for
    `st.button(..., **locked("prune"))`: the help says which role it needs."""
    why = refusal(kind)
    return {"disabled": True, "help": md(why)} if why else {}


def admit() -> Operator | None:
    """The page's operator, or None after drawing the one sentence that says why the console will not
    serve this request (with a sign-in button when signing in would help): the page draws nothing else."""
    drawn = drawing_for()
    if isinstance(drawn, Operator):
        return drawn
    if isinstance(drawn, NotSignedIn):
        st.info(md(str(drawn)))
        st.button("Sign in", key="sign_in", on_click=st.login, type="primary")
    else:
        st.error(md(str(drawn)))
    return None


def show_operator(operator: Operator) -> None:
    """Who the console thinks is at the page and what they may do, in the sidebar (with a sign-out for
    `st.login`), so a refused press never comes as a surprise."""
    roles = ", ".join(role for role in ROLES if role in operator.roles)
    with st.sidebar:
        st.caption(f"Operator: **{md(operator.label)}** · {roles}")
        if st.user.get("is_logged_in"):
            st.button("Sign out", key="sign_out", on_click=st.logout)
