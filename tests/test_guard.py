"""The action guard: which actions wait for a person's approval.

The URL and name corpora below are shared with tests/test_guard_bypass.py, which replays them in
real Chromium; here they run against the pure guard.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from planner.browser.dry import DryEnvironment
from planner.commands import Approve, apply_command
from planner.engine import Engine
from planner.guard import GuardRules, allowed_hosts, host_allowed, make_guard, normalize_name, resolve_url, url_host
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ActionResult, ElementInfo
from planner.state import RunStatus

START = "https://shop.example/catalog"

SHOP = "127.0.0.1:8000"
OTHER_HOST, OTHER_PORT = "127.0.0.2", 9000
SHOP_START = f"http://{SHOP}/shop/index.html"

OUTSIDE_URLS = [
    # plain, case and whitespace variants
    "http://{other}/x",
    "https://{other}/x",
    "HTTP://{other}/x",
    "hTtPs://{other}/x",
    "h\tttp://{other}/x",
    "http://127.0.\n0.2:{port}/x",
    "http://{other}",
    # a scheme without slashes: relative for the page's own scheme, absolute for the other
    "https:{other}/x",
    "HTTPS:{other}/x",
    "https:\\\\{other}/x",
    # backslashes and extra slashes, which special schemes read as slashes
    "http:\\\\{other}/x",
    "http:/\\{other}/x",
    "http:\\/{other}/x",
    "http:///{other}/x",
    "//{other}/x",
    "///{other}/x",
    "\\\\{other}/x",
    "/\\{other}/x",
    "\\/{other}/x",
    # userinfo, fragment and query tricks where the last '@' or the first '\' decides
    "http://127.0.0.1@{other}/x",
    "http://127.0.0.1:8000@{other}/x",
    "http://user:pass@{other}/x",
    "http://{other}\\@127.0.0.1:8000/",
    "http://{other}#@127.0.0.1:8000/",
    "http://{other}?@127.0.0.1:8000/",
    # IPv4 numbers in other notations
    "http://2130706434:{port}/x",
    "http://0x7f000002:{port}/x",
    "http://0x7f.0.0.2:{port}/x",
    "http://0177.0.0.2:{port}/x",
    "http://017700000002:{port}/x",
    "http://127.2:{port}/x",
    "http://127.0.2:{port}/x",
    "http://127.0.0.2.:{port}/x",
    "http://%31%32%37.0.0.2:{port}/x",
    "http://１２７.０.０.２:{port}/x",
    "http://127。0。0。2:{port}/x",
    "http://127．0．0．2:{port}/x",
    "http://[::ffff:127.0.0.2]:{port}/x",
    # other names for hosts
    "http://localhost:{port}/x",
    "http://EVIL.example./x",
    "http://ｅｖｉｌ.example/x",
    "www.evil.example",
    # schemes that are not the web
    "javascript:location='http://{other}/js'",
    "JaVaScRiPt:location='//{other}/js'",
    "java\tscript:location='//{other}/js'",
    "data:text/html,<script>location='http://{other}/d'</script>",
    "file:///etc/passwd",
    "file://{other}/x",
    "view-source:http://{other}/x",
    "blob:http://{other}/0000",
    "ftp://{other}/x",
    "ws://{other}/x",
    "about:blank",
    "chrome://settings",
    # not a URL at all
    "http://127.0.0.1%40{other}/x",
    "http://{other} x/",
    "http://127.0.0.1:99999/x",
]
"""Spellings that must never run unattended from a page on 127.0.0.1: they leave for another host,
leave the web, or cannot be parsed. `{other}` is 127.0.0.2 with the other server's port."""

SAME_HOST_URLS = [
    "/x",
    "x.html",
    "?q=1",
    "http://{shop}/x",
    "HTTP://{shop}/x",
    "http:{other}/x",
    "http:%2f%2f{other}/x",
    "%2f%2f{other}/x",
    "http://{other}@{shop}/x",
    "http://2130706433:{shop_port}/x",
    "http://127.1:{shop_port}/x",
    "..\\x",
]
"""Spellings that look foreign but resolve to the shop itself; they must run without approval."""


def spell(template: str, other: str = f"{OTHER_HOST}:{OTHER_PORT}", shop: str = SHOP) -> str:
    return template.format(other=other, port=other.rsplit(":", 1)[1], shop=shop, shop_port=shop.rsplit(":", 1)[1])


DISGUISED_NAMES = [
    # letters of other scripts that look Latin (Unicode TR39 confusables)
    ("Pl\u0430ce \u043erder", "place order"),  # Cyrillic а, о
    ("\u0420lace order", "place order"),  # Cyrillic Р
    ("\u0412UY NOW", "buy"),  # Cyrillic В, whose lowercase в looks like no Latin letter
    ("Bu\u0443 now", "buy"),  # Cyrillic у
    ("D\u0435l\u0435t\u0435 account", "delete"),  # Cyrillic е
    ("SUBSCR\u0406BE", "subscribe"),  # Cyrillic І, which TR39 reads as l
    ("\u03a1ay now", "pay"),  # Greek Ρ
    ("Check\u03bfut", "checkout"),  # Greek ο
    ("P\u03c5rchase", "purchase"),  # Greek υ
    ("Check\u0585ut", "checkout"),  # Armenian օ
    ("\u13f4UY", "buy"),  # Cherokee Ᏼ
    ("R\u0435m\u043ev\u0435 \u0430cc\u043eunt", "remove account"),
    # full-width and mathematical letters
    ("\uff42\uff55\uff59", "buy"),
    (
        "\U0001d40f\U0001d425\U0001d41a\U0001d41c\U0001d41e \U0001d428\U0001d42b\U0001d41d\U0001d41e\U0001d42b",
        "place order",
    ),
    ("\U0001d4df\U0001d4ea\U0001d502 \U0001d4f7\U0001d4f8\U0001d500", "pay"),
    ("\U0001d68d\U0001d68e\U0001d695\U0001d68e\U0001d69d\U0001d68e", "delete"),
    # digits and ASCII letters for letters
    ("Place 0rder", "place order"),
    ("De1ete account", "delete"),
    ("Subscr1be", "subscribe"),
    ("DeIete account", "delete"),  # capital I for l
    ("PIace order", "place order"),
    ("Subscrlbe", "subscribe"),  # l for i
    ("Confirrn order", "confirm order"),  # rn for m
    # spaced, dotted and hyphenated letters
    ("P l a c e  o r d e r", "place order"),
    ("P.l.a.c.e o.r.d.e.r", "place order"),
    ("P l a c e order", "place order"),
    ("B-U-Y", "buy"),
    ("B U Y  N O W", "buy"),
    ("d_e_l_e_t_e", "delete"),
    ("C h e c k o u t", "checkout"),
    # invisible joins
    ("B\u200bu\u200by", "buy"),
    ("De\u200clete", "delete"),
    ("Pa\u2061y", "pay"),
    ("\ufeffCheckout", "checkout"),
    # several at once
    ("P l \u0430 c \u0435  0 r d e r", "place order"),
    ("\uff30\U0001d425\u0430\uff43\u0435 \U0001d7cerd\u0435r", "place order"),
    ("\u0412-U-\u0443", "buy"),
    ("D\u200d\u0435\u200d1\u200d\u0435\u200dt\u200d\u0435", "delete"),
]
"""Risky names in disguise: other scripts' look-alike letters, digits, spaced letters, invisible joins."""

RISKY_NAMES = [
    ("Place order", "place order"),
    ("Place  order", "place order"),
    ("Place\u00a0order", "place order"),
    ("Place\u2003order", "place order"),
    ("Place\u3000order", "place order"),
    ("Place\norder", "place order"),
    ("Place-order", "place order"),
    ("Place_order", "place order"),
    ("place.order", "place order"),
    ("Pla\u200bce order", "place order"),
    ("P\u200dlace order", "place order"),
    ("Pl\u00adace order", "place order"),
    ("Place\u2060order", "place order"),
    ("PlaceOrder", "place order"),
    ("Pla\u0301ce order", "place order"),
    ("ＰＬＡＣＥ　ＯＲＤＥＲ", "place order"),
    ("PLACE ORDER NOW", "place order"),
    ("Place order →", "place order"),
    ("Submit order", "submit order"),
    ("Confirm order", "confirm order"),
    ("Confirm purchase", "purchase"),
    ("Complete purchase", "purchase"),
    ("Buy now", "buy"),
    ("Pay $12.00", "pay"),
    ("Pay\u00a0now", "pay"),
    ("Add to cart", "add to cart"),
    ("Add-to-Cart", "add to cart"),
    ("Proceed to checkout", "checkout"),
    ("Check out", "checkout"),
    ("Delete account", "delete"),
    ("Remove account", "remove account"),
    ("Subscribe", "subscribe"),
    *DISGUISED_NAMES,
]
"""Element names that must trip the guard, with the rule term each one matches."""

HARMLESS_NAMES = [
    "Display options",
    "Payment methods",
    "Buyer's guide",
    "Undeleted items",
    "Order history",
    "Add to wishlist",
    "Next page",
    # digits read as letters (0 as o, 1 as l) and the words around a term
    "Page 1 of 10",
    "Top 10 deals",
    "Sort by price",
    "Display",
    "Payment details",
    "Repay",
    "Deleted items",
    "Closed accounts",
    "Place",
    "Mi piace",
    # single letters that are not a spelled-out term
    "a b testing",
    "Size: S M L",
    "1 2 3 Next",
    "Plan A or B",
    # other scripts, written in them rather than disguised as Latin
    "Поиск",
    "Αναζήτηση",
    "",
]


@pytest.fixture
def guard():
    return make_guard(GuardRules(), START)


@pytest.fixture
def shop_guard():
    return make_guard(GuardRules(), SHOP_START)


def button(name: str) -> ElementInfo:
    return ElementInfo(role="button", name=name)


# -- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "term"), RISKY_NAMES)
def test_risky_names_are_guarded_however_they_are_spelled(guard, name: str, term: str) -> None:
    assert guard("click [12]", button(name)) == f"element named {name!r} matches {term!r}"


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_names_match_whole_words_only(guard, name: str) -> None:
    assert guard("click [12]", button(name)) is None


def test_names_are_normalized_once() -> None:
    assert normalize_name("  Pla\u200bce\u00a0-\u2060ORDER!! ") == "place order"
    assert normalize_name("ＡＤＤ\u3000ｔｏ_cart") == "add to cart"
    assert normalize_name("Pl\u00adace\u034f") == "place"
    assert normalize_name("") == ""


def test_look_alike_letters_and_digits_are_read_as_the_latin_letters_they_look_like() -> None:
    assert normalize_name("Pl\u0430ce \u043erder") == "place order"
    assert normalize_name("\u0412UY \u039dOW") == "buy now"  # capitals whose lowercase looks like nothing Latin
    assert normalize_name("\u0420\u0430\u0443") == "pay"  # a whole word in Cyrillic letters
    assert normalize_name("Page 1 of 10") == "page l of lo"  # TR39 reads 0 as O and 1 as l
    assert normalize_name("P l a c e") == "p l a c e"  # spelled-out letters are the matcher's business
    assert normalize_name("Поиск") == "\u043fo\u0438c\u043a"  # п, и, к look like no Latin letter


@pytest.mark.parametrize(
    "element",
    [
        lambda name: ElementInfo(role="button", name=name),
        lambda name: ElementInfo(role="button", name="Continue", texts=("→", name)),
        lambda name: ElementInfo(role="button", name="", input_type="submit", texts=(name,)),
    ],
    ids=["accessible name", "visible text or label", "value only"],
)
@pytest.mark.parametrize(("name", "term"), DISGUISED_NAMES)
def test_a_disguise_trips_whichever_name_carries_it(guard, element, name: str, term: str) -> None:
    assert guard("click [12]", element(name)) == f"element named {name!r} matches {term!r}"


@pytest.mark.parametrize(("name", "term"), DISGUISED_NAMES)
def test_a_disguised_submit_holds_enter_in_its_form(guard, name: str, term: str) -> None:
    field = ElementInfo(role="textbox", name="Gift message", form_submits=("Back", name))
    assert guard("type [3] [hi] [1]", field) == f"Enter submits a form with {name!r}, which matches {term!r}"
    assert guard("type [3] [hi] [0]", field) is None


def test_the_one_name_rule_reads_disguises_for_custom_terms_and_dialogs_alike() -> None:
    rules = GuardRules(risky_names=["Wipe disk"])
    assert rules.risky_term("W\u0456pe d1sk?") == "wipe disk"
    assert rules.risky_term("W I P E  D I S K") == "wipe disk"
    assert rules.risky_term("Wiped disks") is None
    assert GuardRules().risky_term("D\u0435l\u0435t\u0435 your account?") == "delete"


def test_spelled_out_letters_read_as_one_run_without_word_breaks() -> None:
    """Spaces between single letters say nothing about where words end, so a term anywhere in the
    run counts; words written whole still match only whole."""
    rules = GuardRules()
    assert rules.risky_term("B U Y N O W") == "buy"
    assert rules.risky_term("X B U Y") == "buy"
    assert rules.risky_term("B U Y E R S guide") == "buy"
    assert rules.risky_term("Buyers guide") is None
    assert rules.risky_term("S u b s c r i p t i o n s") is None


def test_the_confusables_table_is_built_once_per_process() -> None:
    from planner.guard import _confusables

    for name, _ in DISGUISED_NAMES:
        normalize_name(name)
    assert _confusables.cache_info().misses == 1
    assert _confusables() is _confusables()


def test_a_submit_button_named_by_its_value_or_label_is_guarded(guard) -> None:
    submit = ElementInfo(role="button", name="Continue", input_type="submit", texts=("→", "Place order"))
    assert guard("click [4]", submit) == "element named 'Place order' matches 'place order'"


def test_enter_in_a_field_of_a_guarded_form_is_guarded(guard) -> None:
    field = ElementInfo(role="textbox", name="Gift message", form_submits=("Continue", "Place\u00a0order"))
    assert (
        guard("type [3] [hi] [1]", field) == "Enter submits a form with 'Place\\xa0order', which matches 'place order'"
    )
    assert guard("type [3] [hi]", field) is not None  # Enter is the default
    assert guard("type [3] [hi] [0]", field) is None
    assert guard("type [3] [hi] [1]", ElementInfo(role="textbox", name="Search", form_submits=("Go",))) is None


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
    guard = make_guard(GuardRules(risky_names=["Sub-scribe"]), START)
    assert guard("click [1]", button("sub scribe")) == "element named 'sub scribe' matches 'sub scribe'"
    assert guard("click [1]", button("Place order")) is None


def test_default_rules_list_shop_actions_once() -> None:
    terms = GuardRules().risky_names
    assert len(terms) == len(set(terms)) and all(term == normalize_name(term) for term in terms)
    for term in ("place order", "submit order", "checkout", "add to cart", "purchase", "pay", "buy", "delete"):
        assert term in terms


# -- URLs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("template", OUTSIDE_URLS)
def test_no_spelling_of_another_host_or_scheme_passes(shop_guard, template: str) -> None:
    url = spell(template)
    rule = shop_guard(f"goto [{url}]", None)
    assert rule is not None and rule.startswith("goto "), f"{url!r} passed the guard"


@pytest.mark.parametrize("template", OUTSIDE_URLS)
def test_the_guard_decides_on_the_url_the_environment_will_open(shop_guard, template: str) -> None:
    """With a target, the environment resolved the URL against the current page; that is what counts."""
    url = spell(template)
    resolved = resolve_url(url, SHOP_START)
    rule = shop_guard(f"goto [{url}]", ElementInfo(url=resolved or ""))
    assert rule is not None and rule.startswith("goto "), f"{url!r} ({resolved!r}) passed the guard"


@pytest.mark.parametrize("template", SAME_HOST_URLS)
def test_spellings_of_the_shop_itself_pass(shop_guard, template: str) -> None:
    url = spell(template)
    assert shop_guard(f"goto [{url}]", None) is None
    resolved = resolve_url(url, SHOP_START)
    assert resolved is not None and url_host(resolved) == "127.0.0.1"


def test_the_current_page_is_the_base_not_the_start_url(shop_guard) -> None:
    """`https:host` is relative on an https page and absolute on an http one: the page decides."""
    on_https = resolve_url("https:127.0.0.2/x", "https://127.0.0.1/a/")
    assert on_https == "https://127.0.0.1/a/127.0.0.2/x"
    assert shop_guard("goto [https:127.0.0.2/x]", ElementInfo(url=on_https)) is None
    assert shop_guard("goto [https:127.0.0.2/x]", None) == "goto outside allowed domains (127.0.0.2)"


def test_an_unparseable_url_trips_the_guard(shop_guard) -> None:
    assert shop_guard("goto [http://a b/]", ElementInfo(url="")) == "goto to an unparseable URL"
    assert shop_guard("goto [http://127.0.0.1:99999/]", None) == "goto to an unparseable URL"


def test_a_click_that_leaves_the_allowed_domains_is_guarded(shop_guard) -> None:
    link = ElementInfo(role="link", name="Partner offer", url="http://127.0.0.2:9000/")
    assert shop_guard("click [2]", link) == "click leads outside allowed domains (127.0.0.2)"
    inside = ElementInfo(role="link", name="Cart", url=f"http://{SHOP}/cart")
    assert shop_guard("click [2]", inside) is None
    script_link = ElementInfo(role="link", name="More", url="javascript:void(0)")
    assert shop_guard("click [2]", script_link) is None  # runs the allowed page's own script
    form = ElementInfo(role="textbox", name="Email", url="http://127.0.0.2:9000/subscribe")
    assert shop_guard("type [3] [a@b.c] [1]", form) == "Enter leads outside allowed domains (127.0.0.2)"
    assert shop_guard("type [3] [a@b.c] [0]", form) is None


def test_goto_outside_allowed_domains_is_guarded(guard) -> None:
    assert guard("goto [https://evil.example/login]", None) == "goto outside allowed domains (evil.example)"
    assert guard("goto [www.evil.example]", None) == "goto outside allowed domains (www.evil.example)"
    assert guard("goto [//evil.example/x]", None) == "goto outside allowed domains (evil.example)"


def test_goto_within_the_start_host_or_relative_is_not_guarded(guard) -> None:
    assert guard("goto [https://shop.example/cart]", None) is None
    assert guard("goto [https://SHOP.example./cart]", None) is None
    assert guard("goto [/search?q=lamp]", None) is None
    assert guard("goto [results.html]", None) is None


def test_listed_domains_and_their_subdomains_are_allowed() -> None:
    guard = make_guard(GuardRules(allowed_domains=["Docs.Example", "https://cdn.example:8443/x"]), START)
    assert guard("goto [https://docs.example/a]", None) is None
    assert guard("goto [https://api.docs.example/a]", None) is None
    assert guard("goto [https://cdn.example/a]", None) is None
    assert guard("goto [https://notdocs.example/a]", None) == "goto outside allowed domains (notdocs.example)"
    assert guard("goto [https://shop.example/a]", None) is None


NON_WEB_LINKS = [
    ("javascript:alert(1)", "a non-web URL (javascript:)"),
    ("javascript:document.forms[0].submit()", "a non-web URL (javascript:)"),
    ("javascript:void(0);document.forms[0].submit()", "a non-web URL (javascript:)"),
    ("javascript:void(document.forms[0].submit())", "a non-web URL (javascript:)"),
    ("javascript:void(0)//", "a non-web URL (javascript:)"),
    ("javascript:%64ocument.forms[0].submit()", "a non-web URL (javascript:)"),
    ("JAVASCRIPT:alert(1)", "a non-web URL (javascript:)"),
    ("data:text/html,<form action=/buy></form>", "a non-web URL (data:)"),
    ("file:///etc/passwd", "a non-web URL (file:)"),
    ("about:blank", "a non-web URL (about:)"),
    ("mailto:sales@example.com", "a non-web URL (mailto:)"),
    ("ftp://shop.example/x", "a non-web URL (ftp:)"),
    ("http://a b/", "an unparseable URL"),
]
"""Where a click or an Enter leaves the web (or the URL cannot be parsed): held."""

NO_OP_SCRIPT_LINKS = [
    "javascript:",
    "javascript:;",
    "javascript:void(0)",
    "javascript:void(0);",
    "javascript:void 0",
    "JavaScript:Void(0)",
    "javascript: void( 0 ) ;",
    "javascript:void%200",
    "blob:https://shop.example/0000",
]
"""Links real sites put on every "Show more" anchor: their script does nothing (what the page's own
click handler does is fenced elsewhere). And blob: URLs, the page's own objects."""


@pytest.mark.parametrize(("url", "where"), NON_WEB_LINKS)
def test_a_click_or_enter_that_leaves_the_web_is_guarded(guard, url: str, where: str) -> None:
    assert guard("click [2]", ElementInfo(role="link", name="More", url=url)) == f"click leads to {where}"
    submit = ElementInfo(role="button", name="Go", input_type="submit", url=url)
    assert guard("click [2]", submit) == f"click leads to {where}"
    field = ElementInfo(role="textbox", name="Search", form_submits=("Go",), url=url)
    assert guard("type [3] [lamp] [1]", field) == f"Enter leads to {where}"
    assert guard("type [3] [lamp] [0]", field) is None


@pytest.mark.parametrize("url", NO_OP_SCRIPT_LINKS)
def test_links_that_run_no_script_are_not_held(guard, url: str) -> None:
    assert guard("click [2]", ElementInfo(role="link", name="Show more", url=url)) is None
    field = ElementInfo(role="textbox", name="Search", form_submits=("Go",), url=url)
    assert guard("type [3] [lamp] [1]", field) is None


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
    assert allowed_hosts(["ＥＸＡＭＰＬＥ.org.", "0x7f.1"], "http://2130706433/") == ("127.0.0.1", "example.org")
    assert host_allowed("a.b.example.org", ["example.org"])
    assert host_allowed("example.org.", ["example.org"])
    assert not host_allowed("badexample.org", ["example.org"])
    assert not host_allowed("", ["example.org"])
    assert resolve_url("b.html", "http://h/a/index.html") == "http://h/a/b.html"
    assert resolve_url("/b", "http://h/a/index.html") == "http://h/b"
    assert resolve_url("https://x.example", "http://h/") == "https://x.example/"
    assert resolve_url("http:127.0.0.2/x", "http://h/a/") == "http://h/a/127.0.0.2/x"
    assert resolve_url("http://[::1", "http://h/") is None
    assert url_host("http://0x7F.0.0.2/") == "127.0.0.2"
    assert url_host("not a url") == ""


# -- the engine tells the environment what an operator approved --------------------------------------


class _RecordingEnvironment(DryEnvironment):
    def __init__(self) -> None:
        super().__init__()
        self.approvals: list[tuple[str, bool]] = []

    def execute(self, action: str, *, approved: bool = False, **options: Any) -> ActionResult:
        self.approvals.append((action, approved))
        return super().execute(action, approved=approved, **options)


def test_only_the_approved_action_runs_with_approval() -> None:
    task = "Buy nothing, just look"
    tree = {"type": "AND", "children": [{"description": "look"}, {"description": "buy"}]}
    script = Script.model_validate(
        {
            "nodes": {
                task: tree,
                "look": {"type": "ACTION", "action": "click [1]"},
                "buy": {"type": "ACTION", "action": "click [7]"},
            }
        }
    )
    from conftest import new_state

    state, _ = new_state(task)
    env = _RecordingEnvironment()
    engine = Engine(
        state, ScriptedModel(script), env, guard=lambda action, target: "buy" if action == "click [7]" else None
    )
    while engine.step():
        pass
    assert state.status is RunStatus.AWAITING_APPROVAL, state.reason
    apply_command(state, Approve())
    while engine.step():
        pass
    assert env.approvals == [("click [1]", False), ("click [7]", True)]


def test_a_sessions_allowed_domains_reach_its_guard_and_fence() -> None:
    """`--allow-domain` is stored with the session; the guard built for it lets those hosts through
    and still asks for any other."""
    from planner.config import EngineConfig
    from planner.events import Kind
    from planner.state import Recorder, SessionState
    from sessions.backends import build_backend

    state = SessionState()
    Recorder(state).record(
        Kind.SESSION_CREATED,
        task="t",
        model="demo",
        start_url="http://127.0.0.1:9/",
        config=EngineConfig(allowed_domains=("cdn.example",)).model_dump(mode="json"),
    )
    backend = build_backend(state)
    try:
        assert backend.guard is not None
        assert backend.guard("goto [http://img.cdn.example/x.png]", None) is None
        assert backend.guard("goto [http://elsewhere.example/]", None) is not None
    finally:
        backend.close()
