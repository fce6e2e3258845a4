"""Exports: DOT/SVG of the plan, the Markdown run report and the JSON trace, with hostile page text."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace

import pytest
from conftest import BROWNIE_TASK, load, new_state, run_script

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import Command, Force, Inject, Pause, Resume, apply_command
from planner.engine import Engine
from planner.events import Event
from planner.models.scripted import Script, ScriptedModel
from planner.state import SessionState
from sessions.client.export import ExportUnavailable, markdown_report, trace, trace_json, tree_dot, tree_svg

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot program is not installed (apt-get install graphviz)"
)

SHAPES = {"AND": "box", "OR": "diamond", "ACTION": "ellipse", "UNKNOWN": "triangle"}

HOSTILE_TASK = 'Find <img src=x onerror=alert(1)> [link](javascript:alert(1)) *bold* `code` | pipe "quoted" \\ slash'
BAD = "Click <b>A</b> | [x](http://evil.example)"
GOOD = "Click B_1 *now*"
HOSTILE_GOAL = "Maybe <script>alert(1)</script> [y](javascript:1)"
HOSTILE_SCRIPT = Script.model_validate(
    {
        "nodes": {
            HOSTILE_TASK: {
                "type": "OR",
                "children": [{"description": BAD, "score": 0.9}, {"description": GOOD, "score": 0.5}],
            },
            BAD: {"type": "ACTION", "action": "click [1] <svg onload=alert(1)>"},
            GOOD: {"type": "ACTION", "action": "click [2]"},
        },
        "fail_actions": ["click [1] <svg onload=alert(1)>"],
        "notes": {"click [2]": ["Price: $5 <i>only</i> `today`"]},
        "final_answer": "Use [this](javascript:alert(1)) <b>recipe</b>\n# Not a heading\n1. not a list",
    }
)


def run(script: Script, task: str, *, commands_after: int, commands: list[Command]) -> tuple[SessionState, list[Event]]:
    """Run `script`, applying operator `commands` after a few steps, to the end; returns state and log."""
    state, log = new_state(task)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    for _ in range(commands_after):
        log += engine.step()
    for command in commands:
        log += apply_command(state, command)
    while events := engine.step():
        log += events
    return state, log


@pytest.fixture(scope="module")
def hostile() -> tuple[SessionState, list[Event]]:
    return run(
        HOSTILE_SCRIPT,
        HOSTILE_TASK,
        commands_after=1,
        commands=[
            Pause(),
            Inject(parent="0", goals=[HOSTILE_GOAL], scores=[0.1]),  # ranked last: never runs
            Force(node="0", child="<img src=x>"),  # rejected: no such node
            Resume(),
        ],
    )


@pytest.fixture(scope="module")
def repaired() -> tuple[SessionState, list[Event]]:
    return run(load("brownie_fail.json"), BROWNIE_TASK, commands_after=2, commands=[Pause(), Pause(), Resume()])


def node_statement(dot: str, node_id: str) -> str:
    """The one DOT line that declares `node_id` (quoted or not)."""
    lines = [line for line in dot.splitlines() if re.match(rf'\t"?{re.escape(node_id)}"? \[', line)]
    assert len(lines) == 1, (node_id, lines)
    return lines[0]


def test_dot_has_every_node_with_its_shape_and_status(repaired: tuple[SessionState, list[Event]]) -> None:
    state, _ = repaired
    dot = tree_dot(state)
    assert dot.startswith("digraph plan {") and "rankdir=TB" in dot
    for node in state.tree.walk():
        line = node_statement(dot, node.id)
        assert f"shape={SHAPES[node.type.value]}" in line
        assert f"{node.id} {node.type.value}\\n" in line and f"\\n{node.status.value}" in line
        assert ("dashed" in line) is (node.status.value in ("PRUNED", "DELETED"))
    assert dot.count(" -> ") == len(state.tree) - 1
    assert "fillcolor=" in node_statement(dot, "0.1")


def test_dot_marks_operator_nodes(hostile: tuple[SessionState, list[Event]]) -> None:
    state, _ = hostile
    operator = node_statement(tree_dot(state), "0.3")
    assert "penwidth=2" in operator and "color=purple" in operator
    assert "penwidth" not in node_statement(tree_dot(state), "0.1")


def test_dot_escapes_quotes_backslashes_newlines_and_markup(hostile: tuple[SessionState, list[Event]]) -> None:
    state, _ = hostile
    state.tree["0.2"].description = 'line one\nline "two" \\n not a break <b>'
    try:
        dot = tree_dot(state)
        root = node_statement(dot, "0")
        assert '\\"quoted\\"' in root and "slash" in root
        assert re.search(r'label="0 OR\\n', root)  # a quoted string, not an HTML-like <...> label
        edited = node_statement(dot, "0.2")
        assert 'line one line \\"two\\" \\\\n not a break' in edited and "\\n<b>\\n" in edited
        header, nodes, edges, close = 4, len(state.tree), len(state.tree) - 1, 1
        assert len(dot.splitlines()) == header + nodes + edges + close  # no text broke a statement in two
    finally:
        state.tree["0.2"].description = GOOD


def test_dot_labels_wrap_long_descriptions() -> None:
    state = run_script(load("brownie.json"), BROWNIE_TASK)[0]
    state.tree["0.1"].description = "word " * 100
    label = re.search(r'label="([^"]*)"', node_statement(tree_dot(state), "0.1"))
    assert label is not None
    lines = label.group(1).split("\\n")
    assert lines[0] == "0.1 ACTION" and lines[-1] == "SUCCESS" and len(lines) == 5
    assert lines[-2].endswith("…") and all(len(line) <= 36 for line in lines)


@needs_dot
def test_svg_renders_labels_as_text(hostile: tuple[SessionState, list[Event]]) -> None:
    state, _ = hostile
    svg = tree_svg(state).decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert svg.count('class="node"') == len(state.tree)
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg and "<img" not in svg
    assert "pipe &quot;quoted&quot; \\ slash" in svg  # quotes and the backslash arrive as typed


def test_svg_without_dot_says_how_to_install_it(
    hostile: tuple[SessionState, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ExportUnavailable, match="apt-get install graphviz"):
        tree_svg(hostile[0])


def test_report_covers_outcome_plan_interventions_and_failures(repaired: tuple[SessionState, list[Event]]) -> None:
    state, events = repaired
    report = markdown_report("run-42", state, events)
    assert report.startswith("# Run report: run-42\n")
    assert f"**Task:** {BROWNIE_TASK}" in report
    assert "**Status:** answered, not checked" in report, "the planner believes it is done; nothing checked it"
    assert "> Vegan cocoa brownies, 4.6 stars" in report
    assert "| valid nodes | 4 |" in report and "| repairs | 1 |" in report
    for node in state.tree.walk():
        assert f"\\[{node.id}\\]" in report
    assert "  - \\[0.2.1\\] (ACT) Open recipe A" in report  # nested under its OR parent
    applied = [event for event in events if event.kind.value == "command_applied"]
    pauses = [event.seq for event in applied if event.payload.command["kind"] == "pause"]
    rejected = [event for event in events if event.kind.value == "command_rejected"]
    assert len(pauses) == 1 and len(rejected) == 1
    assert f"| {pauses[0]} | – | applied | pause | – | – |" in report  # "–": sent by no one known
    assert f"| {rejected[0].seq} | – | rejected | pause | – | the session is already paused |" in report
    failures = report.split("## Failures")[1].split("## Timeline")[0]
    failed_actions = [event.seq for event in events if event.kind.value == "action_executed" and not event.payload.ok]
    assert len(failed_actions) == 2
    for seq in failed_actions:
        assert f"| {seq} | 0.2." in failures
    assert "scripted to fail" in failures and "| 0 | Find a vegan" in failures  # the root failed before its repair
    assert "- Vegan cocoa brownies, 4.6 stars" in report.split("## Notes")[1]
    assert "## Constraints\n\n_None recorded._" in report
    constrained = replace(state, constraints=["recipe: vegan", "rating: 4 stars or more <b>"])
    assert "## Constraints\n\n- recipe: vegan\n- rating: 4 stars or more \\<b\\>" in markdown_report(
        "run-42", constrained, events
    )
    assert "Status changes:" in report and f"- {pauses[0] - 1}: paused (paused by operator)" in report
    assert f"{len(events)} events" in report


def test_report_escapes_page_and_model_text(hostile: tuple[SessionState, list[Event]]) -> None:
    state, events = hostile
    assert state.status.value == "succeeded" and state.final_answer
    report = markdown_report("s1", state, events)
    assert f"- **Start URL:** `{DRY_START}`" in report and "| `dry://click-2` |" in report, "the URLs, as code"
    text = re.sub(r"`dry://[\w-]+`", "", report)
    assert not re.search(r"(?<!\\)[<\[`]", text), "raw <, [ or ` would let page text become markup"
    assert "](" not in report.replace("\\](", "")
    assert "\\<img src=x onerror=alert(1)\\>" in report
    assert "\\*bold\\*" in report and "\\`code\\`" in report and "\\$5" in report
    assert "> \\# Not a heading" in report and "> 1\\. not a list" in report
    assert "\\<script\\>alert(1)\\</script\\>" in report.split("## Operator interventions")[1]
    assert "there is no node '\\<img src=x\\>'" in report
    for line in report.splitlines():
        if line.startswith("| "):
            cells = len(re.findall(r"(?<!\\)\|", line))
            assert cells in (3, 5, 6, 7), line  # 2-, 4-, 5- and 6-column tables: page text added no cell


def test_trace_json_is_the_trace(repaired: tuple[SessionState, list[Event]]) -> None:
    state, events = repaired
    state.notes.append("café ✎")
    try:
        text = trace_json("run-42", state, events)
        assert json.loads(text) == json.loads(json.dumps(trace("run-42", state, events)))
        assert "café ✎" in text and text.startswith("{\n  ")
    finally:
        state.notes.pop()


def test_report_of_an_empty_session() -> None:
    report = markdown_report("empty", SessionState(), [])
    assert "_No final answer._" in report and "_No plan yet._" in report and "_No events._" in report


def test_finished_run_without_interventions() -> None:
    state, events = run_script(load("brownie.json"), BROWNIE_TASK)[:2]
    report = markdown_report("plain", state, events)
    assert "## Operator interventions\n\n_None._" in report and "## Failures\n\n_None._" in report
    assert "> Fudgy vegan brownies (4.8 stars)" in report


URLISH = "open /search?min_price=&max_price=100&sort=price_asc) (cheapest!) {x} snake_case_name & more"


def test_report_shows_urls_and_names_without_stray_backslashes() -> None:
    """Issue 12, defect 6: `min\\_price=\\&max\\_price=100` and `sort=price\\_asc\\)` showed their escapes.
    Only what could become markup is escaped, so the text reads as typed and still stays inert."""
    from test_console_hostile import inert

    state, events = run_script(load("brownie.json"), BROWNIE_TASK)[:2]
    report = markdown_report("plain", replace(state, task=URLISH, final_answer=URLISH, notes=[URLISH]), events)
    task = next(line for line in report.splitlines() if line.startswith("- **Task:** "))
    assert task == f"- **Task:** {URLISH}", "the task line carries escapes it does not need"
    assert inert(task.removeprefix("- **Task:** ")) == URLISH
    assert f"> {URLISH}" in report.split("## Final answer")[1], "the answer carries escapes it does not need"
    assert f"- {URLISH}" in report.split("## Notes")[1], "the notes carry escapes they do not need"
