"""Operator policies as data: the bundled file, refusals of a bad one, and every trigger kind on a
console state (no browser: the states are folded from hand-made events)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from demo.operator_sim import POLICIES_PATH, Policy, PolicyError, SimulatedOperator, load_policy
from demo.tasks import DemoTask, load_tasks
from planner.events import Kind
from planner.state import Recorder, SessionState
from sessions.store.sql import SqlStore

TASK = "Find the cheapest widget under $60 and tell me what I would pay. My password is hunter-2."


def _policy(*rules: dict[str, Any], **settings: Any) -> Policy:
    return Policy.model_validate({"name": "test", "rules": list(rules), **settings})


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "policies.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _state(*children: str, task: str = TASK) -> tuple[SessionState, Recorder]:
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_CREATED, task=task, start_url="http://shop.test/", status="paused")
    specs = [{"id": f"0.{i}", "description": text} for i, text in enumerate(children, start=1)]
    recorder.record(Kind.STEP, "0", frame="entering", work="expand")
    recorder.record(Kind.NODE_EXPANDED, "0", type="AND", children=specs)
    return state, recorder


def _page(recorder: Recorder, node: str, text: str, ok: bool = True, error: str | None = None) -> None:
    recorder.record(Kind.STEP, node, frame="entering", work="execute")
    recorder.record(Kind.NODE_EXPANDED, node, type="ACTION", action="click [3]")
    recorder.record(
        Kind.ACTION_EXECUTED, node, action="click [3]", ok=ok, error=error, url="http://shop.test/x", observation=text
    )


@pytest.fixture
def operator_for() -> Any:
    store = SqlStore("sqlite://")

    def make(policy: Policy) -> SimulatedOperator:
        return SimulatedOperator(store, "unused", policy)

    yield make
    store.close()


def test_the_bundled_policy_loads_and_holds_general_rules_not_answer_keys() -> None:
    policy = load_policy()
    assert policy.name == "default" and len(policy.rules) >= 8
    assert all(rule.why for rule in policy.rules), "every rule says why an operator would follow it"
    text = POLICIES_PATH.read_text().lower()
    tasks = load_tasks()
    leaked = [task.id for task in tasks if task.id in text]
    leaked += [item for task in tasks for item in task.criteria.must_contain if item.lower() in text]
    assert not leaked, f"the default policy names task ids or expected answers: {leaked}"


def _plan_text(task: DemoTask) -> list[str]:
    """Every sub-goal the demo model's playbook for `task` plans (its expansions and its repairs)."""
    playbook = task.playbook
    if playbook is None:
        return []
    planned = [child for node in playbook.nodes.values() for child in node.children]
    planned += [child for repair in playbook.repairs.values() for child in repair.add]
    return [child if isinstance(child, str) else child.description for child in planned]


def test_no_default_rule_is_keyed_to_one_tasks_plan() -> None:
    """A rule whose node pattern matches the plan of only one bundled task was written for that task: an
    answer key in the model's own words, not a habit an operator brings to any run. Each rule's pattern
    about the plan must fit the plans of two tasks or more (a rule about no node fits them all)."""
    tasks = [task for task in load_tasks() if task.playbook is not None]
    keyed: dict[str, str] = {}
    for rule in load_policy().rules:
        pattern = getattr(rule.when, "node", None)
        if pattern is None or not pattern.pattern:
            continue
        fits = [task.id for task in tasks if any(pattern.search(text) for text in _plan_text(task))]
        if len(fits) == 1:
            keyed[rule.name] = fits[0]
    assert not keyed, f"rules that fit one task's plan only (rule: task): {keyed}"


def _one_rule(when: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    return {"policies": [{"name": "a", "rules": [{"name": "r", "when": when, "then": then}]}]}


PLANNED_X = {"on": "planned", "node": "x"}
RETRY = {"name": "r", "when": {"on": "failed"}, "then": {"do": "reopen"}}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "is not valid JSON|cannot use"),
        ({"policies": []}, "policies: cannot be empty"),
        (_one_rule({"on": "planned", "node": "("}, {"do": "prune", "reason": "x"}), "is not a regular expression"),
        (_one_rule(PLANNED_X, {"do": "edit", "description": "{nope}"}), "names 'nope'"),
        (_one_rule(PLANNED_X, {"do": "edit", "description": "{node!r}"}), "use \\{name\\}"),
        (_one_rule({"on": "sometimes"}, {"do": "approve"}), "when"),
        (_one_rule({"on": "failed"}, {"do": "dance"}), "then"),
        (_one_rule({"on": "failed"}, {"do": "approve"}), "approve and reject answer an approval"),
        ({"policies": [{"name": "a"}, {"name": "a"}]}, "a appears twice"),
        ({"policies": [{"name": "a", "rules": [RETRY, RETRY]}]}, "two rules named r"),
    ],
)
def test_a_bad_policy_file_is_refused_in_one_sentence(tmp_path: Path, data: object, expected: str) -> None:
    with pytest.raises(PolicyError, match=expected) as refused:
        load_policy("a", _write(tmp_path, data))
    message = str(refused.value)
    assert "\n" not in message and "pydantic" not in message and message.startswith(("policy file", "cannot use"))


def test_an_unknown_policy_name_or_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="has no policy 'careless'; choose from: default"):
        load_policy("careless")
    with pytest.raises(PolicyError, match="no such file"):
        load_policy("default", tmp_path / "missing.json")


def test_planned_fills_templates_from_the_node_and_the_named_groups(operator_for: Any) -> None:
    policy = _policy(
        {
            "name": "limit",
            "when": {"on": "planned", "node": "^note the name and price of the first result$"},
            "task": r"under \$(?P<limit>\d+)",
            "then": {"do": "edit", "description": "note the name and price of the first result priced under ${limit}"},
        }
    )
    state, _ = _state("search for widgets", "note the name and price of the first result")
    operator = operator_for(policy)
    chosen = operator.decide(state)
    assert chosen is not None and chosen.node == "0.2" and chosen.node_step == 1
    assert chosen.command == {
        "kind": "edit",
        "node": "0.2",
        "description": "note the name and price of the first result priced under $60",
        "reexpand": True,
    }
    assert operator.decide(state) is None, "the operator reacts once to each node"


def test_expanded_and_inject_before_the_node(operator_for: Any) -> None:
    policy = _policy(
        {
            "name": "first-look",
            "when": {"on": "expanded", "node": "cheapest", "type": "AND"},
            "then": {"do": "inject", "under": "{node}", "position": "0", "goals": ["search for {node} things"]},
        }
    )
    state, _ = _state("a", "b")
    chosen = operator_for(policy).decide(state)
    assert chosen is not None
    assert chosen.command == {
        "kind": "inject",
        "parent": "0",
        "goals": ["search for 0 things"],
        "position": 0,
        "node_type": None,
    }


def test_expanded_fires_while_the_node_is_open_and_the_page_matches_not_after(operator_for: Any) -> None:
    """The page a rule asks for is the page at a boundary: a node's expansion is reacted to while the node
    is still being worked on, never once it has finished (a later page would be about other work)."""
    policy = _policy(
        {
            "name": "page-on",
            "when": {"on": "expanded", "node": "^check each result", "type": "AND"},
            "page": 'link "Next page"',
            "then": {"do": "inject", "position": "{next}", "goals": ["next page", "{description}"]},
        }
    )
    state, recorder = _state("check each result for A: B", "check the others")
    recorder.record(Kind.STEP, "0.1", frame="entering", work="expand")
    recorder.record(Kind.NODE_EXPANDED, "0.1", type="AND", children=[{"id": "0.1.1", "description": "open x"}])
    _page(recorder, "0.1.1", '[1] link "x"')
    recorder.record(Kind.STATUS_CHANGED, "0.1.1", status="SUCCESS")
    recorder.record(Kind.STATUS_CHANGED, "0.1", status="SUCCESS")
    recorder.record(Kind.STEP, "0.2", frame="entering", work="expand")
    recorder.record(Kind.NODE_EXPANDED, "0.2", type="ACTION", action="click [2]")
    recorder.record(
        Kind.ACTION_EXECUTED,
        "0.2",
        action="click [2]",
        ok=True,
        url="http://shop.test/y",
        observation='[2] link "Next page"',
    )
    assert operator_for(policy).decide(state) is None, "0.1 finished before a Next page link showed"
    state, recorder = _state("check each result for A: B", "check the others")
    recorder.record(Kind.NODE_EXPANDED, "0.1", type="AND", children=[{"id": "0.1.1", "description": "open x"}])
    _page(recorder, "0.1.1", '[1] link "x"\n[2] link "Next page"')
    chosen = operator_for(policy).decide(state)
    assert chosen is not None and chosen.node == "0.1"
    assert chosen.command["goals"] == ["next page", "check each result for A: B"] and chosen.command["position"] == 1


def test_failed_with_http_5xx_and_a_page_condition(operator_for: Any) -> None:
    policy = _policy(
        {
            "name": "server-error",
            "when": {"on": "failed", "reason": r"HTTP (?P<code>5\d\d)"},
            "page": "Something went wrong",
            "then": {"do": "prune", "reason": "the widget is broken ({code})"},
        }
    )
    state, recorder = _state("filter by max price 100", "sort by price")
    operator = operator_for(policy)
    _page(recorder, "0.1", "Something went wrong", ok=False, error="HTTP 404 at http://shop.test/x")
    assert operator.decide(state) is None, "a 404 is no server error"
    state, recorder = _state("filter by max price 100", "sort by price")
    _page(recorder, "0.1", "Something went wrong", ok=False, error="HTTP 500 at http://shop.test/x")
    chosen = operator.decide(state)
    assert chosen is not None
    assert chosen.command == {"kind": "prune", "node": "0.1", "reason": "the widget is broken (500)"}


def test_ran_reacts_to_what_the_page_shows_after_an_action(operator_for: Any) -> None:
    policy = _policy(
        {
            "name": "plainer-words",
            "when": {"on": "ran", "node": "^search for"},
            "page": "No products match “(?P<a>[^”]*?)-(?P<b>[^”]*)”",
            "then": {"do": "inject", "position": "{next}", "goals": ["search for {a} {b}"]},
        }
    )
    state, recorder = _state("search for noise-cancelling widgets", "note the name and price of the first result")
    _page(recorder, "0.1", "No products match “noise-cancelling widgets”.")
    chosen = operator_for(policy).decide(state)
    assert chosen is not None
    assert chosen.command["parent"] == "0" and chosen.command["position"] == 1
    assert chosen.command["goals"] == ["search for noise cancelling widgets"]


def test_approval_on_a_checkout_button_unless_the_task_asks_to_buy(operator_for: Any) -> None:
    rules = [
        {
            "name": "no-order",
            "when": {"on": "approval", "guard": "place order"},
            "unless_task": r"\bbuy\b",
            "then": {"do": "reject", "reason": "not asked to buy ({action})"},
        },
        {
            "name": "password",
            "when": {"on": "approval", "guard": "password"},
            "task": "password",
            "then": {"do": "approve"},
        },
    ]
    state, recorder = _state("click Place order")
    recorder.record(
        Kind.APPROVAL_REQUESTED, "0.1", action="click [9]", rule="element named 'Place order' matches 'place order'"
    )
    operator = operator_for(_policy(*rules))
    chosen = operator.decide(state)
    assert chosen is not None and chosen.command == {"kind": "reject", "reason": "not asked to buy (click [9])"}
    assert chosen.is_edit, "a rejection changes the run's course"
    state, recorder = _state("click Place order", task="Buy it. My password is x.")
    recorder.record(
        Kind.APPROVAL_REQUESTED, "0.1", action="click [9]", rule="element named 'Place order' matches 'place order'"
    )
    assert operator_for(_policy(*rules)).decide(state) is None, "the task asks to buy: the fallback approves"
    state, recorder = _state("type x into Password")
    recorder.record(Kind.APPROVAL_REQUESTED, "0.1", action="type [4] [x] [0]", rule="password field")
    approved = operator_for(_policy(*rules)).decide(state)
    assert approved is not None and approved.command == {"kind": "approve"} and not approved.is_edit


def test_finishing_with_an_answer_that_lacks_a_price(operator_for: Any) -> None:
    policy = _policy(
        {
            "name": "price",
            "when": {"on": "finishing", "answer_lacks": r"\$\d"},
            "then": {"do": "inject", "under": "0", "position": None, "goals": ["note the name and price"]},
        }
    )
    state, recorder = _state("note the name")
    recorder.record(Kind.STATUS_CHANGED, "0.1", status="VISITED")
    recorder.record(Kind.STATUS_CHANGED, "0.1", status="SUCCESS")
    recorder.record(Kind.STATUS_CHANGED, "0", status="VISITED")
    recorder.record(Kind.STATUS_CHANGED, "0", status="SUCCESS", answer="Widget: $12.00")
    operator = operator_for(policy)
    assert operator.decide(state) is None, "the answer has a price"
    state.final_answer = "Widget"
    chosen = operator.decide(state)
    assert chosen is not None and chosen.command["goals"] == ["note the name and price"]


def test_force_and_reopen_and_the_edit_budget(operator_for: Any) -> None:
    policy = _policy(
        {"name": "prefer-sort", "when": {"on": "planned", "node": "^sort"}, "then": {"do": "force"}},
        {"name": "retry", "when": {"on": "failed"}, "then": {"do": "reopen"}},
        max_edits=1,
    )
    state, recorder = _state("filter by max price 100", "sort by price")
    operator = operator_for(policy)
    forced = operator.decide(state)
    assert forced is not None and forced.command == {"kind": "force", "node": "0", "child": "0.2"}
    operator.interventions.append(forced)
    _page(recorder, "0.1", "", ok=False, error="HTTP 500 at http://shop.test/x")
    assert operator.decide(state) is None, "one edit was the budget"
    retry = _policy({"name": "retry", "when": {"on": "failed"}, "then": {"do": "reopen"}})
    reopened = operator_for(retry).decide(state)
    assert reopened is not None and reopened.command == {"kind": "reopen", "node": "0.1"}
