"""The selected node's action bar and the Plan changes tab, headless (streamlit.testing AppTest) on a
dry scripted session: which buttons apply to the node and why the others do not, the Edit plan tab
opened on the form a button needs, and every change to the plan listed with its diff, escaped.

tests/test_console_node_actions_e2e.py presses the same buttons in a real browser.
"""

from __future__ import annotations

import re

from console_helpers import expanded, settled
from streamlit.testing.v1 import AppTest

from sessions.store import EventStore
from sessions.store.reading import load_state


def test_a_button_that_does_not_apply_is_disabled_and_says_why(app_store: EventStore) -> None:
    _, at = expanded(app_store)
    bar = {button.key: button for button in at.get("button") if button.key}
    assert "**Edit the plan at 0** (AND, VISITED)" in [m.value for m in at.markdown]
    assert not bar["breakpoint_btn"].disabled and bar["breakpoint_btn"].label == "Break here (0)"
    for key, why in (
        ("reopen_btn", "only a failed, pruned or deleted node can be reopened; 0 is VISITED"),
        ("undo_bar_btn", "nothing to undo: no plan edit of yours is left to take back"),
        ("open_prune", "the root cannot be pruned; stop the session instead"),
    ):
        assert bar[key].disabled and bar[key].help == why, (key, bar[key].help)
    assert not bar["open_inject"].disabled and not bar["open_edit"].disabled
    assert "open_force" not in bar, "Force… is only for an OR node"


def forms(at: AppTest) -> list[str]:
    """The Edit plan tab's slots, in the page's order, by the name their key carries."""
    [tab] = [tab for tab in at.tabs if tab.label == "Edit plan"]
    return [str(child.key).removeprefix("node_form_") for child in tab.children.values() if getattr(child, "key", None)]


def shown_first(at: AppTest) -> str | None:
    """The slot the page's style moves to the top of the tab, None when it moves none."""
    [style] = [html.proto.body for html in at.get("html") if html.proto.body.startswith("<style>")]
    moved = re.fullmatch(
        r'<style>\[data-testid="stLayoutWrapper"\]:has\(> \.st-key-node_form_(\w+)\) \{ order: -1; \}</style>', style
    )
    assert moved or style == "<style></style>", style
    return moved[1] if moved else None


def test_a_button_that_needs_input_opens_the_edit_plan_tab_on_its_form(app_store: EventStore) -> None:
    _, at = expanded(app_store)
    assert at.session_state["panel"] == "Node", "the inspector is open before any press"
    usual = ["prune", "force", "inject", "template_inject", "edit", "template_save", "last_edit"]
    assert forms(at) == usual and shown_first(at) is None
    at.button(key="open_edit").click().run()
    assert at.session_state["panel"] == "Edit plan", "Edit… opened the Edit plan tab"
    assert shown_first(at) == "edit", "the description form first"
    at.button(key="open_inject").click().run()
    assert shown_first(at) == "inject"
    assert forms(at) == usual, "a form is shown first by the style, never drawn in another place"
    at.button(key="next_node").click().run()
    assert forms(at) == usual and shown_first(at) is None, "another node's forms keep their usual order"


def test_plan_changes_lists_each_edit_with_its_diff_escaped(app_store: EventStore) -> None:
    session_id, at = expanded(app_store)
    at.button(key="open_inject").click().run()
    [goals] = [area for area in at.text_area if (area.key or "").startswith("inject_goals-")]
    goals.input("<img src=x onerror=alert(1)> check the rating")
    at.form_submit_button(key="inject_submit").click().run()
    settled(at, lambda: len(load_state(app_store, session_id).edits) == 1, "the inject applied")
    assert not [b for b in at.button if (b.key or "").startswith("plan_change_")], "the closed tab is drawn"
    at.session_state["tab"] = "Plan changes"
    at.run()
    changes = [m.value for m in at.markdown]
    [heading] = [m for m in changes if "operator: inject at 0" in m]
    seq = load_state(app_store, session_id).edits[0].seq
    assert heading.startswith(f"**Event {seq}** · ")
    assert r"added 0.4 · \<img src=x onerror=alert(1)\> check the rating" in changes, changes
    assert [b.label for b in at.button if b.key == f"plan_change_select_{seq}"] == ["Select 0"]
