"""Malformed answers from the Messages API never crash a run, and model output is bounded.

A corpus of broken answers and envelopes (wrong statuses, content types and bodies, messages
without usage or with impossible token counts, bodies cut off mid-way, not HTTP at all) is served
by the local fake of the API to the real SDK. For every case and every question, `ClaudeModel`
raises only the planner's own errors, with one sentence that says what came back. Whole sessions
against a broken endpoint pause with that sentence, keep the failed calls in their log, and finish
on `resume` once the endpoint answers properly again.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import drive, new_state
from fake_anthropic import FakeAnthropic, RawReply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import Resume, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.errors import ModelEnvelopeError, ModelOutputError, ModelUnavailable, PlannerError
from planner.events import Event, Kind
from planner.models.claude import ClaudeModel
from planner.questions import Reply, View
from planner.state import RunStatus, SessionState
from planner.tree import Node, Tree

KEY = "sk-ant-test-DO-NOT-LEAK-7f3a9c"
TASK = "Find the cheapest espresso machine and tell me its price."

ANSWERS: dict[str, dict[str, Any]] = {
    "extract_constraints": {"items": [{"item": "espresso machine", "constraints": ["cheapest"]}], "task": []},
    "expand_node": {"type": "ACTION", "action": "note [Crema Compact: $129.00]"},
    "repair_node": {"add": [{"description": "search again"}]},
    "observe_page": {"summary": "a page", "progress": "noted the price"},
    "check_completion": {"complete": True, "reason": "price noted", "answer": "Crema Compact, $129.00"},
    "final_answer": {"answer": "Crema Compact, $129.00"},
}
"""A valid answer for every tool, for any node: the fake's message that each fault then breaks."""

QUESTIONS: dict[str, Callable[[ClaudeModel, View], Reply[Any]]] = {
    "constraints": lambda m, v: m.extract_constraints(v),
    "expand": lambda m, v: m.expand(v),
    "repair": lambda m, v: m.repair(v, "the search found nothing"),
    "observe": lambda m, v: m.observe(v, "click [3]"),
    "complete": lambda m, v: m.check_completion(v),
    "final_answer": lambda m, v: m.final_answer(v),
}

E, O, U = ModelEnvelopeError, ModelOutputError, ModelUnavailable
ALLOWED = (ModelEnvelopeError, ModelOutputError, ModelUnavailable)


@pytest.fixture(scope="module", autouse=True)
def fake_key() -> Iterator[None]:
    """Module-wide, as the shared client reads the key when it is built."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANTHROPIC_API_KEY", KEY)
        yield


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic({(tool, "*"): answer for tool, answer in ANSWERS.items()}) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeAnthropic) -> Iterator[FakeAnthropic]:
    server.repair()
    yield server
    server.repair()


@pytest.fixture(scope="module")
def model(server: FakeAnthropic) -> ClaudeModel:
    """One client for the many single-call tests: building an SDK client costs far more than a call."""
    return _model(server)


def _model(server: FakeAnthropic, **options: Any) -> ClaudeModel:
    return ClaudeModel(base_url=server.url, **{"max_retries": 0, "timeout": 10, **options})


def _view() -> View:
    tree = Tree()
    tree.nodes = {"0": Node(id="0", description=TASK)}
    return View(task=TASK, tree=tree, node=tree["0"], observation="[3] link 'Crema Compact'", url="dry://start")


# -- the corpus -------------------------------------------------------------------------------------

_DROP = object()
TOOL = "<the tool_use block>"
"""In a path under "content": the index of the tool call, wherever the thinking blocks put it."""


def _edit(path: tuple[str | int, ...], value: Any = _DROP) -> Callable[[dict[str, Any]], bytes]:
    """A body that is the fake's valid message with one field replaced (or removed)."""

    def body(message: dict[str, Any]) -> bytes:
        message = copy.deepcopy(message)
        if not path:
            return json.dumps(value).encode()
        tool = next(i for i, block in enumerate(message["content"]) if block["type"] == "tool_use")
        steps = [tool if part == TOOL else part for part in path]
        parent: Any = message
        for part in steps[:-1]:
            parent = parent[part]
        if value is _DROP:
            del parent[steps[-1]]
        else:
            parent[steps[-1]] = value
        return json.dumps(message).encode()

    return body


def _valid(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def _cut(keep: int) -> Callable[[dict[str, Any]], bytes]:
    """The valid message's JSON, cut after `keep` bytes (negative: that many bytes short)."""
    return lambda message: _valid(message)[:keep]


@dataclass(frozen=True)
class Fault:
    name: str
    reply: RawReply
    expect: type[PlannerError]


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
BAD_COUNTS: tuple[Any, ...] = (-1, -(2**31), 10**15, 10_000_001, 2**64, "12", 1.5, True, [], {})
HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
NOT_ANY_OUTPUT = {
    "items": 5, "task": 5, "type": [], "add": 5, "summary": [], "complete": [], "answer": [],
}  # fmt: skip
"""A tool input that no question's output accepts (each has at least one field of the wrong type)."""
OVERSIZED = {
    "task": ["x"] * 51,
    "type": "AND",
    "children": [{"description": "step"}] * 101,
    "add": [{"description": "step"}] * 101,
    "summary": "x" * 5000,
    "complete": True,
    "answer": "x" * 5000,
}
"""A tool input over some length bound for every question: lists of 51 or 101 items, 5,000-character texts."""


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def corpus() -> list[Fault]:
    """Every broken answer this suite serves; each is tried on every question."""
    faults: list[Fault] = []

    def add(name: str, expect: type[PlannerError], body: Any = b"", **options: Any) -> None:
        faults.append(Fault(name, RawReply(body=body, **options), expect))

    # usage: missing, not an object, counts that are missing, negative, absurd or not whole numbers
    add("usage missing", E, _edit(("usage",)))
    for value in (None, [], "10", 5, {}, {"input_tokens": 5}):
        add(f"usage is {json.dumps(value)}", E, _edit(("usage",), value))
    for field in TOKEN_FIELDS:
        for value in BAD_COUNTS:
            add(f"usage.{field} is {json.dumps(value)}", E, _edit(("usage", field), value))
    for field in TOKEN_FIELDS[:2]:
        add(f"usage.{field} missing", E, _edit(("usage", field)))
        add(f"usage.{field} null", E, _edit(("usage", field), None))
    add("NaN token count", E, lambda m: _valid(m).replace(b'"output_tokens": ', b'"output_tokens": NaN, "x": '))
    add("Infinity token count", E, lambda m: _valid(m).replace(b'"input_tokens": ', b'"input_tokens": Infinity, "x": '))

    # content: missing, not a list, blocks that are not blocks, tool calls without a usable input
    add("content missing", E, _edit(("content",)))
    for value in (None, "text", {}, 5, [5], [None], [{}], [{"type": 5}], [{"type": "text", "text": 5}]):
        add(f"content is {json.dumps(value)}", E, _edit(("content",), value))
    for value in (None, [], "{}", 5, True):
        add(f"tool input is {json.dumps(value)}", E, _edit(("content", TOOL, "input"), value))
    add("tool input missing", E, _edit(("content", TOOL, "input")))
    add("tool name missing", E, _edit(("content", TOOL, "name")))
    add("tool name is a number", E, _edit(("content", TOOL, "name"), 5))
    add("content is empty", O, _edit(("content",), []))
    add("only an unknown block type", O, _edit(("content",), [{"type": "hologram", "data": 1}]))
    add("only text", O, _edit(("content",), [{"type": "text", "text": "I would rather not."}]))
    add("another tool called", O, _edit(("content", TOOL, "name"), "launch_rockets"))
    add("tool input fits no question", O, _edit(("content", TOOL, "input"), NOT_ANY_OUTPUT))
    add("tool input over the length bounds", O, _edit(("content", TOOL, "input"), OVERSIZED))
    add("tool input nested 150 deep", O, _edit(("content", TOOL, "input"), dict.fromkeys(NOT_ANY_OUTPUT, _deep(150))))
    add("cut off at max_tokens", O, _edit(("stop_reason",), "max_tokens"))

    # thinking blocks (the default model thinks): a summary that is not text, or thinking and no answer
    for value in (5, [], {"text": "x"}, True):
        add(f"thinking text is {json.dumps(value)}", E, _edit(("content", 0, "thinking"), value))
    add("only a thinking block", O, lambda m: _valid({**m, "content": m["content"][:1], "stop_reason": "end_turn"}))

    # the message itself: wrong type, an error object, not an object at all
    add("type missing", E, _edit(("type",)))
    for value in (None, 5, "mess", "error", "Message"):
        add(f"type is {json.dumps(value)}", E, _edit(("type",), value))
    for value in (5, [], {}):
        add(f"stop_reason is {json.dumps(value)}", E, _edit(("stop_reason",), value))
    add("HTTP 200 with an API error", E, json.dumps(ERROR).encode())
    add("HTTP 200 with an error that is a string", E, b'{"type": "error", "error": "busy"}')
    for value in ({}, [], None, 0, "message", True, [{"type": "message"}]):
        add(f"body is {json.dumps(value)}", E, json.dumps(value).encode())
    add("message in a list", E, lambda m: json.dumps([m]).encode())

    # bodies that are not JSON, or not UTF-8, or not one JSON value
    add("empty body", E, b"")
    add("blank body", E, b" \r\n ")
    add("HTML page", E, HTML)
    for keep in (1, 10, 100, -1):
        add(f"JSON cut at {keep}", E, _cut(keep))
    add("arrays nested 100,000 deep", E, b"[" * 100_000 + b"]" * 100_000)
    add("objects nested 100,000 deep", E, b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    add("tool input nested 100,000 deep", E, lambda m: _valid(m).replace(b'"input": {', b'"input": ' + b"[" * 100_000))
    add("invalid UTF-8", E, lambda m: _valid(m).replace(b'"message"', b'"mess\xff\xfeage"', 1))
    add("UTF-16", E, lambda m: json.dumps(m).encode("utf-16"))
    add("byte order mark", E, lambda m: b"\xef\xbb\xbf" + _valid(m))
    add("trailing garbage", E, lambda m: _valid(m) + b" }{ garbage")
    add("two messages", E, lambda m: _valid(m) + _valid(m))
    add("control character in a string", E, lambda m: _valid(m).replace(b'"message"', b'"mess\x01age"', 1))
    add("lone surrogate", E, lambda m: _valid(m).replace(b'"message"', b'"\\ud800"', 1))
    add("5 MB body", E, b'{"type": "message", "pad": "' + b"x" * 5_000_000 + b'"}')

    # content types
    add("HTML page labelled text/html", E, HTML, headers={"content-type": "text/html; charset=utf-8"})
    add("valid message labelled text/plain", E, _valid, headers={"content-type": "text/plain"})
    add("valid message without a content-type", E, _valid, headers={})
    add("valid message labelled XML", E, _valid, headers={"content-type": "application/xml"})
    add("octet stream", E, b"\x00\x01\x02", headers={"content-type": "application/octet-stream"})
    add("problem+json error", E, json.dumps(ERROR).encode(), headers={"content-type": "application/problem+json"})

    # broken HTTP: bodies cut off, encodings that are not what they claim, not HTTP at all
    for keep in (0, 10, 200):
        add(f"connection closed after {keep} body bytes", E, _valid, cut_after=keep)
    add("chunked, closed mid-body", E, _valid, chunked=True, cut_after=40)
    add(
        "gzip declared, plain sent", E, _valid, headers={"content-type": "application/json", "content-encoding": "gzip"}
    )
    add(
        "deflate declared, plain sent",
        E,
        _valid,
        headers={"content-type": "application/json", "content-encoding": "deflate"},
    )
    add("not HTTP", E, b"", head=b"SSH-2.0-OpenSSH_9.6\r\n")
    add("garbage status line", E, b"{}", head=b"HTTP/1.1 abc\r\ncontent-length: 2\r\n\r\n")
    add("closed without a response", E, b"", head=b"")
    add("HTTP 201 with an HTML page", E, HTML, status=201, headers={"content-type": "text/html"})
    add("HTTP 204", E, b"", status=204, headers={})

    # error statuses, with bodies that are not what the SDK expects
    for status in (500, 502, 503, 529, 401, 403, 404, 418):
        add(f"HTTP {status} with an HTML page", U, HTML, status=status, headers={"content-type": "text/html"})
    add("HTTP 500 whose error message is a number", U, b'{"error": {"message": 5}}', status=500)
    add("HTTP 500 whose error is a string", U, b'{"error": "down"}', status=500)
    add("HTTP 503 with an empty body", U, b"", status=503)
    add(
        "HTTP 429 with a bad retry-after",
        U,
        b"{}",
        status=429,
        headers={"retry-after": "soon", "content-type": "application/json"},
    )
    add("HTTP 304 without a location", U, b"", status=304, headers={})
    add("HTTP 400 with an HTML page", O, HTML, status=400, headers={"content-type": "text/html"})
    add("HTTP 400 whose error message is a list", O, b'{"error": {"message": [1]}}', status=400)
    add("HTTP 413 with a list", O, b"[]", status=413)
    add("HTTP 422 with an empty body", O, b"", status=422)
    return faults


CORPUS = corpus()
CASES = [(fault, question) for fault in CORPUS for question in QUESTIONS]


def _check_sentence(error: PlannerError) -> None:
    """One readable sentence: no traceback, no pydantic dump, no key, a bounded length."""
    text = str(error)
    assert "\n" not in text and len(text) < 700, text
    assert "validation error" not in text and "errors.pydantic.dev" not in text and "Traceback" not in text, text
    assert KEY not in text


@pytest.mark.parametrize(("fault", "question"), CASES, ids=[f"{f.name}-{q}" for f, q in CASES])
def test_a_broken_answer_raises_only_planner_errors_with_one_sentence(
    fake: FakeAnthropic, model: ClaudeModel, fault: Fault, question: str
) -> None:
    fake.raw(fault.reply)
    try:
        QUESTIONS[question](model, _view())
    except ALLOWED as error:
        raised: PlannerError = error
    else:
        pytest.fail(f"{fault.name}: the answer was accepted")
    assert type(raised) is fault.expect, f"{fault.name}: {type(raised).__name__}: {raised}"
    _check_sentence(raised)
    if isinstance(raised, ModelEnvelopeError):
        assert str(raised).startswith(f"the Claude API at {fake.url} "), raised
        assert str(raised).endswith("; check ANTHROPIC_BASE_URL and resume the session"), raised
        assert raised.call is not None and raised.call.prompt and len(raised.call.raw or "") <= 500
    if isinstance(raised, ModelOutputError) and raised.call is not None and raised.call.usage:
        assert all(0 <= raised.call.usage[k] for k in ("input_tokens", "output_tokens")), raised.call.usage


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 500, f"only {len(CASES)} malformed answers are tried"


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("charset in the content type", RawReply(body=_valid, headers={"content-type": "application/json; charset=utf-8"})),
        ("chunked", RawReply(body=_valid, chunked=True)),
        ("fields this backend does not read", RawReply(body=lambda m: _valid({**m, "container": {"id": 1}, "extra": [1]}))),
        ("null cache counts", RawReply(body=_edit(("usage", "cache_read_input_tokens"), None))),
        ("no cache counts", RawReply(body=_edit(("usage", "cache_creation_input_tokens")))),
        ("an unknown block next to the tool call", RawReply(body=lambda m: _valid({**m, "content": [{"type": "hologram"}, *m["content"]]}))),
        ("a stop reason added after this SDK", RawReply(body=_edit(("stop_reason",), "some_new_reason"))),
        ("HTTP 201", RawReply(body=_valid, status=201)),
    ],
)  # fmt: skip
def test_answers_that_only_look_unusual_are_accepted(
    fake: FakeAnthropic, model: ClaudeModel, name: str, reply: RawReply
) -> None:
    fake.raw(reply)
    answer = model.expand(_view())
    assert answer.output.action == "note [Crema Compact: $129.00]", name
    assert answer.call.usage["input_tokens"] > 0 and answer.call.usage["cost_usd"] > 0


def test_an_endpoint_that_echoes_the_key_never_puts_it_in_a_message_or_record(
    fake: FakeAnthropic, model: ClaudeModel
) -> None:
    fake.raw(RawReply(body=f"<html>bad key {KEY}</html>".encode(), headers={"content-type": "text/html"}))
    with pytest.raises(ModelEnvelopeError) as caught:
        model.expand(_view())
    assert KEY not in str(caught.value) and KEY not in (caught.value.call.raw or "")
    assert "[redacted]" in caught.value.call.raw


def test_the_sentence_says_what_came_back(fake: FakeAnthropic, model: ClaudeModel) -> None:
    expected = [
        (RawReply(body=HTML, headers={"content-type": "text/html"}), "answered HTTP 200 with an HTML page (text/html)"),
        (RawReply(body=_edit(("usage",))), "answered HTTP 200 with a Messages response without usage"),
        (
            RawReply(body=_edit(("usage", "input_tokens"), -(10**9))),
            "whose usage.input_tokens is -1000000000, not a token count from 0 to 10,000,000",
        ),
        (RawReply(body=_edit(("usage", "output_tokens"), 10**15)), "usage.output_tokens is 1000000000000000, not a"),
        (RawReply(body=_valid, cut_after=20), "sent an answer that is not complete HTTP (peer closed connection"),
        (RawReply(body=b"[" * 100_000), "a body that is not valid JSON (recursion limit exceeded"),
        (RawReply(body=json.dumps(ERROR).encode()), 'with an API error ("overloaded_error": "Overloaded")'),
        (RawReply(body=_valid, headers={"content-type": "text/plain"}), "with a body of type text/plain, not a"),
    ]
    for reply, words in expected:
        fake.raw(reply)
        with pytest.raises(ModelEnvelopeError) as caught:
            model.expand(_view())
        assert words in str(caught.value), str(caught.value)


def test_sdk_retries_of_a_cut_off_body_still_end_in_one_envelope_error(fake: FakeAnthropic) -> None:
    fake.raw(RawReply(body=_valid, cut_after=20), times=2)
    with pytest.raises(ModelEnvelopeError, match="not complete HTTP"):
        _model(fake, max_retries=1).expand(_view())
    fake.raw(RawReply(body=_valid, cut_after=20), times=1)
    assert _model(fake, max_retries=1).expand(_view()).output.type == "ACTION", "the SDK's retry got a whole answer"


def test_an_answer_slower_than_the_timeout_makes_the_model_unavailable(fake: FakeAnthropic) -> None:
    fake.raw(RawReply(body=_valid, delay=1.0))
    with pytest.raises(ModelUnavailable, match="timeout") as caught:
        _model(fake, timeout=0.2).expand(_view())
    assert not isinstance(caught.value, ModelEnvelopeError)


def test_ten_thousand_children_are_refused_before_they_reach_a_prompt(fake: FakeAnthropic, model: ClaudeModel) -> None:
    children = [{"description": f"step {i}"} for i in range(10_000)]
    fake.raw(RawReply(body=_edit(("content", TOOL, "input"), {"type": "AND", "children": children})))
    with pytest.raises(
        ModelOutputError, match="children: List should have at most 100 items after validation, not 10000"
    ):
        model.expand(_view())


def test_a_runaway_answer_is_cut_in_the_record_and_named_briefly_in_the_reason(
    fake: FakeAnthropic, model: ClaudeModel
) -> None:
    fake.raw(RawReply(body=_edit(("content",), [{"type": "text", "text": "blah " * 100_000}])))
    with pytest.raises(ModelOutputError) as caught:
        model.expand(_view())
    assert len(caught.value.call.raw) < 21_000 and caught.value.call.raw.endswith("more characters not kept)")

    fake.raw(
        RawReply(body=_edit(("content", TOOL, "input"), {"type": "AND", "children": [{"description": "x" * 5000}]}))
    )
    with pytest.raises(ModelOutputError, match=r"^invalid expand_node answer: children\.0\.description: String should"):
        model.expand(_view())

    fake.raw(RawReply(body=lambda m: _valid({**m, "content": [], "stop_reason": "why\n" * 1000})))
    with pytest.raises(ModelOutputError, match="did not call the expand_node tool") as caught:
        model.expand(_view())
    _check_sentence(caught.value)


# -- generated faults -------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_PATHS: list[tuple[str | int, ...]] = [
    (),
    ("type",),
    ("role",),
    ("id",),
    ("model",),
    ("content",),
    ("content", TOOL),
    ("content", TOOL, "type"),
    ("content", TOOL, "name"),
    ("content", TOOL, "input"),
    ("content", TOOL, "input", "type"),
    ("content", TOOL, "input", "action"),
    ("content", TOOL, "input", "children"),
    ("stop_reason",),
    ("usage",),
    *(("usage", field) for field in TOKEN_FIELDS),
]


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    path=st.sampled_from(_PATHS),
    value=_JSON | st.just(_DROP),
    question=st.sampled_from(sorted(QUESTIONS)),
)
def test_any_field_of_an_answer_replaced_by_any_json_raises_only_planner_errors(
    server: FakeAnthropic, model: ClaudeModel, path: tuple[str | int, ...], value: Any, question: str
) -> None:
    server.repair()
    if not path and value is _DROP:
        value = None
    server.raw(RawReply(body=_edit(path, value)))
    try:
        reply = QUESTIONS[question](model, _view())
    except ALLOWED as error:
        _check_sentence(error)
        return
    usage = reply.call.usage
    assert all(0 <= usage[k] <= 10_000_000 for k in ("input_tokens", "output_tokens")) and usage["cost_usd"] >= 0


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    body=st.binary(max_size=300) | _JSON.map(lambda v: json.dumps(v).encode()),
    status=st.sampled_from([200, 200, 200, 201, 204, 400, 404, 422, 500, 503]),
    content_type=st.sampled_from(["application/json", "text/html", "text/plain", "", "application/json; charset=latin-1"]),
)  # fmt: skip
def test_any_body_with_any_status_raises_only_planner_errors(
    server: FakeAnthropic, model: ClaudeModel, body: bytes, status: int, content_type: str
) -> None:
    server.repair()
    server.raw(RawReply(body=body, status=status, headers={"content-type": content_type} if content_type else {}))
    with pytest.raises(ALLOWED) as caught:
        model.expand(_view())
    _check_sentence(caught.value)


# -- sessions against a broken endpoint -------------------------------------------------------------


def _failed_calls(log: list[Event]) -> list[Event]:
    return [e for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]]


def test_a_broken_endpoint_pauses_the_session_after_the_retry_budget(fake: FakeAnthropic, model: ClaudeModel) -> None:
    fake.raw(RawReply(body=HTML, headers={"content-type": "text/html"}), times=None)
    state, log = new_state(TASK, EngineConfig(expansion_retries=2))
    engine = Engine(state, model, DryEnvironment())
    drive(engine, log)
    assert state.status is RunStatus.PAUSED
    assert state.reason == (
        f"model unavailable: the Claude API at {fake.url} answered HTTP 200 with an HTML page (text/html), "
        "not a Messages response; check ANTHROPIC_BASE_URL and resume the session"
    )
    failed = _failed_calls(log)
    assert [(e.data["question"], e.data["attempt"]) for e in failed] == [
        ("constraints", 1),
        ("constraints", 2),
        ("constraints", 3),
    ]
    assert all(e.data["error"] == state.reason.removeprefix("model unavailable: ") for e in failed)
    assert all(e.data["raw"].startswith("<!DOCTYPE html>") and e.data["prompt"] for e in failed)
    assert state.metrics.model_errors == 3 and state.metrics.cost_usd == 0
    assert state.awaits_constraints, "nothing was decided on the endpoint's garbage"

    fake.repair()
    log.extend(apply_command(state, Resume()))
    drive(engine, log)
    assert state.status is RunStatus.SUCCEEDED and state.final_answer == "Crema Compact, $129.00"


def test_one_broken_answer_is_retried_and_the_run_goes_on(fake: FakeAnthropic, model: ClaudeModel) -> None:
    fake.raw(RawReply(body=_edit(("usage", "input_tokens"), -(10**12))))
    state, log = new_state(TASK, EngineConfig(expansion_retries=2))
    drive(Engine(state, model, DryEnvironment()), log)
    assert state.status is RunStatus.SUCCEEDED
    [failed] = _failed_calls(log)
    assert "usage.input_tokens is -1000000000000" in failed.data["error"] and failed.data["usage"] == {}
    calls = [e for e in log if e.kind is Kind.MODEL_CALL]
    assert state.metrics.cost_usd == pytest.approx(sum(e.data["usage"].get("cost_usd", 0) for e in calls))
    assert state.metrics.cost_usd > 0 and state.metrics.input_tokens > 0


def test_a_cost_cap_still_triggers_when_an_answer_claims_negative_tokens(
    fake: FakeAnthropic, model: ClaudeModel
) -> None:
    fake.raw(RawReply(body=_edit(("usage", "output_tokens"), -(10**9))), times=None)
    state, log = new_state(TASK, EngineConfig(max_cost_usd=0.000001, expansion_retries=0))
    engine = Engine(state, model, DryEnvironment())
    drive(engine, log)
    assert state.status is RunStatus.PAUSED and state.metrics.cost_usd == 0
    fake.repair()
    log.extend(apply_command(state, Resume()))
    drive(engine, log)
    assert state.status is RunStatus.PAUSED and (state.reason or "").startswith("cost cap reached"), state.reason


BROKEN = {
    "html": RawReply(body=HTML, headers={"content-type": "text/html"}),
    "usage missing": RawReply(body=_edit(("usage",))),
    "cut off": RawReply(body=_valid, cut_after=50),
    "nested 100,000 deep": RawReply(body=b"[" * 100_000 + b"]" * 100_000),
    "negative tokens": RawReply(body=_edit(("usage", "input_tokens"), -(10**12))),
    "content not a list": RawReply(body=_edit(("content",), "text")),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_session_run_by_the_runner_pauses_on_a_broken_endpoint_and_resumes(
    fake: FakeAnthropic, model: ClaudeModel, tmp_path: Any, kind: str
) -> None:
    from sessions.backends import Backend
    from sessions.client.commands import queue_command
    from sessions.client.creation import create_session
    from sessions.store.sql import open_store
    from sessions.worker.runner import Runner

    def run() -> SessionState:
        backend = Backend(model=model, env=DryEnvironment(start_url=DRY_START))
        deadline = time.monotonic() + 60
        state = Runner(store, session, backend).run(
            should_stop=lambda: time.monotonic() > deadline, on_idle=lambda _: False
        )
        assert time.monotonic() <= deadline, "the runner neither finished nor paused within 60 s"
        return state

    store = open_store(str(tmp_path / "sessions.db"))
    try:
        session = create_session(store, TASK, "claude", start_url=DRY_START, config=EngineConfig(expansion_retries=1))
        fake.raw(BROKEN[kind], times=None)
        for attempt in (1, 2):  # the first run, then a resume while the endpoint is still broken
            state = run()
            assert state.status is RunStatus.PAUSED, state.reason
            assert (state.reason or "").startswith(f"model unavailable: the Claude API at {fake.url} "), state.reason
            failed = _failed_calls(store.load(session))
            assert len(failed) == 2 * attempt and all(e.data["error"] in state.reason for e in failed)
            queue_command(store, session, Resume())

        fake.repair()
        state = run()
        assert state.status is RunStatus.SUCCEEDED, state.reason
        assert state.final_answer == "Crema Compact, $129.00"
        assert state.metrics.model_errors == 4 and state.metrics.cost_usd > 0
    finally:
        store.close()
