"""The action guard: which actions wait for a person's approval."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from planner.guard import GuardRules, allowed_hosts, host_allowed, make_guard, resolve_url
from planner.protocols import ElementInfo

START = "https://shop.example/catalog"


@pytest.fixture
def guard():
    return make_guard(GuardRules(), START)


def button(name: str) -> ElementInfo:
    return ElementInfo(role="button", name=name)


@pytest.mark.parametrize(
    ("name", "term"),
    [
        ("Place order", "place order"),
        ("PLACE ORDER NOW", "place order"),
        ("Add to cart", "add to cart"),
        ("Buy now", "buy"),
        ("Delete account", "delete"),
        ("Pay $12.00", "pay"),
        ("Proceed to checkout", "checkout"),
        ("Complete purchase", "purchase"),
    ],
)
def test_risky_names_are_guarded_case_insensitively(guard, name: str, term: str) -> None:
    assert guard("click [12]", button(name)) == f"element named {name!r} matches {term!r}"


@pytest.mark.parametrize("name", ["Display options", "Buyer's guide", "Next page", "Undeleted items", ""])
def test_names_match_whole_words_only(guard, name: str) -> None:
    assert guard("click [12]", button(name)) is None


def test_select_and_type_on_risky_elements_are_guarded_too(guard) -> None:
    assert guard("select [3] [Express]", ElementInfo("combobox", "Pay with")) is not None
    assert guard("type [3] [yes] [1]", ElementInfo("textbox", "Type DELETE to confirm")) is not None


def test_typing_into_a_password_field_is_guarded(guard) -> None:
    field = ElementInfo(role="textbox", name="Password", input_type="password")
    assert guard("type [5] [hunter2] [0]", field) == "password field"
    assert guard("click [5]", field) is None


def test_password_rule_can_be_switched_off() -> None:
    guard = make_guard(GuardRules(guard_passwords=False), START)
    assert guard("type [5] [hunter2]", ElementInfo("textbox", "Secret", "password")) is None


def test_custom_risky_names_replace_the_defaults() -> None:
    guard = make_guard(GuardRules(risky_names=["Subscribe"]), START)
    assert guard("click [1]", button("subscribe")) == "element named 'subscribe' matches 'subscribe'"
    assert guard("click [1]", button("Place order")) is None


def test_goto_outside_allowed_domains_is_guarded(guard) -> None:
    assert guard("goto [https://evil.example/login]", None) == "goto outside allowed domains (evil.example)"
    assert guard("goto [www.evil.example]", None) == "goto outside allowed domains (www.evil.example)"
    assert guard("goto [//evil.example/x]", None) == "goto outside allowed domains (evil.example)"


def test_goto_within_the_start_host_or_relative_is_not_guarded(guard) -> None:
    assert guard("goto [https://shop.example/cart]", None) is None
    assert guard("goto [/search?q=lamp]", None) is None
    assert guard("goto [results.html]", None) is None


def test_listed_domains_and_their_subdomains_are_allowed() -> None:
    guard = make_guard(GuardRules(allowed_domains=["Docs.Example", "https://cdn.example:8443/x"]), START)
    assert guard("goto [https://docs.example/a]", None) is None
    assert guard("goto [https://api.docs.example/a]", None) is None
    assert guard("goto [https://cdn.example/a]", None) is None
    assert guard("goto [https://notdocs.example/a]", None) == "goto outside allowed domains (notdocs.example)"
    assert guard("goto [https://shop.example/a]", None) is None


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi"])
def test_goto_to_non_web_urls_is_guarded(guard, url: str) -> None:
    rule = guard(f"goto [{url}]", None)
    assert rule is not None and rule.startswith("goto to a non-web URL")


def test_harmless_and_unparseable_actions_pass(guard) -> None:
    assert guard("scroll [down]", None) is None
    assert guard("go_back", None) is None
    assert guard("note [buy the cheapest]", None) is None
    assert guard("click [not-a-number]", button("Buy")) is None  # check() rejects it instead
    assert guard("click [12]", None) is None  # unknown element: check() rejects it


def test_rules_are_frozen() -> None:
    rules = GuardRules()
    with pytest.raises(ValidationError):
        rules.guard_passwords = False  # type: ignore[misc]


def test_domain_helpers() -> None:
    assert allowed_hosts([], "http://127.0.0.1:8000/x") == ("127.0.0.1",)
    assert allowed_hosts(["*.Example.org", "example.org"], "https://a.test") == ("a.test", "example.org")
    assert host_allowed("a.b.example.org", ["example.org"])
    assert not host_allowed("badexample.org", ["example.org"])
    assert resolve_url("b.html", "http://h/a/index.html") == "http://h/a/b.html"
    assert resolve_url("/b", "http://h/a/index.html") == "http://h/b"
    assert resolve_url("https://x.example", "http://h/") == "https://x.example"
