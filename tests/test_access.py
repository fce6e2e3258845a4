"""Operators and access (`ui/access.py`): who the operator is, what their roles let them send, and
when the console refuses to serve (and when it trusts a sign-in proxy's header); then the console
itself (AppTest) refusing a watcher's prune, signing an approver's approval, and drawing nothing but
the refusal off loopback."""

from __future__ import annotations

import time

import pytest
from conftest import BROWNIE_TASK, SCRIPTS, load
from console_helpers import console_app, node_picker
from streamlit import config
from streamlit.runtime.context import StreamlitHeaders

from planner.browser.dry import DryEnvironment
from planner.commands import COMMAND_MODELS, Approve, Prune
from planner.events import CommandApplied, CommandRejected
from planner.models.scripted import ScriptedModel
from planner.state import RunStatus
from sessions.backends import Backend
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.client.markdown import md
from sessions.store import EventStore
from sessions.store.reading import load_state
from sessions.store.sql import open_store
from sessions.worker.runner import Runner
from ui.access import (
    COMMAND_ROLES,
    PROXY_SECRET_HEADER,
    AccessRefused,
    NotSignedIn,
    Operator,
    identify,
    is_loopback,
    parse_roles,
)

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"
NONE = StreamlitHeaders([])
PROXY = {"ANDOR_AUTH_HEADER": "X-Forwarded-User"}
SECRET = "b8f0c1d2e3a4f5061728394a5b6c7d8e"
SIGNED = {**PROXY, "ANDOR_AUTH_PROXY_SECRET": SECRET}
"""A console behind a sign-in proxy that must prove itself with a shared secret (needed beyond loopback)."""


def headers(*pairs: tuple[str, str]) -> StreamlitHeaders:
    """A request's headers as `st.context.headers` gives them (names in any case, a name given twice kept twice)."""
    return StreamlitHeaders(pairs)


def via_proxy(*pairs: tuple[str, str]) -> StreamlitHeaders:
    """A request's headers as the proxy forwards it: with the proxy's secret."""
    return headers(*pairs, (PROXY_SECRET_HEADER, SECRET))


def refused(*args: object) -> str:
    with pytest.raises(AccessRefused) as why:
        identify(*args)  # type: ignore[arg-type]
    return str(why.value)


# -- roles -----------------------------------------------------------------------------------------------


def test_every_command_kind_needs_a_listed_role() -> None:
    assert set(COMMAND_ROLES) == set(COMMAND_MODELS)
    assert {role for _, roles in COMMAND_ROLES.values() for role in roles} == {"edit", "approve"}


def test_roles_are_read_from_name_equals_roles_entries() -> None:
    table = parse_roles(" alice@x.org=edit+approve , bob=watch,*=watch ")
    assert table == {
        "alice@x.org": frozenset({"watch", "edit", "approve"}),
        "bob": frozenset({"watch"}),
        "*": frozenset({"watch"}),
    }
    assert parse_roles("Carol=approve") == {"carol": frozenset({"watch", "approve"})}, "any role lets one watch"


@pytest.mark.parametrize(
    ("spelled", "sentence"),
    [
        ("bob", "ANDOR_ROLES entry 'bob' is not NAME=ROLE; write NAME=ROLE+ROLE entries separated by commas, "),
        ("bob=", "ANDOR_ROLES entry 'bob=' is not NAME=ROLE; "),
        ("=edit", "ANDOR_ROLES entry '=edit' is not NAME=ROLE; "),
        ("alice=edit,bob=admin", "ANDOR_ROLES entry 'bob=admin' names an unknown role 'admin'; the roles are "),
        ("alice=edit+", "ANDOR_ROLES entry 'alice=edit+' names an unknown role ''; "),
        ("alice=edit,,bob=watch", "ANDOR_ROLES has an empty entry; "),
        ("alice=edit,ALICE=watch", "ANDOR_ROLES names 'ALICE' twice; give each operator one entry"),
    ],
)
def test_a_malformed_roles_value_is_refused_naming_the_bad_entry(spelled: str, sentence: str) -> None:
    with pytest.raises(ValueError) as bad:
        parse_roles(spelled)
    assert str(bad.value).startswith(sentence) and "\n" not in str(bad.value)
    assert refused({"ANDOR_ROLES": spelled}, NONE, "127.0.0.1", None).startswith(sentence)


def test_a_refusal_names_the_operator_the_verb_and_the_missing_roles() -> None:
    watcher = Operator("bob", frozenset({"watch"}))
    assert watcher.refusal("prune") == "bob may not prune: needs the edit role"
    assert watcher.refusal("approve") == "bob may not approve an action: needs the approve role"
    assert watcher.refusal("edit_action") == "bob may not replace an action: needs the edit and approve roles"
    editor = Operator("alice", frozenset({"watch", "edit"}))
    assert editor.refusal("prune") is None and editor.refusal("reject") is not None
    signed = editor.sign(Prune(node="0.1", reason="r", by="mallory"))
    assert isinstance(signed, Prune) and signed.by == "alice" and signed.node == "0.1"
    assert editor.sign(Approve(node="0.1")) == "alice may not approve an action: needs the approve role"


# -- who the operator is, and whether the console serves ----------------------------------------------------


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"])
def test_loopback_addresses(address: str) -> None:
    assert is_loopback(address)


@pytest.mark.parametrize("address", [None, "", "0.0.0.0", "::", "192.168.1.4", "console.example.org"])
def test_addresses_others_can_reach(address: str | None) -> None:
    assert not is_loopback(address)


def test_on_loopback_without_sign_in_the_machines_operator_has_every_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDOR_OPERATOR", "dana")
    assert identify({}, NONE, "127.0.0.1", None) == Operator("dana", frozenset({"watch", "edit", "approve"}))
    assert identify({"ANDOR_ROLES": "dana=watch"}, NONE, "127.0.0.1", None) == Operator("dana", frozenset({"watch"}))
    assert refused({"ANDOR_ROLES": "erin=edit"}, NONE, "127.0.0.1", None) == (
        "dana has no role on this console (see ANDOR_ROLES)."
    )
    monkeypatch.setenv("ANDOR_OPERATOR", "dana\nmallory")
    assert refused({}, NONE, "127.0.0.1", None).startswith("$ANDOR_OPERATOR is not a usable operator name")


@pytest.mark.parametrize("address", [None, "0.0.0.0", "10.0.0.5"])
def test_beyond_loopback_without_sign_in_the_console_serves_no_one(address: str | None) -> None:
    sentence = refused({}, NONE, address, None)
    where = address or "every interface"
    assert sentence.startswith(f"This console listens on {where} without a sign-in, so it serves no one: ")
    assert sentence.count(". ") == 0 and sentence.endswith(".")


def test_behind_a_proxy_the_operator_is_the_header_and_a_request_without_it_is_refused() -> None:
    roles = {**SIGNED, "ANDOR_ROLES": "alice@x.org=edit+approve,*=watch"}
    alice = identify(roles, via_proxy(("x-forwarded-user", "Alice@X.org")), "0.0.0.0", None)
    assert alice == Operator("Alice@X.org", frozenset({"watch", "edit", "approve"})), "names match in any case"
    assert identify(roles, via_proxy(("X-Forwarded-User", "bob")), "0.0.0.0", None).roles == {"watch"}
    assert identify(SIGNED, via_proxy(("X-Forwarded-User", "bob")), "0.0.0.0", None).roles == {"watch"}, (
        "signed in, without ANDOR_ROLES, one may only watch"
    )
    assert refused(roles, via_proxy(), "127.0.0.1", None) == (
        "This console is behind a sign-in proxy and this request has no X-Forwarded-User header."
    )
    for bad in (via_proxy(("X-Forwarded-User", "bob\nmallory")), via_proxy(("X-Forwarded-User", "   "))):
        assert (
            refused(roles, bad, "0.0.0.0", None)
            == "The request's X-Forwarded-User header does not name one operator, so it is refused."
        )
    twice = via_proxy(("X-Forwarded-User", "alice@x.org"), ("X-Forwarded-User", "bob"))
    assert "does not name one operator" in refused(roles, twice, "0.0.0.0", None), "never guessed between two"


@pytest.mark.parametrize("address", [None, "0.0.0.0", "10.0.0.5"])
def test_beyond_loopback_a_proxys_header_is_trusted_only_with_its_shared_secret(address: str | None) -> None:
    """Anyone who reaches the console directly can write X-Forwarded-User; only the proxy knows the
    secret. Without one configured, a console others can reach serves no one, whatever a request says."""
    admin = headers(("X-Forwarded-User", "admin"))
    sentence = refused({**PROXY, "ANDOR_ROLES": "admin=edit+approve"}, admin, address, None)
    assert sentence == (
        f"This console listens on {address or 'every interface'} and would trust any client's X-Forwarded-User "
        "header, so it serves no one: set ANDOR_AUTH_PROXY_SECRET to a long random value that the sign-in proxy "
        f"sends in the {PROXY_SECRET_HEADER} header."
    )
    forged = (
        "This request did not come through the sign-in proxy (no valid X-Andor-Proxy-Secret header), so it is refused."
    )
    assert refused(SIGNED, admin, address, None) == forged, "a direct request, without the secret"
    for guess in ("", SECRET[:-1], SECRET + "0", SECRET.upper(), "ä" * 32):
        wrong = headers(("X-Forwarded-User", "admin"), (PROXY_SECRET_HEADER, guess))
        assert refused(SIGNED, wrong, address, None) == forged, guess
    both = headers(("X-Forwarded-User", "admin"), (PROXY_SECRET_HEADER, "guess"), (PROXY_SECRET_HEADER, SECRET))
    assert refused(SIGNED, both, address, None) == forged, "two values are never guessed between"
    assert identify(SIGNED, via_proxy(("X-Forwarded-User", "admin")), address, None).name == "admin"


def test_a_short_proxy_secret_is_refused_and_on_loopback_the_header_alone_is_trusted() -> None:
    short = {**PROXY, "ANDOR_AUTH_PROXY_SECRET": "hunter2"}
    assert refused(short, via_proxy(("X-Forwarded-User", "bob")), "0.0.0.0", None) == (
        "ANDOR_AUTH_PROXY_SECRET is shorter than 16 characters, so the console serves no one: "
        "give it a long random value, such as `openssl rand -hex 32` prints."
    )
    alone = headers(("X-Forwarded-User", "bob"))
    assert identify(PROXY, alone, "127.0.0.1", None).name == "bob", "only this machine, the proxy's, reaches it"
    assert "did not come through the sign-in proxy" in refused(SIGNED, alone, "127.0.0.1", None), (
        "a secret that is set is required on loopback too"
    )


def test_with_st_login_the_operator_is_the_signed_in_email() -> None:
    with pytest.raises(NotSignedIn, match="^Sign in to use this console.$"):
        identify({}, NONE, "0.0.0.0", {"is_logged_in": False})
    user = {"is_logged_in": True, "email": "alice@x.org", "name": "Alice"}
    assert identify({"ANDOR_ROLES": "alice@x.org=edit"}, NONE, "0.0.0.0", user).name == "alice@x.org"
    assert identify({}, NONE, "0.0.0.0", {"is_logged_in": True, "name": "Alice"}).name == "Alice"


# -- the console ------------------------------------------------------------------------------------------


def _paused_with_two_goals(store: EventStore) -> str:
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    queue_command(store, session_id, {"kind": "inject", "parent": "0", "node_type": "AND", "goals": ["find", "note"]})
    Runner(store, session_id).run(on_idle=lambda state: False)
    return session_id


def _handled(store: EventStore, session_id: str) -> list[CommandApplied | CommandRejected]:
    return [e.payload for e in store.load(session_id) if isinstance(e.payload, CommandApplied | CommandRejected)]


def _keyed(widgets, name: str):  # type: ignore[no-untyped-def]
    [widget] = [w for w in widgets if (w.key or "").startswith(f"{name}-")]
    return widget


def test_a_watchers_prune_is_refused_and_nothing_is_queued(app_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page was drawn while bob could still edit; his role is then cut to watch (a stale page, as a
    crafted request would be): the press is refused in `send`, and the page drawn after it disables it."""
    store = open_store(app_db)
    session_id = _paused_with_two_goals(store)
    before = _handled(store, session_id)
    monkeypatch.setenv("ANDOR_OPERATOR", "bob")
    monkeypatch.setenv("ANDOR_ROLES", "bob=edit,*=edit+approve")
    at = console_app()
    at.run()
    node_picker(at).select("0.1")
    at.run()
    _keyed(at.text_input, "prune_reason").input("not needed")
    monkeypatch.setenv("ANDOR_ROLES", "bob=watch,*=edit+approve")
    at.form_submit_button(key="prune_submit").click()
    at.run()
    assert [e.value for e in at.error] == [md("bob may not prune: needs the edit role")]
    assert store.pending(session_id) == [], "the refused prune was never queued"
    assert "Operator: **bob** · watch" in [c.value for c in at.sidebar.caption]
    prune = at.form_submit_button(key="prune_submit")
    assert prune.disabled and prune.help == md("bob may not prune: needs the edit role")
    assert at.button(key="ctl_resume").disabled, "a watcher's run controls are disabled"
    assert _handled(store, session_id) == before
    assert load_state(store, session_id).tree["0.1"].status.value == "UNVISITED"
    store.close()


def test_a_watcher_starts_no_session_and_saves_no_template(app_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes that are not commands (a new session, the template library) follow the same roles: drawn
    while bob could edit, then cut to watch, his presses write nothing (a template's callback is refused
    by the rule; the start form, judged in the run that draws it, is drawn disabled)."""
    store = open_store(app_db)
    session_id = _paused_with_two_goals(store)
    monkeypatch.setenv("ANDOR_OPERATOR", "bob")
    monkeypatch.setenv("ANDOR_ROLES", "bob=edit")
    at = console_app()
    at.run()
    _keyed(at.text_input, "tpl_name").input("two goals")
    monkeypatch.setenv("ANDOR_ROLES", "bob=watch")
    at.form_submit_button(key="template_save_submit").click()
    at.run()
    assert md("bob may not change the plan templates: needs the edit role.") in [e.value for e in at.error]
    assert store.templates() == [], "the refused save wrote nothing"
    assert at.form_submit_button(key="template_save_submit").disabled
    monkeypatch.setenv("ANDOR_ROLES", "bob=edit")
    at.run()
    monkeypatch.setenv("ANDOR_ROLES", "bob=watch")
    at.form_submit_button(key="start_session").click()
    at.run()
    assert [info.id for info in store.sessions()] == [session_id], "the watcher's start made no session"
    start = at.form_submit_button(key="start_session")
    assert start.disabled and start.help == md("bob may not start a session: needs the edit role")
    store.close()


def test_an_approvers_approval_is_signed_with_their_name(app_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def guard(action: str, target: object) -> str | None:
        return "clicks need approval" if action.startswith("click") else None

    store = open_store(app_db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    backend = Backend(ScriptedModel(load("brownie.json")), DryEnvironment(), guard)
    Runner(store, session_id, backend=backend).run(on_idle=lambda state: False)
    assert load_state(store, session_id).status is RunStatus.AWAITING_APPROVAL
    monkeypatch.setenv("ANDOR_OPERATOR", "carol@x.org")
    monkeypatch.setenv("ANDOR_ROLES", "carol@x.org=approve,*=edit")
    at = console_app(session_id)
    at.run()
    approve = at.form_submit_button(key="approve_submit")
    assert not approve.disabled and at.form_submit_button(key="edit_action_submit").disabled, (
        "an approver without the edit role may approve but not replace the action"
    )
    approve.click()
    at.run()
    deadline = time.monotonic() + 30
    while not [p for p in _handled(store, session_id) if p.command.get("kind") == "approve"]:
        assert time.monotonic() < deadline, (
            f"the approval was never handled; the page says {[e.value for e in at.error]}"
        )
        time.sleep(0.1)
    [approval] = [p for p in _handled(store, session_id) if p.command.get("kind") == "approve"]
    assert isinstance(approval, CommandApplied) and approval.by == "carol@x.org"
    store.close()


def test_beyond_loopback_without_sign_in_the_console_draws_only_the_refusal(app_db: str) -> None:
    config.set_option("server.address", "0.0.0.0")  # app_db puts it back
    at = console_app()
    at.run()
    assert not at.exception, at.exception
    [refusal] = at.error
    assert refusal.value.startswith("This console listens on 0.0.0.0 without a sign-in, so it serves no one")
    drawn = [node for node in at.main.children.values()] + [node for node in at.sidebar.children.values()]
    assert len(drawn) == 1, f"the refusal is the whole page: {drawn}"


def test_beyond_loopback_a_header_sign_in_without_the_proxys_secret_draws_only_the_refusal(
    app_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDOR_AUTH_HEADER", "X-Forwarded-User")
    monkeypatch.delenv("ANDOR_AUTH_PROXY_SECRET", raising=False)
    config.set_option("server.address", "0.0.0.0")  # app_db puts it back
    at = console_app()
    at.run()
    assert not at.exception, at.exception
    [refusal] = at.error
    assert refusal.value == md(refused(PROXY, NONE, "0.0.0.0", None)), "the rule's sentence"
    assert "would trust any client's" in refusal.value, refusal.value
    drawn = [node for node in at.main.children.values()] + [node for node in at.sidebar.children.values()]
    assert len(drawn) == 1, f"the refusal is the whole page: {drawn}"
