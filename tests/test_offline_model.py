"""The offline demo model, on observation text as the browser renders it (no browser needed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.errors import ModelOutputError
from planner.models.offline import OfflineModel, Playbook, read_elements
from planner.questions import View
from planner.tree import Node, NodeType, Status, Tree

LISTING = """URL: http://shop/search?q=espresso
Title: Results for "espresso" | Demo Shop
[7] searchbox "Search products" value="espresso"
[8] button "Search"
navigation "Sort"
- [28] link "Featured"
- [30] link "Price: low to high"
- [34] link "Highest rated"
- [36] link "Most reviewed"
Showing 1 to 2 of 2 products
- [42] link "Crema Compact Espresso"
by Crema
Price: $129.00
Rating: 4.0 out of 5 (341 reviews)
- [49] link "Baristo Duo Espresso"
by Baristo
Price: $349.00
Rating: 4.6 out of 5 (1,502 reviews)
"""

PRODUCT = """URL: http://shop/product/inkwell-home-200
Title: Inkwell Home 200 | Demo Shop
[25] link "Back to results"
# Inkwell Home 200
by Inkwell
Price: $89.00
Rating: 4.2 out of 5 (120 reviews)
Quantity [33] spinbutton "Quantity" value="1" [34] button "Add to cart"
table
| Brand | Inkwell |
| Wireless | Yes |
| Photo printing | 4x6 |
"""


def view(description: str, observation: str = LISTING, notes: tuple[str, ...] = (), task: str = "t") -> View:
    tree = Tree()
    tree.nodes["0"] = Node(id="0", description=task, type=NodeType.AND, status=Status.VISITED, children=["0.1"])
    node = Node(id="0.1", parent="0", description=description)
    tree.nodes["0.1"] = node
    return View(task=task, tree=tree, node=node, notes=notes, observation=observation, url="http://shop/x")


def action(model: OfflineModel, description: str, **kwargs) -> str:  # type: ignore[no-untyped-def]
    expansion = model.expand(view(description, **kwargs)).output
    assert expansion.type == "ACTION"
    return expansion.action or ""


def test_elements_are_read_from_the_observation() -> None:
    elements = read_elements(LISTING)
    assert (elements[0].id, elements[0].role, elements[0].name) == (7, "searchbox", "Search products")
    assert [e.id for e in elements if e.role == "link"] == [28, 30, 34, 36, 42, 49]


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("search for espresso machines", "type [7] [espresso machines] [1]"),
        ("Search for backpacks from Northwind", "type [7] [Northwind backpacks] [1]"),
        ("sort by price low to high", "click [30]"),
        ("sort by rating", "click [34]"),
        ("sort by reviews", "click [36]"),
        ("open the first result", "click [42]"),
        ("open the first result matching duo", "click [49]"),
        ("open Baristo Duo Espresso", "click [49]"),
        ("click Search", "click [8]"),
        ("go back", "go_back"),
        ("note the name and price of the first result", "note [Crema Compact Espresso: $129.00]"),
        ("note the brand of the top espresso machine", "note [Brand of the top espresso machine: Crema]"),
        ('note "the shop has two espresso machines"', "note [the shop has two espresso machines]"),
    ],
)
def test_plain_verbs_are_grounded_in_the_page(goal: str, expected: str) -> None:
    assert action(OfflineModel(), goal) == expected


def test_product_page_notes_check_the_specs_table() -> None:
    model = OfflineModel()
    assert (
        action(model, "note the name, price and rating", observation=PRODUCT)
        == "note [Inkwell Home 200: $89.00, rated 4.2]"
    )
    assert action(
        model, "note Inkwell Home 200 if it has Wireless: Yes and Photo printing: 4x6", observation=PRODUCT
    ) == ("note [Inkwell Home 200 by Inkwell: $89.00 (Wireless: Yes and Photo printing: 4x6)]")
    assert action(model, "note Inkwell Home 200 if it has Wireless: No and Color: Red", observation=PRODUCT) == (
        "note [Inkwell Home 200 does not qualify (Wireless: Yes, Color: not listed)]"
    )


def test_compound_goals_expand_into_and_nodes() -> None:
    model = OfflineModel()
    expansion = model.expand(view("filter by max price 150")).output
    assert expansion.type == "AND"
    assert [c.description for c in expansion.children] == ["type 150 into Max price", "click Apply filters"]
    each = model.expand(view("check each result for Wireless: Yes")).output
    assert [c.description for c in each.children][:3] == [
        "open Crema Compact Espresso",
        "note Crema Compact Espresso if it has Wireless: Yes",
        "go back",
    ]
    assert len(each.children) == 6


def test_ungroundable_goals_fail_with_a_reason_an_operator_can_use() -> None:
    model = OfflineModel()
    with pytest.raises(ModelOutputError, match="no link or button named like 'Webcams' on http://shop/x"):
        model.expand(view("open the Webcams category"))
    with pytest.raises(ModelOutputError, match="cannot ground 'dance a jig'; phrase sub-goals with plain verbs"):
        model.expand(view("dance a jig"))
    with pytest.raises(ModelOutputError, match="is not a product page"):
        model.expand(view("note the name and price"))


def test_a_brand_is_taken_from_the_notes_before_any_assumption() -> None:
    model = OfflineModel({"t": Playbook(assumptions={"top keyboard": "Acme"})})
    assert action(model, "search for backpacks from the top keyboard brand") == "type [7] [Acme backpacks] [1]"
    noted = ("Brand of the top keyboard: Northwind",)
    assert (
        action(model, "search for backpacks from the top keyboard brand", notes=noted)
        == "type [7] [Northwind backpacks] [1]"
    )
    with pytest.raises(ModelOutputError, match="the top mouse brand is not known yet"):
        model.expand(view("search for the top mouse brand"))


def test_playbook_nodes_come_first() -> None:
    from planner.models.scripted import NodeScript

    model = OfflineModel(
        {"t": Playbook(nodes={"t": NodeScript(type="AND", children=["search for x", "note the cart total"])})}
    )
    tree_view = view("ignored")
    root_view = View(task="t", tree=tree_view.tree, node=tree_view.tree["0"], observation=LISTING)
    assert [c.description for c in model.expand(root_view).output.children] == ["search for x", "note the cart total"]


def test_repair_replaces_a_failed_open_with_a_search_and_keeps_the_deleted_steps() -> None:
    tree = Tree()
    tree.nodes["0"] = Node(
        id="0", description="t", type=NodeType.AND, status=Status.FAIL, children=["0.1", "0.2", "0.3"]
    )
    tree.nodes["0.1"] = Node(
        id="0.1", parent="0", description="open the Webcams category", status=Status.PRUNED, reason="expansion failed"
    )
    tree.nodes["0.2"] = Node(
        id="0.2", parent="0", description="sort by rating", status=Status.DELETED, reason="earlier step 0.1 failed"
    )
    tree.nodes["0.3"] = Node(
        id="0.3", parent="0", description="note the name", status=Status.DELETED, reason="earlier step 0.1 failed"
    )
    repair = OfflineModel().repair(View(task="t", tree=tree, node=tree["0"]), "0.1 failed").output
    assert [c.description for c in repair.add] == ["search for Webcams", "sort by rating", "note the name"]


def test_completion_counts_qualifying_notes() -> None:
    model = OfflineModel({"t": Playbook(min_items=2)})
    one = view("x", notes=("A by B: $1", "C does not qualify (Wireless: No)"))
    verdict = model.check_completion(one).output
    assert not verdict.complete and verdict.reason == "1 of 2 required facts noted"
    assert model.check_completion(view("x", notes=("A: $1", "B: $2"))).output.complete
    assert model.final_answer(one).output.answer == "A by B: $1"


def _after(done: str, *upcoming: str, observation: str = LISTING, notes: tuple[str, ...] = ()) -> View:
    """The view an observation call gets: `done` just ran, `upcoming` are its unexpanded later siblings."""
    tree = Tree()
    ids = [f"0.{i}" for i in range(1, len(upcoming) + 2)]
    tree.nodes["0"] = Node(id="0", description="t", type=NodeType.AND, status=Status.VISITED, children=ids)
    tree.nodes["0.1"] = Node(
        id="0.1", parent="0", description=done, type=NodeType.ACTION, status=Status.SUCCESS, action="x"
    )
    for node_id, description in zip(ids[1:], upcoming, strict=True):
        tree.nodes[node_id] = Node(id=node_id, parent="0", description=description)
    return View(
        task="t", tree=tree, node=tree["0.1"], notes=notes, observation=observation, url="http://shop/x", lookahead=3
    )


def test_observing_a_page_plans_the_next_actions_up_to_the_first_page_change() -> None:
    model = OfflineModel()
    ahead = model.observe(
        _after(
            "search",
            "note the name and price of the first result",
            "sort by price low to high",
            "open the first result",
        ),
        "x",
    ).output.ahead
    assert [(p.node, p.action) for p in ahead] == [
        ("0.2", "note [Crema Compact Espresso: $129.00]"),
        ("0.3", "click [30]"),
    ]


def test_planning_ahead_stops_at_what_the_page_cannot_ground_or_the_notes_do_not_know_yet() -> None:
    model = OfflineModel({"t": Playbook(assumptions={"top keyboard": "Acme"})})
    assert model.observe(_after("search", "compare everything"), "x").output.ahead == []
    assert model.observe(_after("search", "search for the top keyboard brand backpacks"), "x").output.ahead == []
    assert model.observe(_after("search", "sort by price low to high"), "x").output.ahead != []
    assert model.observe(replace(_after("search", "sort by price low to high"), lookahead=0), "x").output.ahead == []


def test_an_expansion_grounds_its_leading_children_on_the_page() -> None:
    model = OfflineModel(
        {
            "t": Playbook(
                nodes={"find it": {"type": "AND", "children": ["sort by price low to high", "open the first result"]}}
            )
        }
    )
    children = model.expand(replace(view("find it"), lookahead=3)).output.children
    assert [c.action for c in children] == ["click [30]", None]
    assert all(c.action is None for c in model.expand(view("find it")).output.children)


def test_constraints_come_from_the_tasks_playbook() -> None:
    model = OfflineModel({"t": Playbook(constraints=["espresso machine: cheapest"])})
    assert model.extract_constraints(view("t")).output.lines() == ["espresso machine: cheapest"]
    assert OfflineModel().extract_constraints(view("t")).output.lines() == []


def test_a_product_about_to_be_checked_is_reported_as_a_candidate() -> None:
    model = OfflineModel()
    good = _after(
        "open Inkwell Home 200",
        "note Inkwell Home 200 if it has Wireless: Yes and Photo printing: 4x6",
        observation=PRODUCT,
    )
    [candidate] = model.observe(good, "click [3]").output.candidates
    assert candidate.name == "Inkwell Home 200" and candidate.verdict == "qualifies" and candidate.unmet == []
    assert candidate.fields == {"Brand": "Inkwell", "Price": "$89.00", "Wireless": "Yes", "Photo printing": "4x6"}
    bad = _after("open Inkwell Home 200", "note Inkwell Home 200 if it has Color: Red", observation=PRODUCT)
    [rejected] = model.observe(bad, "click [3]").output.candidates
    assert rejected.verdict == "rejected" and rejected.unmet == ["Color: not listed"]
    assert model.observe(_after("open it", "go back", observation=PRODUCT), "click [3]").output.candidates == []


DEALS = """URL: http://shop/deals
Title: Deals | Demo Shop
[7] searchbox "Search products"
[8] button "Search"
navigation "Sort"
- [30] link "Price: low to high"
Showing 1 to 3 of 3 products
- [42] link "Vantage Slim Wireless"
by Vantage
Price: $49.00
Rating: 4.1 out of 5 (905 reviews)
Out of stock
- [49] link "Lumen PhotoJet P7 Pro"
by Lumen
Price: $179.99
Sale: was $219.99
Rating: 4.7 out of 5 (321 reviews)
- [56] link "Lumen PhotoJet P5"
by Lumen
Price: $129.99
Rating: 4.5 out of 5 (538 reviews)
"""

CONSENT = """URL: http://shop/deals
Title: Deals | Demo Shop
[7] searchbox "Search products"
# Deals
The deals appear once you have chosen your cookie settings.
dialog "We value your privacy"
# We value your privacy
[54] button "Accept all cookies"
[56] button "Only necessary cookies"
"""


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("open the first result on sale", "click [49]"),
        ("open the first result in stock", "click [49]"),
        ("open the first result priced under $150", "click [42]"),
        ("open the first result priced at least $130", "click [49]"),
        ("open the first result matching P5", "click [56]"),
        ("note the name and price of the first result priced at most $129.99", "note [Vantage Slim Wireless: $49.00]"),
        ("note the name and price of the first result priced over $130", "note [Lumen PhotoJet P7 Pro: $179.99]"),
        (
            "note the name and price of every result",
            "note [Vantage Slim Wireless: $49.00; Lumen PhotoJet P7 Pro: $179.99; Lumen PhotoJet P5: $129.99]",
        ),
    ],
)
def test_results_are_picked_by_sale_badge_stock_and_price(goal: str, expected: str) -> None:
    assert action(OfflineModel(), goal, observation=DEALS) == expected


def test_a_qualifier_nothing_on_the_page_meets_fails_with_what_was_looked_for() -> None:
    model = OfflineModel()
    with pytest.raises(ModelOutputError, match="no product result priced at least \\$500 on http://shop/x"):
        model.expand(view("open the first result priced at least $500", observation=DEALS))
    with pytest.raises(ModelOutputError, match="does not know the qualifier 'with a bow'"):
        model.expand(view("open the first result with a bow", observation=DEALS))


def test_a_goal_of_steps_joined_by_then_expands_into_them_in_order() -> None:
    expansion = OfflineModel().expand(view("sort by price low to high, then open the first result")).output
    assert expansion.type == "AND"
    assert [c.description for c in expansion.children] == ["sort by price low to high", "open the first result"]


def test_a_dialog_over_the_page_is_answered_first_when_a_goal_cannot_be_grounded() -> None:
    model = OfflineModel({"t": Playbook()})
    expansion = model.expand(view("sort by price low to high", observation=CONSENT)).output
    assert expansion.type == "AND" and "a dialog covers the page" in expansion.reasoning
    assert [c.description for c in expansion.children] == ["click Accept all cookies", "sort by price low to high"]
    assert action(model, "search for espresso", observation=CONSENT) == "type [7] [espresso] [1]"
    with pytest.raises(ModelOutputError, match="no link or button named like 'Price: low to high'"):
        model.expand(
            view("sort by price low to high", observation=DEALS.replace('- [30] link "Price: low to high"\n', ""))
        )
