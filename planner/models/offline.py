"""The offline demo model: a deterministic planner that needs no API key and no network.

It is the model the console starts with and the one the tests use against the bundled shop. It is
not a language model: it understands sub-goals written with plain verbs ("search for X", "open X",
"sort by price", "filter by max price 100", "type X into Y", "go back", "note the name and price")
and grounds each one in the live observation, finding the search box, links and buttons by their
text. Abstract steps come from per-task playbooks. Anything it cannot ground fails the node with a
reason that says what it looked for, which is exactly what an operator needs to step in.

Like a language model would, it plans ahead: while it reads a page (an observation, or an AND
expansion) it also grounds the following sub-goals on that page, up to the first one that changes
the page, so those need no expansion call of their own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from pydantic import BaseModel, Field

from planner.actions import leading_actions
from planner.errors import ModelOutputError
from planner.frames import upcoming
from planner.models.scripted import NodeScript, RepairScript
from planner.questions import (
    Candidate,
    ChildSpec,
    Completion,
    Constraints,
    Expansion,
    FinalAnswer,
    Observation,
    Proposal,
    Repair,
    Reply,
    View,
)
from planner.status import REMOVED
from planner.tree import Node, NodeType, Status

__all__ = ["VERBS", "OfflineModel", "PageElement", "Playbook", "read_elements"]

VERBS = (
    "search for X",
    (
        "open X / open the first result / open the first result QUALIFIER, where QUALIFIER is matching X, "
        "on sale, in stock, or priced under | at most | at least | over $N"
    ),
    "sort by price (low to high | high to low) / rating / reviews",
    "filter by max price N / filter by min price N / filter by minimum rating R",
    "type X into FIELD / select OPTION in FIELD / click X",
    "go back / next page",
    (
        "note the name and price (of the first result [QUALIFIER] | of every result) / "
        "note the name, price and rating / note the brand of the first result / "
        'note the cart total / note the order total / note "literal text"'
    ),
    "check each result for ATTR: VALUE and ATTR: VALUE",
    "GOAL, then GOAL (one after the other)",
)

_ELEMENT = re.compile(r'\[(\d+)\] ([a-z]+) ("(?:[^"\\]|\\.)*")')
_NOT_QUALIFIED = "does not qualify"


class Playbook(BaseModel):
    """How the offline model decomposes one bundled task.

    `nodes` gives the abstract AND/OR structure; leaves are plain-verb sub-goals grounded on the
    page at run time. `assumptions` is what the model takes for granted when a fact it needs was
    never noted (the kind of a-priori guess an operator corrects). `min_items` is how many
    qualifying notes the completion check requires; `constraints` is what constraint extraction
    reports for the task.
    """

    constraints: list[str] = Field(default_factory=list)
    nodes: dict[str, NodeScript] = Field(default_factory=dict)
    repairs: dict[str, RepairScript] = Field(default_factory=dict)
    assumptions: dict[str, str] = Field(default_factory=dict)
    min_items: int = 1


@dataclass(frozen=True, slots=True)
class PageElement:
    id: int
    role: str
    name: str


def read_elements(observation: str) -> list[PageElement]:
    """Interactive elements in a compact observation (`[12] link "Next page"`), in page order."""
    return [PageElement(int(match[1]), match[2], json.loads(match[3])) for match in _ELEMENT.finditer(observation)]


@dataclass(frozen=True, slots=True)
class _Card:
    """A product as a listing shows it: link, brand, price and rating lines, maybe a sale badge and a stock line."""

    id: int
    name: str
    brand: str = ""
    price: str = ""
    rating: str = ""
    sale: bool = False
    in_stock: bool = True

    @property
    def amount(self) -> Decimal | None:
        return Decimal(self.price.lstrip("$").replace(",", "")) if self.price else None


def _cards(observation: str) -> list[_Card]:
    """Product cards: a link whose following lines, up to the next element, start with "by BRAND"."""
    lines = observation.splitlines()
    cards = []
    for index, line in enumerate(lines):
        match = _ELEMENT.search(line)
        if not match or match[2] != "link":
            continue
        after = []
        for following in lines[index + 1 : index + 6]:
            if _ELEMENT.search(following):
                break
            after.append(following.strip())
        if not after or not after[0].startswith("by "):
            continue
        price = next((m[1] for l in after if (m := re.search(r"Price: (\$[\d,.]+)", l))), "")
        rating = next((m[1] for l in after if (m := re.search(r"Rating: ([\d.]+) out of 5", l))), "")
        sale = any(l.startswith("Sale:") for l in after)
        in_stock = not any(l.startswith("Out of stock") for l in after)
        cards.append(_Card(int(match[1]), json.loads(match[3]), after[0][3:], price, rating, sale, in_stock))
    return cards


_PRICE_TESTS: dict[str, Callable[[Decimal, Decimal], bool]] = {
    "under": lambda price, bound: price < bound,
    "below": lambda price, bound: price < bound,
    "at most": lambda price, bound: price <= bound,
    "at least": lambda price, bound: price >= bound,
    "over": lambda price, bound: price > bound,
}


def _card_test(qualifier: str) -> Callable[[_Card], bool]:
    """Which cards a qualifier ("matching X", "on sale", "in stock", "priced under $N") keeps."""
    q = _norm(qualifier)
    if m := re.fullmatch(r"matching (.+)", q):
        words = m[1]
        return lambda card: words in _norm(card.name)
    if q == "on sale":
        return lambda card: card.sale
    if q == "in stock":
        return lambda card: card.in_stock
    if m := re.fullmatch(r"(?:priced |costing )?(under|below|at most|at least|over) \$?([\d,]+(?:\.\d+)?)", q):
        test, bound = _PRICE_TESTS[m[1]], Decimal(m[2].replace(",", ""))
        return lambda card: card.amount is not None and test(card.amount, bound)
    raise ModelOutputError(
        f"the offline model does not know the qualifier {qualifier!r}; use matching X, on sale, in stock, "
        "or priced under | at most | at least | over $N"
    )


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def _find(view: View, name: str, roles: Iterable[str] = ("link", "button")) -> PageElement:
    """The element whose name matches best: exact, then prefix, then containing every word."""
    wanted = _norm(name.strip(" .\"'"))
    candidates = [e for e in read_elements(view.observation) if e.role in roles]
    tests: tuple[Callable[[PageElement], bool], ...] = (
        lambda e: _norm(e.name) == wanted,
        lambda e: _norm(e.name).startswith(wanted),
        lambda e: all(word in _norm(e.name) for word in wanted.split()),
    )
    for test in tests:
        found = [e for e in candidates if test(e)]
        if found:
            return found[0]
    kinds = " or ".join(roles)
    raise ModelOutputError(f"no {kinds} named like {name.strip()!r} on {view.url or 'this page'}")


def _field(view: View, label: str) -> PageElement:
    return _find(view, label, ("textbox", "searchbox", "spinbutton", "combobox"))


def _action(action: str, reasoning: str = "") -> Reply[Expansion]:
    return Reply(Expansion(type="ACTION", action=action, reasoning=reasoning))


def _and(*children: str, reasoning: str = "") -> Reply[Expansion]:
    return Reply(Expansion(type="AND", children=[ChildSpec(description=c) for c in children], reasoning=reasoning))


def _text_line(observation: str, pattern: str) -> re.Match[str] | None:
    return re.search(pattern, observation, flags=re.MULTILINE)


class OfflineModel:
    """Implements `planner.protocols.Model` without a network; see the module docstring."""

    def __init__(
        self, playbooks: Mapping[str, Playbook] | None = None, name: str = "demo", instruction: str | None = None
    ) -> None:
        self.playbooks = dict(playbooks or {})
        self.name = name
        self.instruction = instruction

    def instructed(self, instruction: str) -> OfflineModel:
        """This model under an operator's instruction (a counterfactual re-ask, `sessions.client.counterfactual`).

        Not being a language model, it takes the instruction literally, in its own plain verbs: as the
        sub-goals to expand or repair the node with ("search for X, then open the first result", one
        step per line or joined by "then"), and as what an observation says to focus on next.
        """
        return OfflineModel(self.playbooks, self.name, instruction)

    def _playbook(self, view: View) -> Playbook:
        return self.playbooks.get(view.task, Playbook())

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        return Reply(Constraints(task=self._playbook(view).constraints))

    # -- Node Expansion ---------------------------------------------------------------------------

    def expand(self, view: View) -> Reply[Expansion]:
        steps = _steps(self.instruction)
        if len(steps) > 1:
            reply = _and(*steps, reasoning="the operator's instruction, step by step")
        else:
            reply = self._expand(view, steps[0] if steps else view.node.description)
        expansion = reply.output
        if expansion.type == "AND" and view.lookahead:
            actions = [a for _, a in self._plan_ahead(view, [child.description for child in expansion.children])]
            grounded = [
                child.model_copy(update={"action": a}) for child, a in zip(expansion.children, actions, strict=False)
            ]
            reply = Reply(expansion.model_copy(update={"children": grounded + expansion.children[len(actions) :]}))
        return reply

    def _expand(self, view: View, description: str) -> Reply[Expansion]:
        entry = self._playbook(view).nodes.get(description)
        if entry is not None:
            children = [ChildSpec(description=c) if isinstance(c, str) else c for c in entry.children]
            return Reply(Expansion(type=entry.type, children=children, action=entry.action, reasoning="playbook"))
        try:
            return self._ground(view, self._resolve(view, description.strip()))
        except ModelOutputError as error:
            if dismiss := _dialog_button(view.observation):
                return _and(f"click {dismiss}", description, reasoning=f"a dialog covers the page; {dismiss!r} first")
            if view.task in self.playbooks:
                raise
            raise ModelOutputError(
                f"{error.reason}; the demo model has no playbook for this task, so it can only carry out a goal "
                "that names one action on the page"
            ) from None

    def _plan_ahead(self, view: View, descriptions: list[str]) -> list[tuple[str, str]]:
        """(description, action) for the leading sub-goals that are single actions on this page,
        stopping before any goal that depends on notes not taken yet (see `leading_actions`)."""

        def ground(description: str) -> str | None:
            goal = description.strip()
            try:
                if self._resolve(view, goal) != goal:
                    return None
                expansion = self._expand(view, description).output
            except ModelOutputError:
                return None
            return expansion.action if expansion.type == "ACTION" else None

        return leading_actions(descriptions[: view.lookahead], ground)

    def _resolve(self, view: View, goal: str) -> str:
        """Fill in "the X brand" from the notes, or from the playbook's assumption when never noted."""
        match = re.search(r"the ([\w -]+?) brand\b", goal, flags=re.IGNORECASE)
        if not match:
            return goal
        key = _norm(match[1])
        for note in reversed(view.notes):
            noted = re.match(r"Brand of the (.+?): (.+)$", note)
            if noted and _norm(noted[1]) == key:
                return goal.replace(match[0], noted[2].strip())
        assumed = self._playbook(view).assumptions.get(key)
        if assumed is None:
            raise ModelOutputError(f"the {key} brand is not known yet; note it first")
        return goal.replace(match[0], assumed)

    def _ground(self, view: View, goal: str) -> Reply[Expansion]:
        lower = goal.lower()
        if len(steps := re.split(r",? then ", goal, flags=re.IGNORECASE)) > 1 and all(s.strip() for s in steps):
            return _and(*(s.strip() for s in steps), reasoning="one step after the other")
        if m := re.fullmatch(r"search (?:for )?(.+?)(?: from (.+))?", goal, flags=re.IGNORECASE):
            query = f"{m[2]} {m[1]}" if m[2] else m[1]
            box = _find(view, "search", ("searchbox", "textbox"))
            return _action(f"type [{box.id}] [{query.strip(' .')}] [1]")
        if lower in ("go back", "go_back", "return to the previous page"):
            return _action("go_back")
        if lower in ("next page", "go to the next page"):
            return _action(f"click [{_find(view, 'Next page').id}]")
        if m := re.fullmatch(r"sort (?:the results )?by (.+)", lower):
            return _action(f"click [{_find(view, _sort_link(m[1])).id}]")
        if m := re.fullmatch(r"filter by (max|min) price (?:of )?\$?([\d.]+)", lower):
            field = "Max price" if m[1] == "max" else "Min price"
            return _and(f"type {m[2]} into {field}", "click Apply filters")
        if m := re.fullmatch(r"filter by minimum rating (?:of )?([\d.]+)", lower):
            return _and(f"select {float(m[1]):.1f} and up in Minimum rating", "click Apply filters")
        if m := re.fullmatch(r"type (.+) into (.+)", goal, flags=re.IGNORECASE):
            return _action(f"type [{_field(view, m[2]).id}] [{m[1]}] [0]")
        if m := re.fullmatch(r"select (.+) in (.+)", goal, flags=re.IGNORECASE):
            return _action(f"select [{_field(view, m[2]).id}] [{m[1]}]")
        if m := re.fullmatch(r"open the (?:first|top) result(?: (.+))?", lower):
            return _action(f"click [{self._first_card(view, m[1]).id}]")
        if m := re.fullmatch(
            r"(?:open|click|press) (?:the )?(.+?)(?: category| button| link)?", goal, flags=re.IGNORECASE
        ):
            return _action(f"click [{_find(view, m[1]).id}]")
        if m := re.fullmatch(r"check each result for (.+)", goal, flags=re.IGNORECASE):
            return self._check_each(view, m[1])
        if lower.startswith("note"):
            return _action(f"note [{self._note(view, goal)}]")
        raise ModelOutputError(
            f"the offline model cannot ground {goal!r}; phrase sub-goals with plain verbs: " + "; ".join(VERBS)
        )

    def _first_card(self, view: View, qualifier: str | None) -> _Card:
        cards = _cards(view.observation)
        if qualifier:
            cards = [c for c in cards if _card_test(qualifier)(c)]
        if not cards:
            what = f"{qualifier} " if qualifier else ""
            raise ModelOutputError(f"no product result {what}on {view.url or 'this page'}")
        return cards[0]

    def _check_each(self, view: View, conditions: str) -> Reply[Expansion]:
        cards = _cards(view.observation)
        if not cards:
            raise ModelOutputError(f"no product results to check on {view.url or 'this page'}")
        children = []
        for card in cards:
            children += [f"open {card.name}", f"note {card.name} if it has {conditions}", "go back"]
        return _and(*children, reasoning=f"{len(cards)} results to check")

    # -- notes ------------------------------------------------------------------------------------

    def _note(self, view: View, goal: str) -> str:
        text = view.observation
        lower = goal.lower()
        if m := re.fullmatch(r'note ["“](.+)["”]', goal.strip()):
            return m[1]
        if m := re.fullmatch(r"note (.+?) if it has (.+)", goal, flags=re.IGNORECASE):
            return self._note_if(view, m[1], m[2])
        if m := re.fullmatch(r"note the brand of the (.+)", lower):
            card = self._first_card(view, None)
            return f"Brand of the {m[1]}: {card.brand}"
        if re.fullmatch(r"note the names? and prices? of (?:every|each|all(?: the)?) results?", lower):
            cards = _cards(view.observation)
            if not cards:
                raise ModelOutputError(f"no product results to note on {view.url or 'this page'}")
            return "; ".join(f"{card.name}: {card.price}" for card in cards)
        if m := re.fullmatch(
            r"note the name(?:,| and) price(?: and rating)?(?: of the first result(?: (.+))?)?", lower
        ):
            wants_rating = "rating" in lower
            if "result" in lower:
                card = self._first_card(view, m[1])
                name, price, rating = card.name, card.price, card.rating
            else:
                name, price, rating = self._product(view)
            return f"{name}: {price}" + (f", rated {rating}" if wants_rating else "")
        if "cart total" in lower:
            found = _text_line(text, r"Total: (\$[\d,.]+)")
            if found:
                return f"Cart total: {found[1]}"
        if "order total" in lower:
            found = _text_line(text, r"Total charged: (\$[\d,.]+)")
            if found:
                return f"Order total: {found[1]}"
        raise ModelOutputError(f"cannot find what {goal!r} asks for on {view.url or 'this page'}")

    def _product(self, view: View) -> tuple[str, str, str]:
        text = view.observation
        heading = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
        price = _text_line(text, r"^Price: (\$[\d,.]+)")
        rating = _text_line(text, r"^Rating: ([\d.]+) out of 5")
        if not (heading and price):
            raise ModelOutputError(f"{view.url or 'this page'} is not a product page")
        return heading[1].strip(), price[1], rating[1] if rating else ""

    def _note_if(self, view: View, product: str, conditions: str) -> str:
        candidate = self._assess(view, conditions)
        if candidate.unmet:
            return f"{candidate.name} {_NOT_QUALIFIED} ({', '.join(candidate.unmet)})"
        return f"{candidate.name} by {candidate.fields['Brand']}: {candidate.fields['Price']} ({conditions})"

    def _assess(self, view: View, conditions: str) -> Candidate:
        """The product on this page against "ATTR: VALUE and ..." conditions, read from its specs table."""
        specs = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", view.observation, flags=re.MULTILINE))
        name, price, _ = self._product(view)
        fields = {"Brand": specs.get("Brand", ""), "Price": price}
        unmet = []
        for condition in re.split(r"\s+and\s+", conditions):
            attribute, _, value = (part.strip() for part in condition.partition(":"))
            actual = specs.get(attribute)
            fields[attribute] = actual or "not listed"
            if actual is None or _norm(value) not in _norm(actual):
                unmet.append(f"{attribute}: {actual or 'not listed'}")
        return Candidate(name=name, verdict="rejected" if unmet else "qualifies", fields=fields, unmet=unmet)

    # -- the other questions ----------------------------------------------------------------------

    def repair(self, view: View, reason: str) -> Reply[Repair]:
        if steps := _steps(self.instruction):
            score = 1.0 if view.node.type is NodeType.OR else None
            add = [ChildSpec(description=step, score=score) for step in steps]
            return Reply(Repair(add=add, reasoning="the operator's instruction"))
        scripted = self._playbook(view).repairs.get(view.node.description)
        if scripted is not None:
            return Reply(Repair(add=[ChildSpec(description=c) if isinstance(c, str) else c for c in scripted.add]))
        children = view.tree.children(view.node)
        failed = next(
            (
                c
                for c in reversed(children)
                if c.status is Status.PRUNED and c.reason and not c.reason.startswith("operator")
            ),
            None,
        )
        if failed is None or not (
            m := re.fullmatch(r"open (?:the )?(.+?)(?: category)?", failed.description, re.IGNORECASE)
        ):
            return Reply(Repair(reasoning="no untried way to reach this sub-goal"))
        later = [c.description for c in children if c.status is Status.DELETED and _after(children, c, failed)]
        tried = {_norm(c.description) for c in children}
        replacement = f"search for {m[1]}"
        if _norm(replacement) in tried:
            return Reply(Repair(reasoning=f"already tried {replacement!r}"))
        add = [ChildSpec(description=replacement), *(ChildSpec(description=d) for d in later)]
        return Reply(Repair(add=add, reasoning=f"{failed.description!r} failed; search instead"))

    def check_completion(self, view: View) -> Reply[Completion]:
        items = [note for note in view.notes if _NOT_QUALIFIED not in note]
        needed = self._playbook(view).min_items
        if len(items) < needed:
            return Reply(Completion(complete=False, reason=f"{len(items)} of {needed} required facts noted"))
        answer = _answer(view.notes) if view.node.parent is None else None
        return Reply(
            Completion(complete=True, reason=f"{len(items)} fact{'s' if len(items) != 1 else ''} noted", answer=answer)
        )

    def observe(self, view: View, action: str) -> Reply[Observation]:
        """A page summary, a progress line and the next actions; the plan itself is left as it is."""
        title = re.search(r"^Title: (.*)$", view.observation, flags=re.MULTILINE)
        done = sum(1 for n in view.tree.walk() if n.status is Status.SUCCESS and n.action)
        following = upcoming(view.tree, view.node, view.lookahead)
        actions = [a for _, a in self._plan_ahead(view, [node.description for node in following])]
        return Reply(
            Observation(
                summary=f"{title[1] if title else view.url}",
                progress=f"{done + 1} actions done; last: {action}",
                feedback=self.instruction.strip()
                if self.instruction
                else following[0].description
                if following
                else "",
                ahead=[Proposal(node=node.id, action=a) for node, a in zip(following, actions, strict=False)],
                candidates=self._candidates(view),
                reasoning="the offline model keeps the plan as it is",
            )
        )

    def _candidates(self, view: View) -> list[Candidate]:
        """The product on this page, when the next step is to check it against conditions."""
        following = upcoming(view.tree, view.node, 1)
        check = (
            re.fullmatch(r"note (.+?) if it has (.+)", following[0].description, re.IGNORECASE) if following else None
        )
        if check is None:
            return []
        try:
            return [self._assess(view, check[2])]
        except ModelOutputError:
            return []

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        answer = _answer(view.notes)
        return Reply(FinalAnswer(answer=answer, missing="" if answer else "nothing relevant was noted"))


def _steps(instruction: str | None) -> list[str]:
    """An operator's instruction as plain-verb steps: one per line, or joined by "then"."""
    lines = (instruction or "").splitlines()
    return [step.strip() for line in lines for step in re.split(r",? then ", line, flags=re.IGNORECASE) if step.strip()]


def _answer(notes: Iterable[str]) -> str | None:
    items = [note for note in notes if _NOT_QUALIFIED not in note]
    return "; ".join(items) if items else None


def _dialog_button(observation: str) -> str | None:
    """The first button of a modal dialog on the page (a cookie banner, say), which a person would press first."""
    _, dialog, rest = observation.partition("\ndialog ")
    if not dialog:
        return None
    return next((e.name for e in read_elements(rest) if e.role == "button"), None)


def _after(children: list[Node], child: Node, failed: Node) -> bool:
    return children.index(child) > children.index(failed) and child.status in REMOVED


def _sort_link(how: str) -> str:
    how = how.lower()
    if "price" in how or "cheap" in how:
        return "Price: high to low" if "high to low" in how or "expensive" in how else "Price: low to high"
    if "rat" in how:
        return "Highest rated"
    if "review" in how or "popular" in how:
        return "Most reviewed"
    return how
