"""The stepwise AND/OR planner: one unit of work per `step()`.

The engine reads the derived DFS position (`planner.frames`), asks the model or the environment
for what that position needs, and records everything as events through a `Recorder`; state changes
only by folding those events. It never touches a database or a UI.

One step is one of: extract the task's constraints (once, first), expand a node, execute an action
(with its summary and global tree update), evaluate a node on exit, recover a failed node (prune,
next OR alternative or repair), or finish the session with a final answer.

Model calls are merged where two questions read the same input: the observation call also plans
the next sub-goals' actions on the page it reads (lookahead), an expansion may ground its children's
first actions, and the root's completion check may carry the final answer. A planned-ahead action
is used only while its page is still current, so it costs no expansion call but never acts on a
stale page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from pydantic import BaseModel

from planner.actions import is_note, note_text
from planner.answers import check_answer
from planner.config import Breakpoint, EngineConfig
from planner.effects import SentRequest
from planner.errors import ModelEnvelopeError, ModelOutputError, ModelUnavailable
from planner.events import Cause, Event, Kind
from planner.frames import Frame, Position, next_position, or_choice, upcoming
from planner.guard import Guard
from planner.protocols import ActionResult, ElementInfo, Environment, Model, Page
from planner.questions import CallRecord, ChildSpec, Expansion, Observation, Question, Repair, Reply, StepWork, View
from planner.secrets import typed_text
from planner.state import Recorder, RunStatus, SessionState
from planner.status import CLOSED, REMOVED, given_steps
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status

__all__ = ["Engine", "Guard", "view_of"]

OutputT = TypeVar("OutputT", bound=BaseModel)


class _Invalid(Exception):
    """A reply that parsed but cannot be used on this tree; retried like malformed output."""


class Engine:
    """Drives one session's state forward, one unit of work at a time."""

    def __init__(
        self,
        state: SessionState,
        model: Model,
        env: Environment,
        guard: Guard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.state = state
        self.model = model
        self.env = env
        self.guard = guard
        self._rec = Recorder(state, clock)

    @property
    def config(self) -> EngineConfig:
        """The session's own settings; operators can change breakpoints mid-run, so read them live."""
        return self.state.config

    def step(self) -> list[Event]:
        """Perform one unit of work and return the events it produced (already applied).

        Does nothing unless the session is running: pauses, approvals and stops are the runner's to lift.
        """
        state = self.state
        if state.status is not RunStatus.RUNNING:
            return []
        position = next_position(state.tree)
        if (spent := state.over_budget) is not None:
            self._rec.record(Kind.SESSION_STATUS, status=RunStatus.PAUSED, cause=Cause.BUDGET, reason=spent)
            return self._rec.take()
        try:
            if position is None:
                self._finish(None)
            elif state.steps >= self.config.max_steps:
                self._finish(f"step budget of {self.config.max_steps} exhausted")
            elif state.awaits_constraints:
                self._extract_constraints()
            elif self._held_at_node(position) or self._held_before(position):
                pass
            else:
                if not state.page_text:
                    self._record_page(Kind.PAGE_OBSERVED, None, self.env.observe())
                self._work(position)
        except ModelUnavailable as error:
            self._rec.record(
                Kind.SESSION_STATUS, status=RunStatus.PAUSED, cause=Cause.ERROR, reason=f"model unavailable: {error}"
            )
        return self._rec.take()

    # -- dispatch -------------------------------------------------------------------------------

    def _work(self, position: Position) -> None:
        node, frame = position.node, position.frame
        if frame is Frame.ENTERING:
            work = StepWork.EXPAND if node.type is NodeType.UNKNOWN else StepWork.EXECUTE
        elif frame is Frame.EXITING:
            work = StepWork.CHECK
        else:
            work = StepWork.RECOVER
        self._rec.record(Kind.STEP, node.id, frame=frame.value, work=work)
        for ancestor in self.state.tree.ancestors(node):
            if ancestor.status is Status.UNVISITED:
                self._set(ancestor, Status.VISITED, "entered")
        if work is StepWork.EXPAND:
            self._expand(node)
        elif work is StepWork.EXECUTE:
            self._execute(node)
        elif work is StepWork.CHECK:
            self._exit(node)
        else:
            self._recover(node)
        self._pause_after(node, work)

    def _held_at_node(self, position: Position) -> bool:
        """Stop as the traversal is about to enter a node the operator marked "break here".

        Entering spans every ENTERING step of the node (an expansion that makes it an action, then
        the action), so the pause is recorded with `breakpoint_node` and the resumed run passes it;
        the fold forgets that pass when the node is reset, so a node entered again pauses again.
        """
        node = position.node
        if (
            position.frame is not Frame.ENTERING
            or node.id not in self.config.node_breakpoints
            or self.state.breakpoint_passed == node.id
        ):
            return False
        self._break(node.id, f"breakpoint: at {node.id} (set by operator)")
        return True

    def _held_before(self, position: Position) -> bool:
        """Stop before a browser action that needs approval or sits on a breakpoint; before either, note a
        secret the action would type into a password field."""
        node = position.node
        if position.frame is not Frame.ENTERING or node.type is not NodeType.ACTION or node.action is None:
            return False
        state = self.state
        guard = self.guard if self.config.guard and state.approved_node != node.id else None
        typed = typed_text(node.action)
        target = self.env.target(node.action) if guard is not None or typed is not None else None
        if typed is not None:
            self._note_secret(node.id, typed, target)
        if guard is not None:
            rule = guard(node.action, target)
            if rule is not None:
                self._ask_approval(node.id, node.action, rule, target)
                return True
        if Breakpoint.BEFORE_ACTION in self.config.breakpoints and state.breakpoint_passed != node.id:
            self._break(node.id, f"breakpoint: before {node.id} ({node.action})")
            return True
        return False

    def _note_secret(self, node_id: str, typed: str, target: ElementInfo | None) -> None:
        """Before text is typed into a password field, record it as a secret (`planner.secrets`): every
        reader of the log then sees it masked, the approval box about to hold the action included."""
        if target is None or target.input_type.lower() != "password":
            return
        value = self.state.secrets.revealed_by(typed)
        if value is not None:
            self._rec.record(Kind.SECRET_FOUND, node_id, value=value)

    def _break(self, node_id: str, reason: str) -> None:
        """Pause at a breakpoint on `node_id`: the resumed run passes it (`breakpoint_node`), and the
        attention inbox files the pause as a breakpoint, not as a problem (`cause`)."""
        self._rec.record(
            Kind.SESSION_STATUS,
            status=RunStatus.PAUSED,
            cause=Cause.BREAKPOINT,
            reason=reason,
            breakpoint_node=node_id,
        )

    def _ask_approval(
        self,
        node_id: str,
        action: str,
        rule: str,
        target: ElementInfo | None,
        requests: tuple[SentRequest, ...] = (),
    ) -> None:
        """Hold `action` for an operator, with the element it would touch and a picture of it, taken
        now: once the run goes on, the page it was asked on is gone. `requests`: what the effect fence
        held when it ran, when that is why it waits."""
        preview = self.env.preview(action)
        self._rec.record(
            Kind.APPROVAL_REQUESTED,
            node_id,
            action=action,
            rule=rule,
            role=target.role if target is not None else "",
            name=target.name if target is not None else "",
            screenshot=preview.screenshot if preview is not None else None,
            box=preview.box if preview is not None else None,
            requests=[request.model_dump(mode="json") for request in requests],
        )

    def _pause_after(self, node: Node, work: StepWork) -> None:
        state = self.state
        if state.status is not RunStatus.RUNNING:
            return
        points = self.config.breakpoints
        reason, cause = None, Cause.BREAKPOINT
        reviews = Breakpoint.AFTER_EXPANSION in points or self._reviews_first_plan(node)
        if work is StepWork.EXPAND and reviews and node.status is Status.VISITED:
            reason, cause = f"plan review: {node.id} expanded as {node.type.value}", Cause.PLAN_REVIEW
        elif Breakpoint.ON_FAILURE in points and node.status is Status.FAIL:
            reason = f"breakpoint: {node.id} failed ({node.reason})"
        elif work == "recover" and Breakpoint.ON_REPAIR in points and node.status is Status.VISITED:
            reason = f"breakpoint: {node.id} repaired"
        elif state.single_steps > 1:
            left = state.single_steps - 1
            self._rec.record(
                Kind.SESSION_STATUS,
                status=RunStatus.RUNNING,
                cause=Cause.OPERATOR,
                reason="one step" if left == 1 else f"{left} steps",
                single_step=True,
                single_steps=left,
            )
        elif state.single_steps:
            reason, cause = "paused after one step", Cause.STEP
        if reason is not None:
            self._rec.record(Kind.SESSION_STATUS, status=RunStatus.PAUSED, cause=cause, reason=reason)

    def _reviews_first_plan(self, node: Node) -> bool:
        """Whether this expansion is the first plan a "Start paused" operator reviews: the root's, before
        any browser action.

        The console's "Start paused" sets `review_first_plan` instead of creating the session paused:
        paused before its first step, the operator had nothing to review yet (the root is expanded only
        by that step). With the flag, the run extracts the constraints and expands the root, then stops
        exactly as the after-expansion breakpoint does ("plan review: 0 expanded as AND"); not that
        breakpoint itself, which stops at every later expansion too, and clearing it after the first
        would erase the choice of an operator who had set it. It is derived,
        not switched off once used: the root's expansion while no action has run happens once, unless the
        operator sends the root back to expansion before the run acts, and then the new plan is reviewed too.
        """
        return self.config.review_first_plan and node.id == ROOT_ID and self.state.metrics.actions == 0

    # -- model calls ------------------------------------------------------------------------------

    def _view(self, node: Node) -> View:
        return view_of(self.state, node, self.config)

    def _ask(
        self,
        question: Question,
        node: Node,
        call: Callable[[], Reply[OutputT]],
        check: Callable[[OutputT], None] | None = None,
    ) -> tuple[OutputT | None, str]:
        """Call the model until it gives a usable answer or the retry budget is spent.

        Every attempt is recorded. Returns the output, or None with the last reason. An endpoint
        that answers with something other than a model response (`ModelEnvelopeError`) is retried
        the same way, but once the budget is spent it pauses the session (the error propagates to
        `step`) instead of failing the node: the plan is not at fault, the endpoint is.
        """
        reason = ""
        attempts = self.config.expansion_retries + 1
        for attempt in range(1, attempts + 1):
            started = time.perf_counter()
            try:
                reply = call()
            except ModelEnvelopeError as error:
                self._record_call(question, node, attempt, None, error.call, error.reason, started)
                if attempt == attempts:
                    raise
                continue
            except ModelOutputError as error:
                reason = error.reason
                self._record_call(question, node, attempt, None, error.call, reason, started)
                continue
            try:
                if check is not None:
                    check(reply.output)
            except _Invalid as error:
                reason = str(error)
                self._record_call(question, node, attempt, reply.output, reply.call, reason, started)
                continue
            self._record_call(question, node, attempt, reply.output, reply.call, None, started)
            return reply.output, ""
        return None, reason

    def _record_call(
        self,
        question: Question,
        node: Node,
        attempt: int,
        output: BaseModel | None,
        call: CallRecord | None,
        error: str | None,
        started: float,
    ) -> None:
        data: dict[str, object] = {
            "question": question,
            "attempt": attempt,
            "ok": error is None,
            "error": error,
            "output": output.model_dump(mode="json") if output is not None else None,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if call is not None:
            data["prompt"] = call.prompt
            data["raw"] = call.raw
            data["usage"] = call.usage
            data["effort"] = call.effort
            data["thinking"] = call.thinking
            if call.latency_ms:
                data["latency_ms"] = call.latency_ms
        self._rec.record(Kind.MODEL_CALL, node.id, **data)

    # -- constraints --------------------------------------------------------------------------------

    def _extract_constraints(self) -> None:
        """Read the task's explicit requirements once; a failure costs the prompts that context, not the run."""
        root = self.state.tree[ROOT_ID]
        self._rec.record(Kind.STEP, ROOT_ID, frame=None, work=StepWork.CONSTRAINTS)
        constraints, reason = self._ask(
            Question.CONSTRAINTS, root, lambda: self.model.extract_constraints(self._view(root))
        )
        if constraints is None:
            self._rec.record(
                Kind.CONSTRAINTS_SET,
                ROOT_ID,
                constraints=[],
                by=Origin.PLANNER.value,
                error=f"extraction failed: {reason}",
            )
        else:
            self._rec.record(Kind.CONSTRAINTS_SET, ROOT_ID, constraints=constraints.lines(), by=Origin.PLANNER.value)
        self._pause_after(root, StepWork.CONSTRAINTS)

    # -- ENTERING ---------------------------------------------------------------------------------

    def _expand(self, node: Node) -> None:
        note = None
        given = given_steps(self.state.tree, node)
        planned = None if given else self.state.proposals.get(node.id)
        if planned is not None:
            problem = self.env.check(planned)
            if problem is None:
                self._rec.record(
                    Kind.NODE_EXPANDED,
                    node.id,
                    type="ACTION",
                    action=planned,
                    children=[],
                    origin=Origin.PLANNER.value,
                    note="action planned ahead on this page; no model call",
                )
                return
            note = f"the action planned ahead ({planned}) no longer fits the page: {problem}"

        def check(expansion: Expansion) -> None:
            if node.id == ROOT_ID and node.children and not given and expansion.type == "ACTION":
                raise _Invalid("the task was planned as sub-goals before; expanding it again must give sub-goals")
            self._check_count("expansion", expansion.children)
            own = [expansion.action or ""] if expansion.type == "ACTION" else []
            self._check_actions([*own, *self._planned(expansion.children)])

        expansion, reason = self._ask(Question.EXPAND, node, lambda: self.model.expand(self._view(node)), check)
        if expansion is None:
            self._fail(node, f"expansion failed: {reason}")
            return
        children = expansion.children
        if expansion.type == "OR" and (given or not self.config.or_alternatives):
            best = max(children, key=lambda child: child.score or 0.0)
            children = [best.model_copy(update={"score": None})]
            why = "the operator's steps come first" if given else "OR alternatives are off"
            note = f"{why}: kept the best alternative"
            expansion = Expansion(type="AND", children=children)
        lead = 0
        if given:
            expansion, lead, around = _around(given, node, expansion)
            children = expansion.children
            note = f"{note}; {around}" if note else around
        self._rec.record(
            Kind.NODE_EXPANDED,
            node.id,
            type=expansion.type,
            action=expansion.action,
            children=self._specs(node, children),
            origin=Origin.PLANNER.value,
            note=note,
            lead=lead,
        )

    def _planned(self, children: list[ChildSpec]) -> list[str]:
        """The actions a model planned ahead for new children; ignored when lookahead is off."""
        return [child.action for child in children if child.action] if self.config.lookahead else []

    def _check_count(self, answer: str, children: list[ChildSpec]) -> None:
        """Refuse more sub-goals than the session allows: each one is shown in every later prompt."""
        limit = self.config.max_children
        if len(children) > limit:
            raise _Invalid(f"the {answer} proposed {len(children)} sub-goals; at most {limit} are allowed")

    def _check_actions(self, actions: list[str]) -> None:
        for action in actions:
            problem = self.env.check(action)
            if problem:
                raise _Invalid(problem)

    def _specs(self, parent: Node, children: list[ChildSpec]) -> list[dict[str, object]]:
        ids = self.state.tree.new_child_ids(parent, len(children))
        specs: list[dict[str, object]] = []
        for child_id, child in zip(ids, children):
            spec: dict[str, object] = {
                "id": child_id,
                "description": child.description,
                "score": child.score,
            }
            if child.action and self.config.lookahead:
                spec["action"] = child.action
            specs.append(spec)
        return specs

    def _execute(self, node: Node) -> None:
        action = node.action or ""
        state = self.state
        granted = state.approved_node == node.id
        approved = granted and state.approved_requests is None
        allow = state.approved_requests or () if granted else ()
        result = self.env.execute(action, approved=approved, allow=allow, rules=self.config.request_rules)
        held = result.held_dialog is not None or bool(result.held_requests)
        if held and not approved and self.config.guard and self.guard is not None:
            self._hold_for_approval(node, action, result)
            return
        if result.held_requests and result.held_dialog is None:  # no operator is asked: the fence's no stands
            first = result.held_requests[0].describe()
            result = replace(result, error=f"refused: the page sent {first}, and this session asks no approvals")
        self._record_page(
            Kind.ACTION_EXECUTED,
            node.id,
            result.page,
            action=action,
            ok=result.ok,
            error=result.error,
            screenshot=result.screenshot,
            duration_ms=round(result.duration_ms, 3),
        )
        if not result.ok:
            return
        if is_note(action):
            self._rec.record(Kind.NOTE_ADDED, node.id, text=note_text(action))
            return
        self._observe(node, action)

    def _hold_for_approval(self, node: Node, action: str, result: ActionResult) -> None:
        """The page asked to confirm something risky, or sent a request that could change state on a
        server, and the environment said no: the action has not done what it was for, so it is not
        recorded as run; the page it left is, and the action is held for an operator. Approved, it runs
        again: the dialog is accepted (the action itself is approved), or the held requests, and only
        they, are let through once each."""
        if result.page is not None:
            self._record_page(Kind.PAGE_OBSERVED, node.id, result.page)
        target = self.env.target(action)
        if result.held_dialog is not None:
            self._ask_approval(node.id, action, result.held_dialog, target)
            return
        requests = result.held_requests
        more = f" (and {len(requests) - 1} more)" if len(requests) > 1 else ""
        rule = f"the page sent {requests[0].describe()}{more}, which could change state on the server"
        self._ask_approval(node.id, action, rule, target, requests)

    def _observe(self, node: Node, action: str) -> None:
        """Observation summary, global tree update and lookahead, answered together (one model call)."""
        tree = self.state.tree
        active = {node.id, *(ancestor.id for ancestor in tree.ancestors(node))}
        lookahead = self.config.lookahead
        next_ids = [n.id for n in upcoming(tree, node, lookahead)]

        def check(observation: Observation) -> None:
            unknown = [i for i in (*observation.prune, *observation.rewrite) if i not in tree]
            if unknown:
                raise _Invalid(f"unknown node ids in tree update: {', '.join(unknown)}")
            if not lookahead:
                return
            for proposal in observation.ahead:
                if proposal.node not in next_ids:
                    allowed = ", ".join(next_ids) or "none"
                    raise _Invalid(
                        f"ahead names {proposal.node}, which is not an upcoming sub-goal (upcoming: {allowed})"
                    )
                problem = self.env.check(proposal.action)
                if problem:
                    raise _Invalid(f"ahead action for {proposal.node}: {problem}")

        observation, reason = self._ask(
            Question.OBSERVE, node, lambda: self.model.observe(self._view(node), action), check
        )
        if observation is None:
            self._rec.record(
                Kind.UPDATE_REFUSED, node.id, reason=f"observation summary and tree update skipped: {reason}"
            )
            return
        proposals = [p.model_dump() for p in observation.ahead] if lookahead else []
        self._rec.record(
            Kind.OBSERVED,
            node.id,
            summary=observation.summary,
            progress=observation.progress,
            feedback=observation.feedback,
            notes=observation.notes,
            proposals=proposals,
            candidates=[candidate.model_dump() for candidate in observation.candidates],
        )
        for target_id in observation.prune:
            target = tree[target_id]
            refusal = self._update_refusal(target, active)
            if refusal:
                self._rec.record(Kind.UPDATE_REFUSED, target_id, reason=f"prune refused: {refusal}")
                continue
            self._rec.record(
                Kind.STATUS_CHANGED,
                target_id,
                status=Status.PRUNED.value,
                reason="pruned by global update",
                subtree=True,
            )
        for target_id, description in observation.rewrite.items():
            target = tree[target_id]
            refusal = self._update_refusal(target, set())
            if refusal:
                self._rec.record(Kind.UPDATE_REFUSED, target_id, reason=f"rewrite refused: {refusal}")
                continue
            if description.strip() and description != target.description:
                self._rec.record(Kind.NODE_REWRITTEN, target_id, description=description, by=Origin.PLANNER.value)

    @staticmethod
    def _update_refusal(target: Node, active: set[str]) -> str | None:
        if target.id == ROOT_ID:
            return "the root cannot be changed by the model"
        if target.protected:
            return "made or edited by an operator"
        if target.status in CLOSED:
            return f"already {target.status.value}"
        if target.id in active:
            return "on the active path"
        return None

    # -- EXITING ----------------------------------------------------------------------------------

    def _exit(self, node: Node) -> None:
        children = self.state.tree.children(node)
        if node.type is NodeType.OR:
            if any(child.status is Status.SUCCESS for child in children):
                self._set(node, Status.SUCCESS, "an alternative succeeded")
            else:
                self._fail(node, "no alternative succeeded")
            return
        valid = [child for child in children if child.status not in REMOVED]
        if not valid:
            self._fail(node, "no sub-goals left")
            return
        if node.id == ROOT_ID or self.config.completion_check == "every_and":
            verdict, reason = self._ask(Question.COMPLETE, node, lambda: self.model.check_completion(self._view(node)))
            if verdict is None:
                self._fail(node, f"completion check failed: {reason}")
            elif verdict.complete:
                answer = verdict.answer if node.id == ROOT_ID and verdict.answer and verdict.answer.strip() else None
                self._rec.record(
                    Kind.STATUS_CHANGED,
                    node.id,
                    status=Status.SUCCESS.value,
                    reason=verdict.reason or "complete",
                    answer=answer,
                )
            else:
                self._fail(node, f"incomplete: {verdict.reason}" if verdict.reason else "incomplete")
            return
        self._set(node, Status.SUCCESS, "all sub-goals succeeded")

    # -- FAILED -----------------------------------------------------------------------------------

    def _recover(self, node: Node) -> None:
        if node.type is NodeType.OR and self._next_alternative(node):
            return
        if node.type in (NodeType.AND, NodeType.OR) and self._repair(node):
            return
        if node.id == ROOT_ID and self.state.rejection_open:
            # An operator's rejection never ends the run by itself: they get to change the plan first.
            self._rec.record(
                Kind.SESSION_STATUS,
                status=RunStatus.PAUSED,
                cause=Cause.NO_ALTERNATIVE,
                reason=(
                    "nothing is left to try after the rejected action: add a step to the plan, or resume and "
                    "the planner tries once more or the run ends failed"
                ),
            )
            return
        self._prune_failed(node, node.reason or "failed")

    def _next_alternative(self, node: Node) -> bool:
        """Switch to the best untried alternative, first putting the browser back where the
        alternatives were planned (the page they were generated for)."""
        untried = or_choice(self.state.tree, node)
        if untried is None:
            return False
        url = untried.url or node.url
        if url:
            result = self.env.goto(url)
            self._record_page(
                Kind.ROLLBACK, node.id, result.page, ok=result.ok, error=result.error, to=untried.id, target=url
            )
        self._set(node, Status.VISITED, f"trying the next alternative, {untried.id}")
        return True

    def _repair(self, node: Node) -> bool:
        config = self.config
        if not config.repair or node.revisions >= config.max_revisions:
            return False
        tree = self.state.tree

        def check(repair: Repair) -> None:
            for child_id in repair.prune:
                child = tree.get(child_id)
                if child is None or child.parent != node.id:
                    raise _Invalid(f"repair may only prune children of {node.id}; {child_id} is not one")
            if node.type is NodeType.OR and any(c.score is None for c in repair.add):
                raise _Invalid("new OR alternatives need scores")
            self._check_count("repair", repair.add)
            self._check_actions(self._planned(repair.add))

        repair, reason = self._ask(
            Question.REPAIR, node, lambda: self.model.repair(self._view(node), node.reason or ""), check
        )
        if repair is None or not repair.add:
            why = reason if repair is None else (repair.reasoning or "nothing to add")
            self._rec.record(Kind.REVISION_USED, node.id, ok=False, reason=why)
            return False
        for child_id in repair.prune:
            if tree[child_id].status not in CLOSED:
                self._rec.record(
                    Kind.STATUS_CHANGED, child_id, status=Status.PRUNED.value, reason="pruned by repair", subtree=True
                )
        self._rec.record(
            Kind.NODES_ADDED, node.id, nodes=self._specs(node, repair.add), origin=Origin.REPAIR.value, position=None
        )
        self._rec.record(Kind.REVISION_USED, node.id, ok=True, reason=repair.reasoning)
        self._set(node, Status.VISITED, f"repaired (revision {node.revisions})")
        return True

    def _prune_failed(self, node: Node, reason: str) -> None:
        """Prune a failed node; under an AND its later siblings can no longer matter."""
        tree = self.state.tree
        self._rec.record(Kind.STATUS_CHANGED, node.id, status=Status.PRUNED.value, reason=reason, subtree=True)
        parent = tree.parent(node)
        if parent is None:
            return
        if parent.type is NodeType.AND:
            later = parent.children[parent.children.index(node.id) + 1 :]
            for sibling_id in later:
                if tree[sibling_id].status not in CLOSED:
                    self._rec.record(
                        Kind.STATUS_CHANGED,
                        sibling_id,
                        status=Status.DELETED.value,
                        reason=f"earlier step {node.id} failed",
                        subtree=True,
                    )
        self._fail(parent, f"{node.id} failed: {reason}")

    # -- finish -----------------------------------------------------------------------------------

    def _finish(self, reason: str | None) -> None:
        """End the run; the answer the root's completion check already gave is reused, not asked again."""
        root = self.state.tree[ROOT_ID]
        self._rec.record(Kind.STEP, ROOT_ID, frame=None, work=StepWork.FINISH)
        succeeded = root.status is Status.SUCCESS and reason is None
        answer = self.state.final_answer if succeeded else None
        why = ""
        if answer is None:
            reply, why = self._ask(Question.FINAL_ANSWER, root, lambda: self.model.final_answer(self._view(root)))
            if reply is not None:
                answer = reply.answer.strip() if reply.answer and reply.answer.strip() else None
                why = reply.missing.strip() or "the notes hold no answer"
        if reason is None and not succeeded:
            reason = root.reason or "the task could not be completed"
        if answer is None:
            reason = f"{reason + '; ' if reason else ''}no final answer: {why}"
            succeeded = False  # a run that cannot say what it found has not done the task
        elif succeeded and self.state.expect and not (check := check_answer(self.state.expect, answer)).passed:
            # The agent thinks it is done; the task's check says otherwise, where every list shows it.
            reason = f"the answer check is not met: it lacks {', '.join(check.missing)}"
        self._rec.record(
            Kind.SESSION_FINISHED,
            ROOT_ID,
            status=(RunStatus.SUCCEEDED if succeeded else RunStatus.FAILED).value,
            final_answer=answer,
            reason=reason,
        )

    # -- helpers ------------------------------------------------------------------------------------

    def _record_page(self, kind: Kind, node_id: str | None, page: Page | None, **extra: object) -> None:
        self._rec.record(
            kind,
            node_id,
            url=page.url if page else None,
            title=page.title if page else None,
            observation=page.text if page else None,
            obs_chars=len(page.text) if page else 0,
            html_chars=page.html_chars if page else 0,
            **extra,
        )

    def _set(self, node: Node, status: Status, reason: str) -> None:
        self._rec.record(Kind.STATUS_CHANGED, node.id, status=status.value, reason=reason)

    def _fail(self, node: Node, reason: str) -> None:
        self._set(node, Status.FAIL, reason)


def _around(given: list[Node], node: Node, expansion: Expansion) -> tuple[Expansion, int, str]:
    """The planner's own steps for a node an operator gave steps to start with (an AND: the
    operator's steps are a sequence), how many of them go before the operator's
    (`NodeExpanded.lead`), and the note saying so.

    The operator's steps stay together and in their order. The model is asked for the node's whole
    plan with the operator's steps copied where they belong; its steps listed before the first copy
    go before them, the rest after; the copies are dropped (the operator's nodes are those steps).
    A model that answers one action has that action as its one step after them.
    """
    if expansion.type == "ACTION":
        own = [ChildSpec(description=node.description, action=expansion.action)]
        expansion = Expansion(type="AND", children=own, reasoning=expansion.reasoning)
    words = {_same_words(step.description) for step in given}
    copies = [i for i, child in enumerate(expansion.children) if _same_words(child.description) in words]
    own = [child for child in expansion.children if _same_words(child.description) not in words]
    lead = copies[0] if copies else 0
    added = f"the planner added {len(own)} step{'s' if len(own) != 1 else ''}"
    where = f", {lead} before them" if lead else ""
    note = f"kept the operator's {len(given)} step{'s' if len(given) != 1 else ''}; {added}{where}"
    return expansion.model_copy(update={"children": own}), lead, note


def _same_words(text: str) -> str:
    return " ".join(text.casefold().split())


def view_of(state: SessionState, node: Node, config: EngineConfig) -> View:
    """What a model call about `node` sees at `state`: the engine's calls, and a counterfactual re-ask
    of one of them (`sessions.client.counterfactual`), which must see what the original call saw."""
    return View(
        task=state.task,
        tree=state.tree,
        node=node,
        notes=tuple(state.notes),
        progress=state.progress,
        feedback=state.feedback,
        observation=state.page_text,
        url=state.url,
        allow_or=config.or_alternatives,
        constraints=tuple(state.constraints or ()),
        candidates=tuple(state.candidates.values()),
        lookahead=config.lookahead,
    )
