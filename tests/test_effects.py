"""The effect fence's policy, without a browser: which requests are held, allowed or blocked, and what
an operator is shown of one."""

from __future__ import annotations

import json

import pytest

from planner.effects import (
    WEBSOCKET,
    RequestRule,
    RuleSyntaxError,
    SentRequest,
    Verdict,
    decide,
    request_fields,
)

SHOP = "http://127.0.0.1:8765"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "post", "PROPFIND", WEBSOCKET])
def test_every_method_that_can_change_state_is_held_by_default(method: str) -> None:
    assert decide((), method, f"{SHOP}/order") is Verdict.HOLD


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "get"])
def test_safe_methods_pass_by_default(method: str) -> None:
    assert decide((), method, f"{SHOP}/order?confirm=1") is Verdict.ALLOW


def test_the_first_matching_rule_decides() -> None:
    rules = (
        RequestRule.parse("block POST */admin/*"),
        RequestRule.parse("allow POST 127.0.0.1/search"),
        RequestRule.parse("hold GET */order*"),
        RequestRule.parse("allow * 127.0.0.1/*"),
    )
    assert decide(rules, "POST", f"{SHOP}/admin/users") is Verdict.BLOCK
    assert decide(rules, "POST", f"{SHOP}/search?q=x") is Verdict.ALLOW  # the query is not part of the path
    assert decide(rules, "GET", f"{SHOP}/order?item=3") is Verdict.HOLD  # a GET with effect, held by a rule
    assert decide(rules, "DELETE", f"{SHOP}/cart/3") is Verdict.ALLOW
    assert decide(rules, "POST", "http://127.0.0.2/search") is Verdict.HOLD  # another host: no rule matches
    assert decide(rules, "GET", "http://127.0.0.2/order") is Verdict.HOLD  # "*/order*" matches any host


def test_a_rule_matches_by_method_host_and_path_alone() -> None:
    rule = RequestRule(verdict=Verdict.ALLOW, methods=("post",), host="Shop.Example.", path="/search")
    assert rule.methods == ("POST",) and rule.host == "shop.example"
    assert decide((rule,), "POST", "https://shop.example/search") is Verdict.ALLOW
    assert decide((rule,), "PUT", "https://shop.example/search") is Verdict.HOLD
    assert decide((rule,), "POST", "https://shop.example/search/more") is Verdict.HOLD
    assert decide((rule,), "POST", "https://evil.example/search") is Verdict.HOLD


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("allow POST 127.0.0.1/search", "allow POST 127.0.0.1/search"),
        ("HOLD get */order*", "hold GET */order*"),
        ("block *  shop.example", "block * shop.example"),
        ("allow post,put api.example/v1/*", "allow POST,PUT api.example/v1/*"),
        ("allow WEBSOCKET chat.example", "allow WEBSOCKET chat.example"),
    ],
)
def test_rules_read_and_spell_back(text: str, spelled: str) -> None:
    rule = RequestRule.parse(text)
    assert rule.spelled() == spelled
    assert RequestRule.parse(rule.spelled()) == rule


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("allow POST", "write a request rule as VERDICT METHODS HOST/PATH"),
        ("permit POST shop/x", "starts with allow, hold or block"),
        ("allow PO-ST shop/x", "is not an HTTP method"),
        ("allow POST shop/x extra", "write a request rule as"),
    ],
)
def test_a_rule_that_cannot_be_read_says_how_to_write_it(text: str, says: str) -> None:
    with pytest.raises(RuleSyntaxError, match=says) as caught:
        RequestRule.parse(text)
    assert "\n" not in str(caught.value)


def test_a_held_request_is_described_and_allowed_by_method_host_and_path() -> None:
    sent = SentRequest(method="POST", url=f"{SHOP}/checkout/place?x=1", kind="form")
    assert sent.describe() == "POST /checkout/place?x=1 on 127.0.0.1"
    assert sent.key == f"POST {SHOP}/checkout/place?x=1"
    rule = sent.allowing_rule()
    assert rule.spelled() == "allow POST 127.0.0.1/checkout/place"
    assert decide((rule,), "POST", f"{SHOP}/checkout/place?other=2") is Verdict.ALLOW


def test_form_fields_are_shown_with_secrets_masked() -> None:
    body = b"name=Jane+Doe&address=1+Main+Street&password=demo-pass-123&api_key=k&card_number=4111"
    fields = dict(request_fields("application/x-www-form-urlencoded; charset=UTF-8", body))
    assert fields == {
        "name": "Jane Doe",
        "address": "1 Main Street",
        "password": "••••",
        "api_key": "••••",
        "card_number": "••••",
    }


def test_json_multipart_and_plain_bodies_are_read() -> None:
    as_json = request_fields("application/json", json.dumps({"item": 3, "note": "gift", "token": "t0k"}).encode())
    assert as_json == (("item", "3"), ("note", "gift"), ("token", "••••"))
    multipart = (
        b'--XyZ\r\nContent-Disposition: form-data; name="qty"\r\n\r\n2\r\n'
        b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n"
    )
    assert request_fields("multipart/form-data; boundary=XyZ", multipart) == (
        ("qty", "2"),
        ("file", "(file a.txt, 5 bytes)"),
    )
    assert request_fields("text/plain;charset=UTF-8", b"order=1") == (("body", "order=1"),)
    assert request_fields("application/octet-stream", b"\x00" * 2000) == (
        ("body", "2,000 bytes of application/octet-stream"),
    )
    assert request_fields("", None) == ()


def test_a_long_body_is_cut() -> None:
    fields = request_fields(
        "application/x-www-form-urlencoded", b"&".join(b"f%d=%s" % (i, b"v" * 500) for i in range(50))
    )
    assert len(fields) == 30
    assert all(len(value) <= 200 for _, value in fields)
