"""The Claude backend against a local fake of the Messages API, and replaying what it answered.

No network and no real key: the SDK is pointed at `tests.fake_anthropic.FakeAnthropic` with
`base_url`, and a fake key comes from ANTHROPIC_API_KEY so we can prove it never leaks. The fake
enforces each model family's rules from `planner.models.capabilities`, and the request-shape and
whole-session tests run once per family in that table (plus an id it does not know).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from conftest import drive, new_state, snapshot
from fake_anthropic import FakeAnthropic, RawReply, refusal

from planner.browser.dry import DryEnvironment
from planner.commands import Resume, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.errors import ModelOutputError, ModelUnavailable
from planner.events import Event, Kind, ModelCalled
from planner.models.capabilities import DEFAULT_MODEL, FAMILIES, Family, family_of
from planner.models.claude import SESSION_EFFORT, ClaudeModel, ModelSettingRefused, estimate_cost
from planner.models.prompts import PROMPTS, SYSTEM
from planner.models.replay import ReplayModel, recorded_calls
from planner.protocols import Model
from planner.questions import Completion, Expansion, FinalAnswer, Observation, Question, Repair, View
from planner.state import RunStatus, SessionState
from planner.tree import Node, NodeType, Status, Tree

KEY = "sk-ant-test-DO-NOT-LEAK-7f3a9c"
UNKNOWN = "claude-future-9"
"""An id no family in the table matches: it runs as the conservative family."""
MODEL_IDS = [family.prefixes[0] for family in FAMILIES] + [UNKNOWN]
"""One model id per family of the capability table, and one the table does not know."""
TASK = "Find the cheapest espresso machine in the shop and tell me its name and price."

SCRIPT: dict[tuple[str, str], Any] = {
    ("extract_constraints", TASK): {"items": [{"item": "espresso machine", "constraints": ["cheapest"]}], "task": []},
    ("expand_node", TASK): {
        "type": "AND",
        "children": [
            {"description": "search for espresso"},
            {"description": "open the cheapest result"},
            {"description": "note the name and price"},
        ],
        "reasoning": "search, pick, note",
    },
    ("expand_node", "search for espresso"): {"type": "ACTION", "action": "type [3] [espresso] [1]"},
    ("expand_node", "open the cheapest result"): {"type": "ACTION", "action": "click [12]"},
    ("expand_node", "note the name and price"): {"type": "ACTION", "action": "note [Crema Compact Espresso: $129.00]"},
    ("observe_page", "*"): {
        "summary": "a results page",
        "progress": "searching",
        "notes": [],
        "prune": [],
        "rewrite": {},
    },
    ("check_completion", TASK): {"complete": True, "reason": "name and price noted"},
    ("final_answer", TASK): {"answer": "Crema Compact Espresso, $129.00"},
}


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(dict(SCRIPT)) as fake:
        yield fake


def _model(server: FakeAnthropic, **options: Any) -> ClaudeModel:
    return ClaudeModel(base_url=server.url, **options)


def _view(node_id: str = "0.2", notes: tuple[str, ...] = ("Crema Compact Espresso: $129.00",)) -> View:
    """A small tree: root AND with a succeeded search, the current node, and one unvisited step."""
    tree = Tree()
    nodes = [
        Node(id="0", description=TASK, type=NodeType.AND, status=Status.VISITED, children=["0.1", "0.2", "0.3"]),
        Node(
            id="0.1",
            parent="0",
            description="search for espresso",
            type=NodeType.ACTION,
            status=Status.SUCCESS,
            action="type [3] [espresso] [1]",
        ),
        Node(id="0.2", parent="0", description="open the cheapest result", status=Status.VISITED, children=["0.2.1"]),
        Node(id="0.2.1", parent="0.2", description="sort by price", status=Status.PRUNED, reason="no sort link"),
        Node(id="0.3", parent="0", description="note the name and price"),
    ]
    tree.nodes = {n.id: n for n in nodes}
    page = '[12] link "Crema Compact Espresso"\nby Crema\nPrice: $129.00\n' + "x" * 20_000
    return View(
        task=TASK,
        tree=tree,
        node=tree[node_id],
        notes=notes,
        progress="searched",
        observation=page,
        url="http://shop/s",
    )


def _sent_key(headers: dict[str, str]) -> str:
    """The key the SDK sent (it read it from the environment), whichever header carries it."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def _run(state: SessionState, model: Model, log: list[Event], env: DryEnvironment | None = None) -> Engine:
    engine = Engine(state, model, env or DryEnvironment())
    drive(engine, log)
    return engine


# -- request shape ----------------------------------------------------------------------------------

QUESTIONS = [
    ("expand", "expand_node", Expansion, lambda m, v: m.expand(v), '[12] link "Crema Compact Espresso"'),
    ("repair", "repair_node", Repair, lambda m, v: m.repair(v, "the sort link is missing"), "the sort link is missing"),
    ("observe", "observe_page", Observation, lambda m, v: m.observe(v, "click [12]"), "click [12]"),
    ("complete", "check_completion", Completion, lambda m, v: m.check_completion(v), "0.2.1 [UNKNOWN PRUNED]"),
    ("final_answer", "final_answer", FinalAnswer, lambda m, v: m.final_answer(v), "- Crema Compact Espresso: $129.00"),
]

ANSWERS = {
    "expand_node": {"type": "ACTION", "action": "click [12]"},
    "repair_node": {"prune": ["0.2.1"], "add": [{"description": "search sorted by price"}]},
    "observe_page": {
        "summary": "results",
        "progress": "found it",
        "notes": ["a fact"],
        "prune": ["0.3"],
        "rewrite": {},
    },
    "check_completion": {"complete": False, "reason": "price missing"},
    "final_answer": {"answer": "Crema Compact Espresso, $129.00"},
}


def _never_refused(family: Family, body: dict[str, Any]) -> None:
    """The request carries none of the settings `family` answers with HTTP 400."""
    thinking = body.get("thinking") or {}
    effort = (body.get("output_config") or {}).get("effort")
    if not family.forced_tool_choice:
        assert body.get("tool_choice", {}).get("type") not in ("tool", "any"), body.get("tool_choice")
    if not family.sampling_params:
        assert not {"temperature", "top_p", "top_k"} & set(body)
    if not family.prefill:
        assert body["messages"][-1]["role"] == "user"
    assert "budget_tokens" not in thinking or "enabled" in family.thinking_modes
    assert thinking.get("type") in (None, *family.thinking_modes), thinking
    assert effort is None or effort in family.effort_levels, effort
    assert refusal(family, body) is None


@pytest.mark.parametrize("model_id", MODEL_IDS)
@pytest.mark.parametrize(("question", "tool", "output", "invoke", "shows"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_each_question_is_one_tool_call_with_a_cached_prefix(
    server: FakeAnthropic, question: str, tool: str, output: type, invoke: Any, shows: str, model_id: str
) -> None:
    server.replies = {(tool, "open the cheapest result"): ANSWERS[tool]}
    model = _model(server, model=model_id)
    reply = invoke(model, _view())

    assert len(server.requests) == 1
    body = server.requests[0]
    family = family_of(model_id)
    assert body["model"] == model_id
    _never_refused(family, body)
    forced = family.forced_tool_choice and not family.thinks_by_default
    assert body["tool_choice"] == ({"type": "tool", "name": tool} if forced else {"type": "auto"})
    assert body.get("thinking") == ({"type": "adaptive", "display": "summarized"} if model.thinking else None)
    assert model.thinking == family.thinks_by_default, "without a session effort, only default thinkers think"
    effort = SESSION_EFFORT if family.thinks_by_default and family.effort_levels else None
    assert (body.get("output_config") or {}).get("effort") == reply.call.effort == model.effort == effort
    assert bool(reply.call.thinking) == model.thinking, "thinking models return a summary, and it is kept"
    assert body["max_tokens"] == family.max_tokens(effort, model.thinking, 2048) and body["max_tokens"] >= 2048
    [system] = body["system"]
    [message] = body["messages"]
    task_block, context = message["content"]
    assert TASK in task_block["text"] and "cache_control" not in context
    if not model.shared_prefix:
        assert [t["name"] for t in body["tools"]] == [tool] and "cache_control" not in json.dumps(body)
        return
    assert [t["name"] for t in body["tools"]] == [p.tool for p in PROMPTS.values()], "every tool: one shared prefix"
    assert next(t for t in body["tools"] if t["name"] == tool)["input_schema"] == output.model_json_schema()
    assert system["text"] == SYSTEM and "click [id]" in SYSTEM
    assert system["cache_control"] == {"type": "ephemeral"}, "the prefix ends in the system: effort cannot break it"
    assert task_block["cache_control"] == {"type": "ephemeral"}, "and the task after it, where the messages hold"
    text = context["text"]
    assert text.startswith(f"Question: {tool}\n") and shows in text
    assert "## Current node\n0.2: open the cheapest result" in text
    assert "0 [AND VISITED]" in text and "<== current" in text and "0.3 [UNKNOWN UNVISITED]" in text
    assert "more characters not shown" in text and len(text) < 16_000
    assert isinstance(reply.output, output) and reply.output.model_dump(mode="json", exclude_defaults=True)
    assert reply.call.raw == json.dumps(ANSWERS[tool])
    assert KEY not in (reply.call.prompt or "") and _sent_key(server.headers[0]) == KEY


def test_a_model_that_cannot_cache_the_shared_prefix_gets_the_smallest_request(server: FakeAnthropic) -> None:
    model = _model(server, model="claude-haiku-4-5")
    assert family_of("claude-haiku-4-5").cache_minimum > family_of(DEFAULT_MODEL).cache_minimum
    assert not model.shared_prefix and _model(server).shared_prefix
    server.replies = {("observe_page", "open the cheapest result"): ANSWERS["observe_page"]}
    model.observe(_view(), "click [12]")
    body = server.requests[0]
    assert [t["name"] for t in body["tools"]] == ["observe_page"]
    assert "## observe_page" in body["system"][0]["text"] and "## expand_node" not in body["system"][0]["text"]
    assert "cache_control" not in json.dumps(body)


def test_constraints_are_read_from_the_task_alone_then_shown_with_it(server: FakeAnthropic) -> None:
    model = _model(server)
    extracted = model.extract_constraints(_view("0")).output
    assert extracted.lines() == ["espresso machine: cheapest"]
    request = server.requests[0]
    assert request["tool_choice"] == {"type": "auto"} and request["output_config"] == {"effort": SESSION_EFFORT}
    assert request["messages"][0]["content"][1]["text"].startswith("Question: extract_constraints\n")
    assert "Current page" not in request["messages"][0]["content"][1]["text"]

    server.replies[("expand_node", "open the cheapest result")] = ANSWERS["expand_node"]
    model.expand(replace(_view(), constraints=tuple(extracted.lines())))
    task_block, context = server.requests[1]["messages"][0]["content"]
    assert "# Constraints\n- espresso machine: cheapest" in task_block["text"]
    assert "espresso machine: cheapest" not in context["text"]


def test_lookahead_shows_the_upcoming_sub_goals_and_reads_the_planned_actions(server: FakeAnthropic) -> None:
    planned = {"summary": "results", "ahead": [{"node": "0.3", "action": "note [Crema Compact Espresso: $129.00]"}]}
    server.replies = {
        ("observe_page", "open the cheapest result"): planned,
        ("expand_node", "open the cheapest result"): ANSWERS["expand_node"],
    }
    model = _model(server)
    reply = model.observe(replace(_view(), lookahead=3), "click [12]")
    assert [p.node for p in reply.output.ahead] == ["0.3"]
    model.expand(replace(_view(), lookahead=3))
    model.observe(replace(_view(), feedback="open the cheapest machine"), "click [12]")
    with_lookahead, expansion, without = (_prompt(body) for body in server.requests)
    assert "## Progress\nsearched\nNext: open the cheapest machine" in without
    assert (
        "## Upcoming sub-goals" in with_lookahead
        and "\n0.3 [UNKNOWN UNVISITED] note the name and price" in with_lookahead
    )
    assert "## Planning ahead" in expansion
    assert "## Upcoming sub-goals" not in without


def test_root_view_shows_the_whole_first_level(server: FakeAnthropic) -> None:
    view = _view("0")
    server.replies = {("expand_node", TASK): ANSWERS["expand_node"]}
    _model(server).expand(view)
    text = server.requests[0]["messages"][0]["content"][1]["text"]
    assert all(f"{i} [" in text for i in ("0.1", "0.2", "0.3"))


def test_usage_is_recorded_with_cache_reads_and_an_estimated_cost(server: FakeAnthropic) -> None:
    server.replies = {("expand_node", "open the cheapest result"): ANSWERS["expand_node"]}
    model = _model(server)
    first = model.expand(_view()).call.usage
    second = model.expand(_view()).call.usage
    assert first["cache_write_tokens"] > 0 and first["cache_read_tokens"] == 0
    assert second["cache_read_tokens"] == first["cache_write_tokens"] and second["cache_write_tokens"] == 0
    assert second["cost_usd"] < first["cost_usd"]
    assert first["cost_usd"] == estimate_cost(
        DEFAULT_MODEL, first["input_tokens"], first["output_tokens"], first["cache_write_tokens"], 0
    )
    prices = family_of(DEFAULT_MODEL).prices
    assert prices is not None and (prices.input, prices.output, prices.write_5m, prices.write_1h, prices.read) == (
        2.0,
        10.0,
        2.50,
        4.0,
        0.10,
    ), "Sonnet 5.5 list prices; cache reads cut from $0.20 to $0.10 on 2026-10-07"


# -- model families: refused settings, thinking, effort ---------------------------------------------

REFUSED_SETTINGS: dict[str, Any] = {
    "forced tool choice": lambda body: {**body, "tool_choice": {"type": "tool", "name": "expand_node"}},
    "sampling parameters": lambda body: {**body, "temperature": 0.2},
    "assistant prefill": lambda body: {
        **body,
        "messages": [*body["messages"], {"role": "assistant", "content": '{"type": "'}],
    },
    "thinking budget": lambda body: {**body, "thinking": {"type": "enabled", "budget_tokens": 2048}},
    "thinking disabled": lambda body: {**body, "thinking": {"type": "disabled"}},
}
"""How a request carries each setting a family may refuse (the names of `Family.refused`)."""
REFUSALS = [(model_id, name) for model_id in MODEL_IDS for name in family_of(model_id).refused]


def _post(server: FakeAnthropic, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """One request to the fake, bypassing the backend: what the API would answer to exactly `body`."""
    request = urllib.request.Request(
        f"{server.url}/v1/messages", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize(("model_id", "setting"), REFUSALS, ids=[f"{m}-{n}" for m, n in REFUSALS])
def test_the_fake_refuses_each_setting_the_family_refuses(server: FakeAnthropic, model_id: str, setting: str) -> None:
    """The fake is strict where the API is: the never-sent tests below would catch a refused setting."""
    body = _model(server, model=model_id).request(Question.EXPAND, _view())
    assert _post(server, body)[0] == 200, "the backend's own request is accepted"
    status, answer = _post(server, REFUSED_SETTINGS[setting](body))
    assert status == 400 and answer["error"]["type"] == "invalid_request_error", answer
    assert "not supported" in answer["error"]["message"] or "may not be enabled" in answer["error"]["message"]


def test_sonnet_5_5_refuses_what_its_migration_notes_say_and_the_default_is_sonnet_5_5() -> None:
    family = family_of("claude-sonnet-5-5")
    assert DEFAULT_MODEL == "claude-sonnet-5-5" and family.name == "Claude Sonnet 5.5"
    assert set(family.refused) == {
        "forced tool choice",
        "sampling parameters",
        "assistant prefill",
        "thinking budget",
        "thinking disabled",
    }
    assert family.thinks_by_default and "between_tools" in family.thinking_modes


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_a_full_session_on_each_family_never_sends_a_refused_setting(server: FakeAnthropic, model_id: str) -> None:
    state, log = new_state(TASK)
    _run(state, _model(server, model=model_id), log)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert state.final_answer == "Crema Compact Espresso, $129.00"
    family = family_of(model_id)
    assert server.requests and all(body["model"] == model_id for body in server.requests)
    for body in server.requests:
        _never_refused(family, body)
    calls = [e.payload for e in log if isinstance(e.payload, ModelCalled)]
    assert all(call.ok for call in calls) and len(calls) == len(server.requests)
    thinks = family.thinks_by_default
    assert all(bool(call.thinking) == thinks for call in calls), "summaries are recorded with each call"
    effort = SESSION_EFFORT if thinks and family.effort_levels else None
    assert {call.effort for call in calls} == {effort}, "one effort for the whole session"
    if _model(server, model=model_id).shared_prefix:
        systems = {json.dumps(body["system"]) for body in server.requests[1:]}
        assert len(systems) == 1, "after the constraints the cached prefix never changes"
    if family.prices is not None:
        assert state.metrics.cost_usd > 0


def test_one_effort_serves_every_call_of_a_session_and_a_session_may_set_its_own(server: FakeAnthropic) -> None:
    model = _model(server)
    assert model.effort == SESSION_EFFORT == "medium" and model.thinking

    deep = _model(server, effort="high")
    state, log = new_state(TASK)
    _run(state, deep, log)
    assert state.status is RunStatus.SUCCEEDED
    assert {body["output_config"]["effort"] for body in server.requests} == {"high"}
    assert {e.payload.effort for e in log if isinstance(e.payload, ModelCalled)} == {"high"}

    old = _model(server, model="claude-sonnet-4-6")
    assert old.effort is None and not old.thinking, "older models get today's request"
    with pytest.raises(ValueError, match="takes no effort"):
        _model(server, model="claude-haiku-4-5", effort="high")


def test_thinking_text_never_leaks_into_the_answer(server: FakeAnthropic) -> None:
    """A summary that looks like an answer (even another tool's JSON) stays a summary."""
    decoy = json.dumps({"type": "ACTION", "action": "click [99]"})
    server.thinking = f"Question: final_answer\n{decoy} is tempting, but [12] is the cheapest."
    server.replies = {("expand_node", "open the cheapest result"): ANSWERS["expand_node"]}
    reply = _model(server).expand(_view())
    assert reply.output.action == "click [12]" and reply.output.reasoning == ""
    assert reply.call.thinking == [server.thinking] and reply.call.effort == "medium"
    assert "click [99]" not in (reply.call.raw or "") and reply.call.raw == json.dumps(ANSWERS["expand_node"])

    server.replies = {}  # no tool call: the thinking is still not taken for the answer
    with pytest.raises(ModelOutputError, match="did not call the expand_node tool") as caught:
        _model(server).expand(_view())
    assert "click [99]" not in caught.value.reason and "click [99]" not in (caught.value.call.raw or "")
    assert caught.value.call.thinking == [server.thinking]


def test_an_answer_with_another_questions_tool_is_an_output_error(server: FakeAnthropic) -> None:
    server.replies[("expand_node", TASK)] = ANSWERS["expand_node"]

    def other_tool(message: dict[str, Any]) -> bytes:
        content = [b if b["type"] != "tool_use" else {**b, "name": "final_answer"} for b in message["content"]]
        return json.dumps({**message, "content": content}).encode()

    server.raw(RawReply(body=other_tool))
    with pytest.raises(ModelOutputError, match='did not call the expand_node tool .*it called "final_answer"'):
        _model(server).expand(_view("0"))


def test_an_unknown_model_id_runs_as_the_most_careful_current_model_and_says_so_once(
    server: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="planner.models.claude"):
        model = _model(server, model=UNKNOWN)
        state, log = new_state(TASK)
        _run(state, model, log)
    assert state.status is RunStatus.SUCCEEDED
    warnings = [r.getMessage() for r in caplog.records if r.name == "planner.models.claude"]
    assert len(warnings) == 1 and len(server.requests) > 3, "said once per session, not per call"
    assert f'"{UNKNOWN}" is not in planner/models/capabilities.py' in warnings[0] and model.notice == warnings[0]
    for body in server.requests:
        assert body["tool_choice"] == {"type": "auto"} and "output_config" not in body
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}, "thinking assumed on, summarized"
        assert body["max_tokens"] > max(server.thinking_tokens[level] for level in ("low", "medium", "high"))
    calls = [e.payload for e in log if isinstance(e.payload, ModelCalled)]
    assert all(call.thinking for call in calls), "the inspector has a summary to show"
    assert state.metrics.cost_usd == 0.0, "without a cost cap an unknown price is recorded as unknown, never guessed"


def test_the_inspector_shows_the_thinking_summary_and_effort_of_an_expansion(server: FakeAnthropic) -> None:
    from streamlit.testing.v1 import AppTest

    server.thinking = "Brand first: the <img src=x onerror=alert(1)> cheapest **must** be compared."
    state, log = new_state(TASK)
    _run(state, _model(server), log)
    [expansion] = [e.payload for e in log if isinstance(e.payload, ModelCalled) and e.payload.question == "expand"][:1]
    assert expansion.thinking == [server.thinking] and expansion.effort == "medium"

    def page(data: dict) -> None:  # AppTest runs this function's source alone: it imports what it uses
        from planner.events import ModelCalled
        from ui.views.inspector import _model_call

        _model_call(7, ModelCalled.model_validate(data))

    at = AppTest.from_function(page, args=(expansion.model_dump(mode="json"),), default_timeout=30)
    at.session_state["model_call_7"] = True  # its expander open: a closed call draws nothing inside
    at.run()
    assert not at.exception, at.exception
    shown = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    assert "Thinking (summary)" in shown and "Effort: medium" in shown
    assert "\\<img src=x onerror=alert(1)\\>" in shown and "\\*\\*must\\*\\*" in shown, "escaped as text"


# -- thinking budget, effort and thinking together, settings the API refuses ----------------------

THINKERS = [family.prefixes[0] for family in FAMILIES if family.thinks_by_default] + [UNKNOWN]


@pytest.mark.parametrize("model_id", THINKERS)
def test_a_thinking_call_leaves_room_for_thinking_at_every_effort_it_may_run_at(
    server: FakeAnthropic, model_id: str
) -> None:
    """Thinking counts toward max_tokens: each budget is larger than the fake's thinking at that effort."""
    family = family_of(model_id)
    server.replies = {("expand_node", "open the cheapest result"): ANSWERS["expand_node"]}
    for effort in family.effort_levels or (None,):
        model = _model(server, model=model_id, effort=effort)
        reply = model.expand(_view())
        assert reply.output.action == "click [12]" and reply.call.thinking, (model_id, effort)
        runs_at = effort or family.default_effort or "high"
        assert model.max_tokens > server.thinking_tokens[runs_at], (model_id, effort, model.max_tokens)
        assert reply.call.usage["output_tokens"] > server.thinking_tokens[runs_at], "thinking is billed as output"


def test_thinking_that_uses_up_max_tokens_ends_without_a_tool_call_and_fails_the_node(server: FakeAnthropic) -> None:
    """The old budget (2,048 output tokens, no thinking room) on a model that thinks: every call is cut off."""
    model = _model(server, model="claude-opus-5-5")
    model.max_tokens = 2048
    server.replies = {("expand_node", "open the cheapest result"): ANSWERS["expand_node"]}
    with pytest.raises(
        ModelOutputError, match="thinking used all 2,048 output tokens before it called the expand_node"
    ):
        model.expand(_view())
    state, log = new_state(TASK, EngineConfig(constraints=False, repair=False))
    _run(state, model, log)
    assert state.status is RunStatus.FAILED and "thinking used all 2,048" in (state.tree["0"].reason or "")


@pytest.mark.parametrize("model_id", ["claude-sonnet-4-6", "claude-opus-4-8", "claude-opus-4-7"])
@pytest.mark.parametrize("effort", ["xhigh", "max"])
def test_a_deep_effort_on_a_model_that_does_not_think_by_default_is_sent_with_thinking(
    server: FakeAnthropic, model_id: str, effort: str
) -> None:
    family = family_of(model_id)
    if effort not in family.effort_levels:
        pytest.skip(f"{family.name} takes no {effort}")
    body = _model(server, model=model_id).request(Question.EXPAND, _view())
    assert "thinking" not in body, "without an effort: today's request"
    assert _post(server, {**body, "output_config": {"effort": effort}})[0] == 400, "the fake refuses it bare"
    server.replies = {("expand_node", "open the cheapest result"): ANSWERS["expand_node"]}
    reply = _model(server, model=model_id, effort=effort).expand(_view())
    sent = server.requests[-1]
    assert sent["thinking"] == {"type": "adaptive", "display": "summarized"} and sent["tool_choice"] == {"type": "auto"}
    assert reply.call.effort == effort and reply.call.thinking and sent["max_tokens"] > server.thinking_tokens[effort]


def test_a_400_naming_a_setting_pauses_the_session_with_the_apis_sentence(server: FakeAnthropic) -> None:
    sentence = 'output_config.effort: "medium" is not supported for this model.'
    server.fail(400, times=1, message=sentence)
    with pytest.raises(ModelSettingRefused, match=re.escape(sentence)):
        _model(server).expand(_view("0"))

    server.fail(400, times=1, message=sentence)
    state, log = new_state(TASK)
    _run(state, _model(server), log)
    assert state.status is RunStatus.PAUSED, "a setting no node can fix pauses the session"
    assert state.reason is not None and sentence in state.reason and "configuration error" in state.reason
    assert all(node.status is not Status.FAIL for node in state.tree.walk()), "no node is failed for it"
    log.extend(apply_command(state, Resume()))
    _run(state, _model(server), log)
    assert state.status is RunStatus.SUCCEEDED


# -- the prompt cache ------------------------------------------------------------------------------

PAGE = "\n".join([f'[{i}] link "Espresso machine {i}"\nby Crema\nPrice: ${100 + i}.00' for i in range(1, 25)])
"""A results page as compact as the demo shop's (about 1,200 characters)."""


def _thirty_calls(model: ClaudeModel) -> list[dict[str, Any]]:
    """The calls of a 30-call session: constraints, then reading, planning and checking on changing pages."""
    usages = [model.extract_constraints(_view("0")).call.usage]
    constraints = ("espresso machine: cheapest",)
    for step in range(29):
        node = ("0.2", "0.3", "0")[step % 3]
        view = replace(_view(node), constraints=constraints, observation=PAGE.replace("Crema", f"Crema {step}"))
        if step % 3 == 0:
            usages.append(model.observe(view, f"click [{step}]").call.usage)
        elif step % 3 == 1:
            usages.append(model.expand(view).call.usage)
        else:
            usages.append(model.check_completion(view).call.usage)
    return usages


def _cached_share(usages: list[dict[str, Any]]) -> float:
    read = sum(u["cache_read_tokens"] for u in usages)
    total = sum(u["input_tokens"] + u["cache_read_tokens"] + u["cache_write_tokens"] for u in usages)
    return read / total


@pytest.mark.parametrize(
    "model_id",
    ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-2", "claude-sonnet-4-6"],
)
def test_a_30_call_session_reads_most_of_its_input_from_the_cache(server: FakeAnthropic, model_id: str) -> None:
    """At each family's real cache minimum; Sonnet 4.6 forces a different tool per question."""
    server.replies = {
        ("extract_constraints", TASK): SCRIPT[("extract_constraints", TASK)],
        ("observe_page", "*"): ANSWERS["observe_page"],
        ("expand_node", "*"): ANSWERS["expand_node"],
        ("check_completion", "*"): ANSWERS["check_completion"],
    }
    model = _model(server, model=model_id)
    assert model.shared_prefix
    usages = _thirty_calls(model)
    assert len(usages) == 30 and len(server.requests) == 30
    prefix = usages[0]["cache_write_tokens"]
    assert prefix > model.family.cache_minimum
    rewrites = [u["cache_write_tokens"] for u in usages[1:] if u["cache_write_tokens"]]
    assert all(tokens < 200 for tokens in rewrites), "after the first call only the task block is ever written"
    share = _cached_share(usages[1:])
    assert share >= 0.80, f"{share:.1%} of input tokens read from the cache after the first call"


def test_the_fake_keys_its_cache_as_the_docs_say(server: FakeAnthropic) -> None:
    """tools -> system -> messages: tool_choice, thinking and effort invalidate only the messages level."""
    server.replies = {("expand_node", "*"): ANSWERS["expand_node"]}
    body = _model(server, model="claude-sonnet-4-6").request(Question.EXPAND, _view())
    in_messages = {**body, "system": [{"type": "text", "text": body["system"][0]["text"] + " "}]}  # task only
    usage = lambda answer: answer[1]["usage"]
    assert usage(_post(server, body))["cache_creation_input_tokens"] > 0
    assert usage(_post(server, {**body, "output_config": {"effort": "low"}}))["cache_read_input_tokens"] > 0
    assert usage(_post(server, {**body, "tool_choice": {"type": "auto"}}))["cache_read_input_tokens"] > 0
    assert usage(_post(server, in_messages))["cache_creation_input_tokens"] > 0
    for change in ({"output_config": {"effort": "low"}}, {"tool_choice": {"type": "auto"}}):
        assert usage(_post(server, {**in_messages, **change}))["cache_read_input_tokens"] == 0, change
    tools = [*body["tools"][:-1], {**body["tools"][-1], "description": "changed"}]
    assert usage(_post(server, {**body, "tools": tools}))["cache_read_input_tokens"] == 0
    short = {**body, "system": [body["system"][0] | {"text": "short"}], "tools": []}
    assert usage(_post(server, short))["cache_creation_input_tokens"] == 0, "below the minimum nothing is cached"


# -- transport errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [529, 429])
def test_overload_and_rate_limit_are_retried_by_the_sdk(server: FakeAnthropic, status: int) -> None:
    server.fail(status, times=2)
    reply = _model(server, max_retries=3).expand(_view("0"))
    assert reply.output.type == "AND"
    assert len(server.requests) == 3


def test_a_timeout_makes_the_model_unavailable(server: FakeAnthropic) -> None:
    server.delay = 1.0
    with pytest.raises(ModelUnavailable, match="timeout") as caught:
        _model(server, timeout=0.2, max_retries=0).expand(_view("0"))
    assert KEY not in str(caught.value)


def test_exhausted_retries_pause_the_session_and_resume_finishes_it(server: FakeAnthropic) -> None:
    server.fail(529, times=3)
    model = _model(server, max_retries=2)
    with pytest.raises(ModelUnavailable, match="HTTP 529") as caught:
        model.expand(_view("0"))
    assert "resume" in str(caught.value) and KEY not in str(caught.value)

    server.fail(529, times=3)
    state, log = new_state(TASK)
    engine = _run(state, model, log)
    assert state.status is RunStatus.PAUSED
    assert state.reason is not None and state.reason.startswith("model unavailable: Claude API returned HTTP 529")

    log.extend(apply_command(state, Resume()))  # the fake has recovered: its three failures are spent
    assert state.status is RunStatus.RUNNING
    _run(state, engine.model, log, engine.env)  # type: ignore[arg-type]
    assert state.status is RunStatus.SUCCEEDED
    assert state.final_answer == "Crema Compact Espresso, $129.00"


def test_rejected_key_is_reported_without_the_key(server: FakeAnthropic) -> None:
    server.fail(401)
    with pytest.raises(ModelUnavailable, match="ANTHROPIC_API_KEY") as caught:
        _model(server).expand(_view("0"))
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.__cause__)


def test_a_refused_request_fails_the_node_and_the_session_goes_on(server: FakeAnthropic) -> None:
    server.fail(400, times=3)
    state, log = new_state(TASK, EngineConfig(repair=False, constraints=False))
    _run(state, _model(server, max_retries=2), log)
    refused = [e for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]]
    assert len(refused) == 3 and len(server.requests) == 4, "no SDK retries for a 400; the engine's budget is 3"
    assert refused[0].data["error"].startswith("Claude API returned HTTP 400: fake invalid_request_error")
    assert (state.tree["0"].reason or "").startswith("expansion failed: Claude API returned HTTP 400")
    assert state.status is RunStatus.FAILED and state.final_answer == "Crema Compact Espresso, $129.00"


def test_an_unknown_model_id_pauses_with_advice(server: FakeAnthropic) -> None:
    server.fail(404)
    with pytest.raises(ModelUnavailable, match="has no model 'claude-nope': check the id"):
        _model(server, model="claude-nope").expand(_view("0"))


# -- malformed answers ------------------------------------------------------------------------------


def test_or_without_scores_is_an_output_error(server: FakeAnthropic) -> None:
    server.replies[("expand_node", TASK)] = {"type": "OR", "children": [{"description": "a"}, {"description": "b"}]}
    with pytest.raises(ModelOutputError, match="score") as caught:
        _model(server).expand(_view("0"))
    assert caught.value.call is not None and '"OR"' in caught.value.call.raw
    assert caught.value.call.usage["output_tokens"] > 0


def test_an_answer_without_the_tool_call_is_an_output_error(server: FakeAnthropic) -> None:
    server.replies = {}
    with pytest.raises(ModelOutputError, match="did not call the expand_node tool"):
        _model(server).expand(_view("0"))


def test_malformed_answers_are_retried_by_the_engine_then_fail_the_node(server: FakeAnthropic) -> None:
    server.replies[("expand_node", TASK)] = {"type": "OR", "children": [{"description": "a"}, {"description": "b"}]}
    state, log = new_state(TASK, EngineConfig(expansion_retries=2, repair=False))
    _run(state, _model(server), log)
    attempts = [e for e in log if e.kind is Kind.MODEL_CALL and e.data["question"] == "expand"]
    assert [a.data["attempt"] for a in attempts] == [1, 2, 3]
    assert all(not a.data["ok"] and "score" in a.data["error"] for a in attempts)
    assert all(a.data["usage"]["input_tokens"] > 0 for a in attempts)
    assert "expansion failed: invalid expand_node answer" in (state.tree["0"].reason or "")
    assert state.status is RunStatus.FAILED
    assert state.metrics.model_errors == 3


# -- a whole session, and its replay ----------------------------------------------------------------


def _claude_session(server: FakeAnthropic) -> tuple[SessionState, list[Event]]:
    state, log = new_state(TASK)
    _run(state, _model(server), log)
    return state, log


def test_a_full_session_runs_on_claude_and_records_usage_without_the_key(server: FakeAnthropic) -> None:
    state, log = _claude_session(server)
    assert state.status is RunStatus.SUCCEEDED
    assert state.final_answer == "Crema Compact Espresso, $129.00"
    assert state.notes == ["Crema Compact Espresso: $129.00"]
    metrics = state.metrics
    assert metrics.model_calls == len(server.requests) and metrics.model_errors == 0
    assert metrics.cache_read_tokens > 0 and metrics.cache_write_tokens > 0 and metrics.cost_usd > 0
    writes = [e.data["question"] for e in log if e.kind is Kind.MODEL_CALL and e.data["usage"]["cache_write_tokens"]]
    assert writes == ["expand"], "the first call writes the shared prefix; every other question reads it"
    dumped = json.dumps([e.data for e in log])
    assert KEY not in dumped
    assert all(_sent_key(h) == KEY for h in server.headers)


def test_replaying_a_session_gives_the_same_tree_and_answer(server: FakeAnthropic) -> None:
    original, log = _claude_session(server)
    replayed, replay_log = new_state(TASK)
    _run(replayed, ReplayModel(recorded_calls(log)), replay_log)
    assert snapshot(replayed)["nodes"] == snapshot(original)["nodes"]
    assert replayed.final_answer == original.final_answer and replayed.status is RunStatus.SUCCEEDED


def test_replay_without_a_recording_names_the_question_and_node() -> None:
    with pytest.raises(ModelOutputError, match="no recorded answer for expand on 'open the cheapest result'"):
        ReplayModel([]).expand(_view())


def test_model_specs_resolve_through_the_session_store(
    server: FakeAnthropic, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessions.backends import build_backend, prepare_model
    from sessions.client.creation import create_session
    from sessions.client.export import trace
    from sessions.errors import UnknownModel
    from sessions.store.reading import load_state
    from sessions.store.sql import open_store

    monkeypatch.setenv("ANDOR_DB", str(tmp_path / "sessions.db"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    assert prepare_model("claude") == {} and prepare_model("claude:claude-haiku-4-5") == {}
    store = open_store()
    try:
        first = create_session(store, TASK, "claude", start_url="dry://start")
        backend = build_backend(load_state(store, first))
        assert isinstance(backend.model, ClaudeModel) and backend.model.model == DEFAULT_MODEL == "claude-sonnet-5-5"
        state = load_state(store, first)
        log: list[Event] = []
        _run(state, backend.model, log)
        store.append(first, log, status=state.status.value, reason=state.reason, steps=state.steps)

        trace_file = tmp_path / "trace.json"
        trace_file.write_text(json.dumps(trace(first, state, store.load(first))))
        for source in (first, str(trace_file)):
            second = create_session(store, TASK, f"replay:{source}", start_url="dry://start")
            replayed = load_state(store, second)
            _run(replayed, build_backend(replayed).model, [])
            assert snapshot(replayed)["nodes"] == snapshot(state)["nodes"]
            assert replayed.final_answer == state.final_answer
        (tmp_path / "broken.json").write_text("{}")
        with pytest.raises(UnknownModel, match="not a trace written by `export`"):
            prepare_model(f"replay:{tmp_path / 'broken.json'}")
        with pytest.raises(UnknownModel, match="no such file"):
            prepare_model(f"replay:{tmp_path / 'missing.json'}")
    finally:
        store.close()


@pytest.mark.parametrize(
    ("spec", "effort", "says"),
    [
        ("claude:claude-haiku-4-5", "high", "Claude Haiku 4.5 \\(claude-haiku-4-5\\) takes no effort setting"),
        ("claude:claude-opus-4-6", "max", "takes effort low, medium, high, not max"),
        ("claude", "ultra", "unknown effort 'ultra'; use one of low, medium, high, xhigh, max"),
        ("demo", "low", "--effort applies to Claude models only"),
    ],
)
def test_an_effort_the_model_does_not_take_is_refused_in_one_sentence(spec: str, effort: str, says: str) -> None:
    from sessions.backends import prepare_model
    from sessions.errors import UnknownModel

    with pytest.raises(UnknownModel, match=says):
        prepare_model(spec, effort=effort)


def test_a_sessions_effort_is_stored_with_it_and_used_on_resume(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.state import Recorder
    from sessions.backends import build_backend, prepare_model

    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    assert prepare_model("claude") == {} and prepare_model("claude", effort="xhigh") == {"effort": "xhigh"}
    state = SessionState()
    Recorder(state).record(
        Kind.SESSION_CREATED,
        task=TASK,
        model="claude",
        model_data=prepare_model("claude", effort="xhigh"),
        start_url="dry://start",
    )
    model = build_backend(state).model
    assert isinstance(model, ClaudeModel) and model.effort == "xhigh"
    assert model.thinking and model.request(Question.EXPAND, _view())["output_config"] == {"effort": "xhigh"}


def test_a_missing_key_makes_the_model_unavailable(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelUnavailable, match="set ANTHROPIC_API_KEY"):
        _model(server).expand(_view("0"))
    assert server.requests == []


def test_token_bench_sizes_prompts_and_counts_calls_per_action(server: FakeAnthropic) -> None:
    from bench.tokens import calls_per_action, prompt_tokens

    sizes = prompt_tokens(_view())
    assert set(sizes) == {"constraints", "expand", "repair", "observe", "complete", "final_answer"}
    assert all(prefix > 0 and call > 0 for prefix, call in sizes.values())
    _, log = _claude_session(server)
    assert calls_per_action(log) == (len(server.requests), 2)  # the note is not a browser action


# -- a demo-shop task end to end in Chromium, then replayed offline --------------------------------

SHOP_TASK = (
    'Search the shop for "espresso", open the cheapest espresso machine in the results, and tell me its name and price.'
)


def _prompt(body: dict[str, Any]) -> str:
    return body["messages"][0]["content"][-1]["text"]


def _section(body: dict[str, Any], title: str) -> str:
    text = _prompt(body)
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0] if f"## {title}" in text else ""


def _ground(goal: str, page: str) -> str | None:
    """What a model reading the compact observation would answer for one of this task's sub-goals."""
    from planner.models.offline import read_elements

    elements = read_elements(page)
    if goal == "search for espresso":
        return f"type [{next(e.id for e in elements if e.role == 'searchbox')}] [espresso] [1]"
    if goal == "sort by price, low to high":
        return f"click [{next(e.id for e in elements if e.name == 'Price: low to high')}]"
    lines = page.splitlines()
    if goal == "open the first result":
        cards = (
            re.search(r"\[(\d+)\] link", line)
            for line, after in itertools.pairwise(lines)
            if after.strip().startswith("by ")
        )
        return f"click [{next(card[1] for card in cards if card)}]"
    if goal == "note the name and price":
        heading = next((line for line in lines if line.startswith("# ")), None)
        price = next((line for line in lines if line.startswith("Price: ")), None)
        if heading and price:
            return f"note [{heading.removeprefix('# ')}: {price.removeprefix('Price: ')}]"
    return None


def _observe_shop(body: dict[str, Any]) -> dict[str, Any]:
    page, ahead = _section(body, "Current page"), []
    for node_id, goal in re.findall(
        r"^(\S+) \[UNKNOWN UNVISITED\] (.+)$", _section(body, "Upcoming sub-goals"), re.MULTILINE
    ):
        action = _ground(goal, page)
        if action is None:
            break
        ahead.append({"node": node_id, "action": action})
        if not action.startswith("note"):
            break
    return {"summary": "a shop page", "progress": "working through the plan", "ahead": ahead}


def _expand_shop(body: dict[str, Any]) -> dict[str, Any]:
    goals = ["search for espresso", "sort by price, low to high", "open the first result", "note the name and price"]
    first = {"description": goals[0], "action": _ground(goals[0], _section(body, "Current page"))}
    return {"type": "AND", "children": [first, *({"description": g} for g in goals[1:])]}


def _complete_shop(body: dict[str, Any]) -> dict[str, Any]:
    notes = [line[2:] for line in _section(body, "Notes so far").splitlines() if line.startswith("- ")]
    return {"complete": bool(notes), "reason": "name and price noted", "answer": "; ".join(notes)}


SHOP_SCRIPT: dict[tuple[str, str], Any] = {
    ("extract_constraints", SHOP_TASK): {
        "items": [{"item": "espresso machine", "constraints": ["cheapest"]}],
        "task": ["name and price"],
    },
    ("expand_node", SHOP_TASK): _expand_shop,
    ("observe_page", "*"): _observe_shop,
    ("check_completion", SHOP_TASK): _complete_shop,
}


def _run_to_end(store: Any, session_id: str) -> SessionState:
    from sessions.worker.runner import Runner

    deadline = time.monotonic() + 60
    state = Runner(store, session_id).run(should_stop=lambda: time.monotonic() > deadline)
    assert state.finished, state.reason
    return state


BROWSER_MODEL_IDS = [
    DEFAULT_MODEL,
    "claude-opus-5-5",
    "claude-haiku-5-5",
    "claude-fable-5-2",
    "claude-sonnet-4-6",
    UNKNOWN,
]
"""In Chromium: every current family (they think, refuse forced tool use and omit thinking unless asked), a
legacy family that takes forced tool use, and an id the table does not know. Every family runs the same
task on the dry environment above."""


@pytest.mark.browser
@pytest.mark.parametrize("model_id", BROWSER_MODEL_IDS)
def test_a_demo_shop_task_runs_on_claude_in_chromium_and_replays_offline(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, model_id: str
) -> None:
    """One demo task end to end under each family's rules; the default model's run is also replayed."""
    from demo.shop import start_shop
    from demo.tasks import check_answer, load_tasks
    from sessions.client.creation import create_session
    from sessions.store.sql import open_store

    task = next(t for t in load_tasks() if t.task == SHOP_TASK)
    db = tmp_path / "sessions.db"
    store = open_store(str(db))
    with FakeAnthropic(dict(SHOP_SCRIPT)) as fake, start_shop() as shop:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        spec = "claude" if model_id == DEFAULT_MODEL else f"claude:{model_id}"
        recorded = create_session(store, SHOP_TASK, spec, start_url=shop.url + "/")
        state = _run_to_end(store, recorded)
        assert state.status is RunStatus.SUCCEEDED and check_answer(task, state.final_answer or "").passed, (
            state.final_answer
        )
        calls = [e.payload for e in store.load(recorded) if isinstance(e.payload, ModelCalled)]
        assert [c.question for c in calls] == ["constraints", "expand", "observe", "observe", "observe", "complete"]
        assert state.metrics.actions == 4 and state.constraints == ["espresso machine: cheapest", "name and price"]
        assert KEY.encode() not in db.read_bytes()
        family = family_of(model_id)
        assert all(body["model"] == model_id for body in fake.requests)
        for body in fake.requests:
            _never_refused(family, body)
        assert all(bool(c.thinking) == family.thinks_by_default for c in calls), "a summary for the inspector"
        assert (state.metrics.cost_usd > 0) == (family.prices is not None), state.metrics.cost_usd
        if model_id != DEFAULT_MODEL:
            store.close()
            return

        served = len(fake.requests)
        replayed = create_session(store, SHOP_TASK, f"replay:{recorded}", start_url=shop.url + "/")
        again = _run_to_end(store, replayed)
        assert len(fake.requests) == served, "a replay never calls the API"
    store.close()
    assert again.final_answer == state.final_answer and again.status is RunStatus.SUCCEEDED
    assert [(n.id, n.action, n.status) for n in again.tree.walk()] == [
        (n.id, n.action, n.status) for n in state.tree.walk()
    ]
