"""Prompt templates for the Claude backend: one per planner question, plus the shared context renderer.

Every prompt has two halves. The *stable* half is one prefix shared by every question (all the
questions' tools, one system text and the task with its constraints), so it is long enough to be
cached and every call of a session reads the same cache entry. The *volatile* half is rendered from
`planner.questions.View` on each call. The wording is our own; what each question's prompt carries
follows the StructuredAgent appendix (docs/architecture.md, "planner/models/prompts.py").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from planner.actions import describe_actions
from planner.diagnosis import Trajectory
from planner.frames import upcoming
from planner.questions import (
    Completion,
    Constraints,
    Diagnosis,
    Expansion,
    FailureCategory,
    FinalAnswer,
    Observation,
    Question,
    Repair,
    View,
)
from planner.status import CLOSED, REOPENABLE, given_steps
from planner.tree import ROOT_ID, Node

__all__ = [
    "DIAGNOSIS_SYSTEM",
    "DIAGNOSIS_TOOL",
    "OBSERVATION_BUDGET",
    "OPERATOR_INSTRUCTION",
    "PROMPTS",
    "QUESTIONS",
    "SYSTEM",
    "QuestionPrompt",
    "render_candidates",
    "render_diagnosis",
    "render_local_tree",
    "render_node",
    "render_observation",
    "render_task",
    "render_user",
    "system_text",
]

OPERATOR_INSTRUCTION = "## Operator's instruction"
"""The heading of an operator's instruction for one answer (a counterfactual re-ask)."""

_FOLLOW = "Follow this instruction in this answer; where it and your own judgement differ, the instruction wins."

_GIVEN_STEPS = "## The operator's steps for this node"
_AROUND = (
    "They are kept, together and in this order. Plan the rest of the node around them: answer AND with the node's "
    "whole list of sub-goals, each of the operator's steps copied word for word where it belongs, your own steps "
    "before or after them."
)

OBSERVATION_BUDGET = 12_000
"""Characters of the compact page observation a prompt carries (about 3k tokens); the rest is cut."""

_OPEN_NODES_BUDGET = 40
"""At most this many open nodes are listed for the global tree update."""

_BASICS = """\
You are one component of a web agent that plans with an AND/OR tree and executes it depth-first.

Node kinds:
- AND: an ordered list of sub-goals; all of them must succeed, in order.
- OR: alternative strategies for the same goal, each with a score in (0, 1] saying how likely it
  is to work; the best-scored one is tried first and the others only if it fails.
- ACTION: one browser action, written exactly in the action syntax below.
- UNKNOWN: a node nobody has expanded yet.
Statuses: UNVISITED (not started), VISITED (in progress), SUCCESS, FAIL, PRUNED (abandoned),
DELETED (dropped because an earlier step failed).

Browser actions (element ids are the numbers in square brackets in the page observation):
{actions}

The page observation is a compact text rendering of the page, not raw HTML. Rely only on what it
shows and on the notes; never invent element ids, prices or names.

Each request names one question (its first line, "Question: <tool>"). Answer only by calling that
question's tool, once, never another tool and never with plain text, following the question's
instructions below."""


@dataclass(frozen=True, slots=True)
class QuestionPrompt:
    """One question: its tool, the pydantic model the tool's input must validate as, and its instructions."""

    question: Question
    tool: str
    tool_description: str
    output: type[BaseModel]
    instructions: str


# Task-constraint extraction: list what the task explicitly requires, once, before any planning.
_CONSTRAINTS = QuestionPrompt(
    Question.CONSTRAINTS,
    "extract_constraints",
    "List the requirements the task states explicitly, per item and for the task as a whole.",
    Constraints,
    """\
Read the task and list its explicit requirements, before anything is planned.
- items: for each distinct thing the user wants found (a product, a page, a fact), the
  requirements stated for it: brand, price bound, rating, size, colour, "cheapest" and the like.
  Name each item once.
- task: requirements about the task as a whole (what the answer must include, how many results).
Write each requirement as a short phrase ("price under $100"). Include only what the task says;
never add requirements it merely implies. Empty lists are a valid answer.""",
)

# Node Expansion: decide whether the current node is a single action or needs AND/OR children.
_EXPAND = QuestionPrompt(
    Question.EXPAND,
    "expand_node",
    "Decompose the current node into sub-goals or alternatives, or ground it as one browser action.",
    Expansion,
    """\
Expand the current node.
- If one browser action on the current page achieves it, answer type ACTION with that action.
  Use only element ids that appear in the observation. To record a fact, use a note action whose
  text holds the fact itself (names, prices), copied from the page.
- If it needs several steps in order, answer type AND with short, concrete sub-goals.
- If there are genuinely different ways to achieve it, answer type OR with alternatives, each with
  a score in (0, 1]; higher means more promising.
Sub-goals should be small enough that each is later one or a few actions. Do not repeat work that
the progress summary or the siblings show as done, and respect the task's constraints.
Planning ahead (only when the prompt has a "Planning ahead" section): for the leading AND
children that are each one browser action on the current page, also give that action in the
child's action field, stopping after the first one that changes the page (later ids would belong
to another page). Leave it empty whenever unsure; the child is then expanded when it is reached.
Keep the reasoning to one or two sentences.""",
)

# Node Repair: the node failed; drop hopeless open children and add new ones, or give up.
_REPAIR = QuestionPrompt(
    Question.REPAIR,
    "repair_node",
    "Repair a failed node by pruning some of its open children and appending new ones.",
    Repair,
    """\
The current node failed for the reason given. Propose a repair:
- prune: ids of the node's children that can no longer help (only its own children);
- add: new sub-goals appended after the existing children that work around the failure, taking
  the current page into account (give each a score when the node is an OR node).
Do not re-add something already tried and failed. If no sensible repair exists, leave add empty
and say why in the reasoning.""",
)

# Observation Summarizer and Global Tree Update, in one call: both read the page an action reached.
_OBSERVE = QuestionPrompt(
    Question.OBSERVE,
    "observe_page",
    "Summarize the page after an action, record facts, and prune or sharpen open nodes of the plan.",
    Observation,
    """An action was just executed. Look at the new page and report:
- summary: what the current page shows, in one or two sentences;
- progress: the task progress so far, updating the previous progress summary, including which of
  the task's constraints are already met;
- feedback: in one or two sentences, what the agent should focus on next;
- notes: facts from this page that the final answer will need (exact names, prices, ratings),
  only if they are not in the notes already. Copy values exactly; do not guess;
- prune: ids of open nodes that are now unnecessary (already achieved, or impossible);
- rewrite: {node id: better description} for open nodes whose wording can now be made more
  concrete with what the page shows;
- candidates: when the task looks for items (products, pages, people), each item this page shows
  that could answer it: its name, the attribute values the page states that the constraints
  mention (fields), the constraints it fails (unmet) and a verdict: qualifies, uncertain (a value
  is not shown) or rejected. Report an item again, by the same name, only when something changed;
- ahead: when an "Upcoming sub-goals" section is present, the next of them that are each one
  browser action on this page, as {node: id, action}, in order, stopping after the first action
  that changes the page. Give none when the next sub-goal needs several steps or you are unsure.
Never prune or rewrite nodes on the active path (the current node and its ancestors). Most of the
time the plan needs no change: leave prune and rewrite empty.""",
)

# Node Completion Check: is the node's objective really met by its children and the notes?
_COMPLETE = QuestionPrompt(
    Question.COMPLETE,
    "check_completion",
    "Decide whether the current node's objective has been achieved.",
    Completion,
    """\
All of the current node's children have been handled. Using their statuses, the notes and the
current page, decide whether the node's objective (for the root: the whole task) is achieved.
Answer complete=false, with the missing piece as the reason, when something the objective asks
for is not yet established by the notes or the page. When the current node is the root (node 0)
and it is complete, also write the final answer to the task in answer: direct and specific, from
the notes only.""",
)

# Final answer: write the answer to the task from the notes gathered during the run.
_FINAL = QuestionPrompt(
    Question.FINAL_ANSWER,
    "final_answer",
    "Write the final answer to the task.",
    FinalAnswer,
    """\
The run is over. Write the answer to the task using only the notes and the page. Be direct and
specific (names, prices). If the notes do not contain the answer, leave answer empty (null) and
say plainly in missing what the notes lack; the run then counts as failed, not as answered.""",
)

PROMPTS: dict[Question, QuestionPrompt] = {
    p.question: p for p in (_CONSTRAINTS, _EXPAND, _REPAIR, _OBSERVE, _COMPLETE, _FINAL)
}
QUESTIONS = tuple(PROMPTS)


@functools.cache
def system_text(*questions: Question) -> str:
    """The system text for these questions (all of them: the shared, cached system text)."""
    chosen = [PROMPTS[q] for q in questions] if questions else list(PROMPTS.values())
    parts = [_BASICS.format(actions=describe_actions()), "Questions:"]
    return "\n\n".join(parts + [f"## {p.tool}\n{p.instructions}" for p in chosen])


SYSTEM = system_text()
"""The one system text of every call; with the tools and the task it forms the cached prefix."""


def render_node(node: Node, *, mark: str = "") -> str:
    """One compact line per node: id, type, status, description, score, action, failure reason."""
    parts = [f"{node.id} [{node.type.value} {node.status.value}] {node.description}"]
    if node.score is not None:
        parts.append(f"(score {node.score:g})")
    if node.action:
        parts.append(f"-> {node.action}")
    if node.reason and node.status in REOPENABLE:
        parts.append(f"-- {node.reason}")
    return " ".join(parts) + (f"   <== {mark}" if mark else "")


def render_local_tree(view: View) -> str:
    """The node in its neighbourhood: parent, siblings (the node marked) and the node's children.

    For the root there are no parent or siblings, so its whole first level is shown instead.
    """
    tree, node = view.tree, view.node
    children = [f"    {render_node(child)}" for child in tree.children(node)]
    parent = tree.parent(node)
    if parent is None:
        return "\n".join([render_node(node, mark="current"), *children])
    lines = [render_node(parent)]
    for sibling in tree.children(parent):
        if sibling.id == node.id:
            lines.append(f"  {render_node(sibling, mark='current')}")
            lines.extend(children)
        else:
            lines.append(f"  {render_node(sibling)}")
    return "\n".join(lines)


def _open_nodes(view: View) -> str:
    """Open nodes the global update may prune or rewrite (the active path excluded), capped."""
    tree = view.tree
    active = {view.node.id, *(a.id for a in tree.ancestors(view.node))}
    open_nodes = [n for n in tree.walk() if n.status not in CLOSED and n.id not in active and n.id != ROOT_ID]
    lines = [render_node(n) for n in open_nodes[:_OPEN_NODES_BUDGET]]
    if len(open_nodes) > _OPEN_NODES_BUDGET:
        lines.append(f"(and {len(open_nodes) - _OPEN_NODES_BUDGET} more)")
    return "\n".join(lines) or "(none)"


def render_observation(view: View, budget: int = OBSERVATION_BUDGET) -> str:
    """The compact observation, cut to `budget` characters with a marker saying how much was cut."""
    text = view.observation.strip() or "(no observation)"
    if len(text) > budget:
        text = text[:budget] + f"\n[... {len(text) - budget} more characters not shown]"
    return f"URL: {view.url or 'unknown'}\n{text}"


def _bullets(items: tuple[str, ...] | list[str], empty: str) -> str:
    return "\n".join(f"- {item}" for item in items) or empty


def render_candidates(view: View) -> str:
    """One line per candidate item: verdict, name, the values seen and what it fails."""
    lines = []
    for candidate in view.candidates:
        line = f"- [{candidate.verdict}] {candidate.name}"
        if candidate.fields:
            line += " — " + "; ".join(f"{key}: {value}" for key, value in candidate.fields.items())
        if candidate.unmet:
            line += " — fails: " + ", ".join(candidate.unmet)
        lines.append(line)
    return "\n".join(lines)


def render_task(view: View) -> str:
    """The task and its constraints: fixed once constraints are extracted, so it belongs to the cached prefix."""
    text = f"# Task\n{view.task}"
    if view.constraints:
        text += f"\n\n# Constraints\n{_bullets(view.constraints, '')}"
    return text


def _upcoming(view: View) -> str:
    """The sub-goals the observation may plan ahead; empty when lookahead is off or nothing is next."""
    return "\n".join(render_node(node) for node in upcoming(view.tree, view.node, view.lookahead))


def render_user(
    question: Question, view: View, *, detail: str = "", budget: int = OBSERVATION_BUDGET, instruction: str = ""
) -> str:
    """The volatile half of a prompt: everything after the cached task text.

    `detail` is the question's extra input: the failure reason for repair, the action just run for
    observe. `instruction` is an operator's own instruction for this one answer (a counterfactual
    re-ask, `sessions.client.counterfactual`); it comes last, after the page, so it is the last thing read.
    """
    node = view.node
    ask = f"Question: {PROMPTS[question].tool}"
    if question == Question.CONSTRAINTS:
        return f"{ask}\n\n## Current node\n{node.id}: {node.description}\n\nThe task alone decides the constraints; no page is shown."
    sections = [
        ask,
        f"## Notes so far\n{_bullets(view.notes, '(none)')}",
        f"## Progress\n{view.progress or '(nothing yet)'}" + (f"\nNext: {view.feedback}" if view.feedback else ""),
        f"## Current node\n{node.id}: {node.description}",
        f"## Local tree\n{render_local_tree(view)}",
    ]
    if question == Question.EXPAND and not view.allow_or:
        sections.append("## Restriction\nOR alternatives are switched off: answer AND or ACTION only.")
    if question == Question.EXPAND and (given := given_steps(view.tree, node)):
        sections.append(f"{_GIVEN_STEPS}\n" + "\n".join(f"- {step.description}" for step in given) + f"\n{_AROUND}")
    if question == Question.EXPAND and view.lookahead:
        sections.append(f"## Planning ahead\nYou may give actions for up to {view.lookahead} leading AND children.")
    if question == Question.REPAIR:
        sections.append(f"## Why it failed\n{detail or '(no reason recorded)'}")
    if view.candidates and question in (Question.OBSERVE, Question.COMPLETE, Question.FINAL_ANSWER):
        sections.append(f"## Candidate items so far\n{render_candidates(view)}")
    if question == Question.OBSERVE:
        sections.append(f"## Action just executed\n{detail}")
        sections.append(f"## Open nodes you may prune or rewrite\n{_open_nodes(view)}")
        if following := _upcoming(view):
            sections.append(f"## Upcoming sub-goals (plan their actions if they are single actions here)\n{following}")
    sections.append(f"## Current page\n{render_observation(view, budget)}")
    if instruction.strip():
        sections.append(f"{OPERATOR_INSTRUCTION}\n{instruction.strip()}\n{_FOLLOW}")
    return "\n\n".join(sections)


# -- diagnosis -------------------------------------------------------------------------------------

DIAGNOSIS_TOOL: dict[str, Any] = {
    "name": "diagnose_failure",
    "description": "Report why the web agent's run failed, citing the steps and nodes where it went wrong.",
    "input_schema": Diagnosis.model_json_schema(),
}
"""The one tool of a diagnosis request: its input validates as `planner.questions.Diagnosis`."""

_STEP_TEXT = 600
"""Characters kept of one step's summary or notes; the run itself is shown whole, step by step."""

DIAGNOSIS_SYSTEM = f"""\
You review the record of a web agent's run and explain why it did not accomplish its task.

The agent planned with an AND/OR tree. AND nodes are ordered sub-goals that must all succeed; OR
nodes are scored alternatives tried best first; ACTION nodes are single browser actions. Each node
carries its final status: SUCCESS, FAIL, PRUNED (abandoned after failing or judged useless),
DELETED (dropped because an earlier sibling failed), VISITED (in progress) or UNVISITED.

You are given the task and its constraints, how the run ended, the tree with every node's status
(read it first: it shows which sub-goal broke), then the numbered browser steps with the node each
ran at, its outcome and the notes the agent took after it.

Answer only by calling the diagnose_failure tool, once:
- root_cause: one sentence naming the main reason the task failed.
- critical_steps: the steps where it went wrong, each with step_number (a number from the step
  list), node_id (the node it ran at, from the tree), what_happened and what_went_wrong. Cite only
  steps and nodes that appear in the record; a citation of anything else is rejected.
- what_should_have_been_done: concrete actions that would have worked instead.
- failure_category: one of {", ".join(c.value for c in FailureCategory)}.
- confidence: 5 when the record makes the cause plain, 1 when it does not.

Ground every statement in the record: the actions, their outcomes, the statuses and the notes. Do
not guess facts the record does not hold; if the cause is unclear, say so in root_cause and give a
confidence of 1 or 2 instead of hedging. Be specific: name the search words, the element, the page
or the constraint involved."""


def render_diagnosis(run: Trajectory) -> str:
    """The record a diagnosis reads: the tree with statuses first, then the step sequence and notes.

    The first line names the tool and a "Current node" section names the root, like every question's prompt.
    """
    tree_lines = [("  " * node.depth) + render_node(node) for node in run.tree.walk()]
    step_lines = []
    for step in run.steps:
        outcome = "ok" if step.ok else f"FAILED: {step.error or 'no reason recorded'}"
        line = f"{step.number}. at {step.node_id}: {step.action} -> {outcome}"
        if step.url:
            line += f" (page {step.url})"
        if step.summary:
            line += f"\n   saw: {_clip(step.summary)}"
        line += "".join(f"\n   note: {_clip(note)}" for note in step.notes)
        step_lines.append(line)
    ended = f"{run.status}" + (f": {run.reason}" if run.reason else "")
    root = run.tree.get(ROOT_ID)
    sections = [
        f"Question: {DIAGNOSIS_TOOL['name']}",
        f"## Current node\n{ROOT_ID}: {root.description if root is not None else run.task}",
        f"## Task\n{run.task}",
        f"## Constraints\n{_bullets(run.constraints, '(none recorded)')}",
        f"## How the run ended\n{ended}\nFinal answer: {run.final_answer or '(none)'}",
        "## Tree (id [type status] description -> action -- failure reason)\n" + ("\n".join(tree_lines) or "(empty)"),
        "## Steps\n" + ("\n".join(step_lines) or "(no browser steps)"),
        f"## Notes\n{_bullets(run.notes, '(none)')}",
    ]
    return "\n\n".join(sections)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _STEP_TEXT else text[:_STEP_TEXT] + " [...]"
