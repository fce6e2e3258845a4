"""Reusable plans from the real console in headless Chromium: save the first plan's sub-goals as a
template with a parameter, inject it under another node with a new value, and see the nodes appear
with the template they came from."""

from __future__ import annotations

import pytest
from console_helpers import click_node, edit_node, only, open_tab, start_demo, state_of, wait_until
from playwright.sync_api import Page, expect

from planner.tree import NodeType, TemplateRef
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_save_a_subtree_and_inject_it_with_a_param(page: Page, console: ConsoleProcess) -> None:
    page.set_viewport_size({"width": 1500, "height": 1150})
    page.goto(console.url)
    expect(page.get_by_text("New session")).to_be_visible(timeout=30_000)
    session_id = start_demo(page, console, paused=True, task_id="cheapest-espresso")
    plan = [
        child.description
        for child in state_of(console, session_id).tree.children(state_of(console, session_id).tree.root)
    ]
    assert plan[0] == "search for espresso", plan

    edit_node(page, "0")
    page.locator(".st-key-template_save").get_by_text("Save this subtree as a template").click()
    only(page, '[class*="st-key-tpl_name-"] input').fill("find_cheapest")
    only(page, '[class*="st-key-tpl_params-"] textarea').fill("product=espresso")
    page.locator(".st-key-template_save").get_by_text("Only the sub-goals of 0").click()
    page.locator(".st-key-template_save_submit button").click()
    expect(page.get_by_text("saved as find_cheapest v1 (product): 4 nodes")).to_be_visible(timeout=30_000)

    edit_node(page, "0.1")
    box = page.locator(".st-key-template_inject")
    expect(box.get_by_role("combobox", name="Inject from a template")).to_have_value(
        "find_cheapest v1 (product): 4 nodes", timeout=30_000
    )
    only(page, '[class*="st-key-template_param_find_cheapest_product-"] input').fill("french press")
    page.locator(".st-key-template_inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=30_000)

    wait_until(lambda: "0.1.1" in state_of(console, session_id).tree, what="the template's nodes under 0.1")
    tree = state_of(console, session_id).tree
    added = tree.children(tree["0.1"])
    assert tree["0.1"].type is NodeType.AND
    assert [node.description for node in added] == ["search for french press", *plan[1:]]
    assert {node.template for node in added} == {TemplateRef("find_cheapest", 1)}

    click_node(page, "0.1.1")
    open_tab(page, "Node")
    expect(page.get_by_text("from template find_cheapest v1").first).to_be_visible(timeout=30_000)
