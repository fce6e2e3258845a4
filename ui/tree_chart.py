"""The plan as an interactive ECharts graph, built without Streamlit so it can be tested and timed.

`build_chart` turns a `SessionState` into a JSON-only ECharts option for `st.echarts_chart`: one
`graph` series laid out top-down in Python (ECharts' own tree series cannot show AND/OR shapes,
dimmed history or per-node markers), plus the data-index -> node-id map a click needs. Everything
that reaches the browser is data, never JavaScript, and every piece of node text is escaped for the
two places it lands: HTML tooltips and ECharts string templates.

Large plans stay readable and cheap: finished branches off the active path fold into their root
("+N"), and past `max_nodes` only the neighbourhood of the agent and of the operator's selection is
kept, so the browser never receives thousands of nodes.

The layout is in pixels and drawn one pixel per unit: leaves sit further apart than a label is wide, so
every drawn node keeps its label however wide a fan-out grows (fitted to the chart, a row of twenty
showed one label in three). A plan larger than the chart is shown around one node and the way up to
it (`_view`); the operator pans or zooms out for the rest.
"""

from __future__ import annotations

import html
import math
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from planner.frames import active_path
from planner.render import TYPE_TAG
from planner.state import SessionState
from planner.status import CLOSED, REMOVED
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status, Tree
from sessions.client.markdown import short

__all__ = ["SERIES_ID", "TreeChart", "build_chart", "clicked_node", "legend_markdown"]

SERIES_ID = "plan"
"""The graph series' id, as reported in a selection's `series_id`."""

_SYMBOL = {NodeType.AND: "rect", NodeType.OR: "diamond", NodeType.ACTION: "circle", NodeType.UNKNOWN: "triangle"}
_SIZE = {NodeType.AND: 16, NodeType.OR: 20, NodeType.ACTION: 16, NodeType.UNKNOWN: 18}
"""Diamonds and triangles cover less area than squares and circles at the same box size."""
_KEPT_LABEL_SIZE = 26
"""Where labels overlap, ECharts keeps the one whose symbol's box (its border included) is largest, and
of equal ones the first in the data (`labelLayout.hideOverlap`): a failed or selected node is drawn
this large, above any other node but the current one (a folded OR with an operator's border is 24 +
2.5), so its label is never the one hidden; at the plain sizes a "?" or an OR beside a failed action
would keep its own label instead."""

# Paul Tol's "vibrant" scheme: distinguishable under the common colour-vision deficiencies.
_COLOUR = {
    Status.UNVISITED: "#8C8C8C",
    Status.VISITED: "#0077BB",
    Status.SUCCESS: "#009988",
    Status.FAIL: "#CC3311",
    Status.PRUNED: "#C8C8C8",
    Status.DELETED: "#C8C8C8",
}
_FAILED_BORDER = "#6B1A09"
_FAILED_EDGE = "#CC3311"
_CURRENT = "#1A1A1A"
_SELECTED = "#FFB000"
_OPERATOR = "#785EF0"
_EDGE = "#A8A8A8"
_BORDER = "#FFFFFF"
_REMOVED_BORDER = "#707070"
_REMOVED_OPACITY = 0.35

_CHANGED_MARK = "Δ "
"""On a past state (the timeline): this node's status, type or description differs later."""
_MARKER = {Origin.OPERATOR: "✎ ", Origin.REPAIR: "↻ ", Origin.PLANNER: ""}
_PLANNED = "⇢"
_FAILED_MARK = "✗ "
_BREAK_MARK = "⏸ "
"""An operator's breakpoint: the run pauses as it is about to enter this node."""
_LABEL_CHARS = 28
_LABEL_WIDTH = 84
"""Pixels a label may span before it wraps: two lines of about 14 characters."""
_LABEL_PADDING = (1, 3)
"""Pixels around a label's text, inside its background (vertical, horizontal)."""
_LABEL_BACKGROUND = "rgba(255, 255, 255, 0.85)"
"""Behind every label, so the edges down to a node's children pass under its label, not through its text."""
_LABEL_COLOUR = "#31333F"
"""The text's own colour, dark on that background whatever the page's theme."""
_TIP_CHARS = 200
_ID_CHARS = 12

_X_GAP = 100.0
"""Pixels between two neighbouring leaves: more than a label and its padding, so no two labels of a row
overlap (nor hide each other) at the scale the chart opens at."""
_Y_GAP = 96.0
"""Pixels between two rows: a label of four lines under its node clears the row below."""
_ABOVE = 24.0
"""Pixels a node's drawing reaches above its position (the current node's symbol and outline)..."""
_BELOW = 80.0
"""...and below it (its symbol, then a label of four lines)."""
_MARGIN = 12.0
"""Pixels between the chart's top and the highest drawing of a plan that starts there."""
_NARROWEST = 400.0
"""The narrowest chart the console draws (half the main column: a fork beside its parent). A chart's
width is not known here, so what must be in view is kept within this of the chart's centre..."""
_SIDEWAYS = _NARROWEST / 2 - _LABEL_WIDTH / 2 - 8
"""...as nodes no further than this from it across, their labels whole."""
_PULL = _X_GAP
"""How far across from the agent a node on its way may sit (`_layout`): the whole way in view at once."""

# Labels are canvas text: HTML is inert there, but `{a}`-style placeholders and `{style|text}` rich
# text are not. An invisible word joiner inside every brace and pipe breaks both syntaxes while the
# text still reads the same (look-alike braces are missing from many fonts); `<` and `>` become
# angle quotes so that no string in the option can ever be mistaken for markup.
_WJ = "\u2060"
_LABEL_SAFE = str.maketrans({"{": "{" + _WJ, "}": _WJ + "}", "|": _WJ + "|" + _WJ, "<": "‹", ">": "›"})
# Tooltips are HTML: after html.escape, braces become entities that still display as braces but can
# no longer form an ECharts template placeholder.
_TIP_SAFE = str.maketrans({"{": "&#123;", "}": "&#125;", "|": "&#124;"})


@dataclass(frozen=True, slots=True)
class TreeChart:
    """An ECharts option plus what the page needs to interpret clicks and explain what is hidden.

    `node_ids[i]` is the tree node drawn as `option["series"][0]["data"][i]`, in plan order, so the
    same visible nodes always get the same indices. `hidden` counts tree nodes not drawn for any
    reason (filtered out, folded or over the budget); `collapsed` maps each drawn node that stands in
    for hidden descendants to how many it folds (shown as "+N" on the chart).
    """

    option: dict[str, Any]
    node_ids: list[str]
    hidden: int
    collapsed: dict[str, int]

    @property
    def renderer(self) -> Literal["svg", "canvas"]:
        """SVG keeps nodes in the page (accessible, crisp, clickable by tests); past a few hundred
        drawn nodes canvas draws much faster."""
        return "svg" if len(self.node_ids) <= _SVG_LIMIT else "canvas"


def build_chart(
    state: SessionState,
    *,
    selected: str | None = None,
    hide_removed: bool = False,
    focus: str | None = None,
    collapse_closed: bool = True,
    max_nodes: int = 400,
    changed: Collection[str] = (),
    follow: bool = False,
    height: int = 560,
) -> TreeChart:
    """The chart for `state`: shapes by node type, colours by status, the agent's position and path.

    `selected` is highlighted and kept visible with its neighbourhood; `hide_removed` drops PRUNED
    and DELETED subtrees; `focus` shows only that node's ancestors, siblings and subtree;
    `collapse_closed` folds finished branches away from the agent and the selection. Whatever the
    filters leave of the root, the active path and the selected and focused nodes' ancestors is always
    drawn, so the chart exceeds `max_nodes` only if those chains alone are longer.

    A node whose last outcome was a failure (`SessionState.failed`; a failed action ends PRUNED) is
    drawn red with ✗ at full strength whatever its status, never folded or hidden, with the way down
    to it drawn red, so a failure is seen at a glance and told from a prune, in the live plan and in
    every past or compared one alike.

    The plan is drawn one pixel per unit in a chart `height` pixels high (what `st.echarts_chart` is
    given), centred across and from its top when it fits; a larger one is shown around one node and
    the way up to it: the agent's (the end of the active path) when `follow`, else the selected node, else the
    agent's, so that the node the operator watches is in view as the plan grows.

    `changed` names nodes that differ later on (the timeline draws a past state): each is marked Δ.
    A node with an operator's breakpoint (`EngineConfig.node_breakpoints`) is marked ⏸.
    """
    if max_nodes < 1:
        raise ValueError("max_nodes must be at least 1")
    tree = state.tree
    nodes = tree.nodes
    if ROOT_ID not in nodes:
        return TreeChart(option=_option([], [], None), node_ids=[], hidden=len(nodes), collapsed={})
    path = [node.id for node, _ in active_path(tree)]
    # The end of the active path is where the next step works; `state.current` (the node the last
    # step worked on) only stands in once the traversal is over, so marker and path never disagree.
    current = path[-1] if path else (state.current if state.current in nodes else None)
    selected = selected if selected in nodes else None
    focus = focus if focus in nodes else None
    failures = sorted(node_id for node_id in state.failed if node_id in nodes)
    current_chain = _chain(tree, current)
    failure_chains = [_chain(tree, node_id) for node_id in failures]
    chains = [path, current_chain, _chain(tree, selected), _chain(tree, focus), *failure_chains]
    spine = {node_id for chain in chains for node_id in chain}

    drawn, kids, collapsed = _fold(
        tree, hide_removed=hide_removed, focus=focus, spine=spine, collapse_closed=collapse_closed
    )
    if len(drawn) > max_nodes:
        anchors = _anchor_groups(tree, kids, path, current_chain, selected)
        keep = _budget(kids, chains, anchors, max_nodes)
        drawn, kids = _trim(drawn, kids, keep, collapsed)

    node_ids = [node.id for node in drawn]
    positions = _layout(drawn, kids, path)
    index = {node_id: i for i, node_id in enumerate(node_ids)}
    on_path = set(path)
    to_failure = {node_id for chain in failure_chains for node_id in chain}
    failed_set = set(failures)
    changed_set = set(changed)
    breakpoints = state.config.node_breakpoints
    items = [
        _item(
            node,
            positions[i],
            folded=collapsed.get(node.id, 0),
            is_current=node.id == current,
            is_selected=node.id == selected,
            on_path=node.id in on_path,
            or_child=node.parent is not None and nodes[node.parent].type is NodeType.OR,
            planned=state.proposals.get(node.id),
            failed=node.id in failed_set,
            changed=node.id in changed_set,
            break_here=node.id in breakpoints,
        )
        for i, node in enumerate(drawn)
    ]
    links = [
        _link(index[node.parent], i, node, on_path, to_failure)
        for i, node in enumerate(drawn)
        if node.parent is not None
    ]
    view_on = current if follow and current in index else selected if selected in index else current
    chain = _chain(tree, view_on if view_on in index else ROOT_ID)
    view = _view(positions, [positions[index[node_id]] for node_id in chain], height)
    return TreeChart(
        option=_option(items, links, view),
        node_ids=node_ids,
        hidden=len(nodes) - len(node_ids),
        collapsed=collapsed,
    )


def clicked_node(event: Mapping[str, Any] | None, node_ids: Sequence[str]) -> str | None:
    """The node a click picked, from `st.echarts_chart`'s return value (or its widget state).

    Pass the `node_ids` of the chart that was on screen when the click happened: indices are only
    meaningful for that chart. Edge clicks, empty selections (a second click on the same node, or a
    double-click, clears the selection) and out-of-range indices give None.
    """
    if not event:
        return None
    selection = event.get("selection") or {}
    for group in selection.get("selected") or ():
        indices = group.get("data_indices") or ()
        if group.get("data_type") in ("node", "main") and indices:
            index = indices[0]
            if isinstance(index, int) and 0 <= index < len(node_ids):
                return node_ids[index]
    return None


def legend_markdown() -> str:
    """A short key to the chart, so shapes and markers never have to be guessed."""
    shapes = (
        "**Shapes:** ■ AND (every sub-goal) · ◆ OR (one alternative, score shown) · "
        "● ACT (a browser action) · ▲ ? (not expanded yet)"
    )
    colours = (
        "**Colours:** grey = unvisited · blue = in progress · green = succeeded · "
        "red with ✗ and a dark red outline = failed (also when the engine then pruned it; never folded or hidden, "
        "the way down to it drawn red, why in the tooltip) · faint with a dashed outline = pruned or deleted"
    )
    markers = (
        "**Markers:** large node with a thick dark outline = where the agent is · thick dark edges = "
        "the active path · amber outline = your selection · purple outline and ✎ = added or edited by "
        "an operator · ↻ = added by a repair · +N = N steps folded into this node (select it to unfold) · "
        f"{_PLANNED} = its action is already planned on the current page (it runs without an expansion call) · "
        f"{_BREAK_MARK.strip()} = your breakpoint: the run pauses as it is about to enter this node · "
        "Δ (timeline only) = this node changes after the event shown"
    )
    return f"{shapes}\n\n{colours}\n\n{markers}"


# -- which nodes are drawn -------------------------------------------------------------------------


def _chain(tree: Tree, node_id: str | None) -> list[str]:
    """Root-first ids from the root down to `node_id` (empty for None)."""
    if node_id is None:
        return []
    node = tree[node_id]
    chain = [ancestor.id for ancestor in tree.ancestors(node)]
    chain.reverse()
    chain.append(node_id)
    return chain


def _fold(
    tree: Tree, *, hide_removed: bool, focus: str | None, spine: set[str], collapse_closed: bool
) -> tuple[list[Node], dict[str, list[str]], dict[str, int]]:
    """One plan-order pass: filter (hide_removed, focus), then fold closed branches off the spine.

    Returns the drawn nodes in plan order, each drawn node's drawn children, and the fold counts.
    A drawn node is a "sink" when its descendants fold into it; `sink` also maps every folded node
    to the drawn node that stands in for it.
    """
    focus_parent = tree[focus].parent if focus is not None else None
    above_focus = set(_chain(tree, focus)[:-1]) if focus is not None else set()
    included: set[str] = set()
    sink: dict[str, str] = {}
    drawn: list[Node] = []
    kids: dict[str, list[str]] = {}
    collapsed: dict[str, int] = {}
    for node in tree.walk():
        node_id, parent = node.id, node.parent
        if parent is not None and parent not in included:
            continue
        if hide_removed and node.status in REMOVED and node_id not in spine:
            continue
        sibling_of_focus = focus is not None and parent is not None and parent == focus_parent
        if focus is not None and parent in above_focus and not sibling_of_focus and node_id not in above_focus:
            continue
        included.add(node_id)
        stand_in = sink.get(parent) if parent is not None else None
        if stand_in is not None:
            sink[node_id] = stand_in
            collapsed[stand_in] = collapsed.get(stand_in, 0) + 1
            continue
        drawn.append(node)
        kids[node_id] = []
        if parent is not None:
            kids[parent].append(node_id)
            folds = (sibling_of_focus and node_id != focus) or (
                collapse_closed and node.status in CLOSED and node_id not in spine
            )
            if folds and node.children:
                sink[node_id] = node_id
    return drawn, kids, collapsed


def _anchor_groups(
    tree: Tree, kids: dict[str, list[str]], path: list[str], current_chain: list[str], selected: str | None
) -> list[tuple[list[str], str | None]]:
    """Sibling groups worth keeping under a budget, most important first, each with the node to keep
    them around: the selection's children and siblings, then the siblings of every node on the
    active path (and on the way to the current node), deepest first."""
    groups: list[tuple[list[str], str | None]] = []
    if selected in kids:
        groups.append((kids[selected], None))
        parent = tree[selected].parent
        if parent in kids:
            groups.append((kids[parent], selected))
    for chain in (path, current_chain):
        for node_id in reversed(chain[1:]):
            parent = tree[node_id].parent
            if node_id in kids and parent in kids:
                groups.append((kids[parent], node_id))
    return groups


def _budget(
    kids: dict[str, list[str]],
    chains: list[list[str]],
    anchors: list[tuple[list[str], str | None]],
    max_nodes: int,
) -> set[str]:
    """Choose at most `max_nodes` nodes (the chains always): the chains, then the anchored sibling
    groups, then whole levels from the top. Every kept node's parent is kept, so the result is a tree."""
    keep = {ROOT_ID}
    for chain in chains:
        for node_id in chain:
            if node_id not in kids:  # drawn nodes are closed under ancestors: the rest of the chain is hidden too
                break
            keep.add(node_id)
    for group, anchor in anchors:
        _take(keep, group, anchor, max_nodes)
    queue = deque([ROOT_ID])
    while queue and len(keep) < max_nodes:
        node_id = queue.popleft()
        _take(keep, kids[node_id], None, max_nodes)
        queue.extend(child for child in kids[node_id] if child in keep)
    return keep


def _take(keep: set[str], group: list[str], anchor: str | None, max_nodes: int) -> None:
    """Add what fits of `group`: all of it, or the members nearest `anchor` (else the first ones)."""
    room = max_nodes - len(keep)
    if room <= 0:
        return
    missing = [(position, node_id) for position, node_id in enumerate(group) if node_id not in keep]
    if len(missing) > room:
        if anchor is not None:
            centre = group.index(anchor)
            missing.sort(key=lambda entry: (abs(entry[0] - centre), entry[0]))
        missing = missing[:room]
    keep.update(node_id for _, node_id in missing)


def _trim(
    drawn: list[Node], kids: dict[str, list[str]], keep: set[str], collapsed: dict[str, int]
) -> tuple[list[Node], dict[str, list[str]]]:
    """Drop nodes outside `keep`, adding each (and what it already folded) to its nearest kept ancestor."""
    stand_in: dict[str, str] = {}
    kept: list[Node] = []
    for node in drawn:
        node_id = node.id
        if node_id in keep:
            kept.append(node)
            continue
        parent = node.parent
        assert parent is not None  # the root is always kept
        target = parent if parent in keep else stand_in[parent]
        stand_in[node_id] = target
        collapsed[target] = collapsed.get(target, 0) + 1 + collapsed.pop(node_id, 0)
    return kept, {node.id: [child for child in kids[node.id] if child in keep] for node in kept}


# -- layout and styling ----------------------------------------------------------------------------


def _layout(drawn: list[Node], kids: dict[str, list[str]], path: list[str]) -> list[tuple[float, float]]:
    """Tidy top-down positions in pixels (in `drawn` order): leaves one gap apart in plan order, one
    row per level, each parent centred over its first and last child, except that a node on the
    active path is pulled to within `_PULL` of the agent across, so the way down to the agent is in
    view wherever the agent is in a wide plan. (Pulled, a parent still sits between its first and last
    child, so no edge crosses another and no two labels of a row meet.)"""
    pulled = set(path[:-1])
    agent = path[-1] if path else None
    xs: dict[str, float] = {}
    depth: dict[str, int] = {}
    leaves = 0
    for node in drawn:
        depth[node.id] = depth[node.parent] + 1 if node.parent is not None else 0
        if not kids[node.id]:
            xs[node.id] = leaves * _X_GAP
            leaves += 1
    for node in reversed(drawn):  # children before their parent, the agent before its ancestors
        children = kids[node.id]
        if children:
            x = (xs[children[0]] + xs[children[-1]]) / 2
            if node.id in pulled and agent in xs:
                x = min(max(x, xs[agent] - _PULL), xs[agent] + _PULL)
            xs[node.id] = x
    return [(xs[node.id], depth[node.id] * _Y_GAP) for node in drawn]


def _view(positions: list[tuple[float, float]], chain: list[tuple[float, float]], height: int) -> dict[str, Any]:
    """Where the chart opens: the drawing at one pixel per unit (its box as large as its extent, which
    ECharts widens to 2 when it is 0), and the point drawn at the chart's centre (`center`).

    `chain` is the node the operator watches and its ancestors, root first. A plan that fits the
    chart's height starts at its top (a small plan centred in a tall chart left its upper half empty and
    its root far from the toggles above); a taller one shows the watched node with as much of the way
    up to it as fits. Across, the plan's centre is taken while the whole chain stays
    within `_SIDEWAYS` of it (only the watched node, when the chain is wider than that allows), else
    the nearest point that keeps it so."""
    xs = [x for x, _ in positions]
    ys = [y for _, y in positions]
    top = min(ys) - _ABOVE
    x, y = chain[-1]
    left = min(cx for cx, _ in chain)
    right = max(cx for cx, _ in chain)
    if right - left > 2 * _SIDEWAYS:
        left = right = x
    middle = (min(xs) + max(xs)) / 2
    across = min(max(middle, right - _SIDEWAYS), left + _SIDEWAYS)
    wanted = top - _MARGIN + height / 2
    down = min(max(wanted, y + _BELOW - height / 2), y - _ABOVE + height / 2)
    return {
        "left": "center",
        "top": "center",
        "width": max(max(xs) - min(xs), 2.0),
        "height": max(max(ys) - min(ys), 2.0),
        "center": [round(across, 2), round(down, 2)],
    }


def _label_text(text: str, limit: int) -> str:
    return short(text, limit).translate(_LABEL_SAFE)


def _tip_text(text: str, limit: int = _TIP_CHARS) -> str:
    return html.escape(short(text, limit)).translate(_TIP_SAFE)


def _score(node: Node) -> str | None:
    score = node.score
    return f"{score:.2f}" if score is not None and math.isfinite(score) else None


def _item(
    node: Node,
    position: tuple[float, float],
    *,
    folded: int,
    is_current: bool,
    is_selected: bool,
    on_path: bool,
    or_child: bool,
    planned: str | None = None,
    failed: bool = False,
    changed: bool = False,
    break_here: bool = False,
) -> dict[str, Any]:
    removed = node.status in REMOVED
    operator = node.origin is Origin.OPERATOR or node.edited  # made or edited by the operator
    style: dict[str, Any] = {"color": _COLOUR[node.status], "borderColor": _BORDER, "borderWidth": 1}
    if failed:
        style.update(color=_COLOUR[Status.FAIL], borderColor=_FAILED_BORDER, borderWidth=2.5)
    elif removed:
        style.update(opacity=_REMOVED_OPACITY, borderType="dashed", borderColor=_REMOVED_BORDER, borderWidth=1.5)
    if operator:
        style.update(borderColor=_OPERATOR, borderWidth=2.5)
    if is_current:
        style.update(borderColor=_CURRENT, borderWidth=4)
    if is_selected:
        style.update(borderColor=_SELECTED, borderWidth=4, shadowBlur=12, shadowColor=_SELECTED)
    size = _SIZE[node.type] + (4 if folded else 0)
    if is_current:
        size = round(size * 1.75)
    elif failed or is_selected:
        size = _KEPT_LABEL_SIZE

    score = _score(node) if or_child else None
    head = [
        f"{_CHANGED_MARK if changed else ''}{_BREAK_MARK if break_here else ''}{_FAILED_MARK if failed else ''}{_MARKER[Origin.OPERATOR if node.edited else node.origin]}{TYPE_TAG[node.type]} {_label_text(_short_id(node.id), _ID_CHARS + 1)}"
    ]
    if score is not None:
        head.append(score)
    if folded:
        head.append(f"+{folded}")
    if planned:
        head.append(_PLANNED)
    label: dict[str, Any] = {"formatter": " · ".join(head) + "\n" + _label_text(node.description, _LABEL_CHARS)}
    if is_current:
        label["fontWeight"] = "bold"

    return {
        "id": node.id,
        "name": node.id,
        "x": position[0],
        "y": position[1],
        "symbol": _SYMBOL[node.type],
        "symbolSize": size,
        "itemStyle": style,
        # ECharts re-applies a click's selection by index after every rerun, even when the plan has
        # changed underneath it; the page draws the real selection itself, so the built-in one is
        # made invisible rather than risk an outline on the wrong node.
        "select": {"itemStyle": {"borderColor": style["borderColor"], "borderWidth": style["borderWidth"]}},
        "label": label,
        "tooltip": {
            "formatter": _tooltip(
                node,
                folded=folded,
                is_current=is_current,
                on_path=on_path,
                score=score,
                planned=planned,
                failed=failed,
                break_here=break_here,
            )
        },
    }


def _short_id(node_id: str) -> str:
    return node_id if len(node_id) <= _ID_CHARS else "…" + node_id[-(_ID_CHARS - 1) :]


def _tooltip(
    node: Node,
    *,
    folded: int,
    is_current: bool,
    on_path: bool,
    score: str | None,
    planned: str | None,
    failed: bool = False,
    break_here: bool = False,
) -> str:
    facts = [TYPE_TAG[node.type] if node.type is not NodeType.UNKNOWN else "not expanded", node.status.value]
    if failed and node.status is not Status.FAIL and node.id != ROOT_ID:  # the root's prune ends the run
        facts.append("<b>failed</b>, then taken out of the plan")
    elif failed:
        facts.append("<b>failed</b>")
    if is_current:
        facts.append("current")
    elif on_path:
        facts.append("on the active path")
    if node.origin is not Origin.PLANNER:
        facts.append(f"{node.origin.value}-made")
    if break_here:
        facts.append("<b>breakpoint set</b>")
    lines = [f"<b>{_tip_text(node.id, 80)}</b> · " + " · ".join(facts), _tip_text(node.description)]
    if node.action:
        lines.append(f"action: <code>{_tip_text(node.action)}</code>")
    if planned:
        lines.append(f"planned ahead: <code>{_tip_text(planned)}</code> (no expansion call while this page lasts)")
    if score is not None:
        lines.append(f"score: {score}")
    if node.reason:
        lines.append(f"{'why it failed' if failed else 'reason'}: {_tip_text(node.reason)}")
    if folded:
        lines.append(f"<i>+{folded} steps folded here: select the node to unfold</i>")
    return "<br/>".join(lines)


def _link(source: int, target: int, child: Node, on_path: set[str], to_failure: set[str]) -> dict[str, Any]:
    link: dict[str, Any] = {"source": source, "target": target}
    if child.id in on_path:
        link["lineStyle"] = {"color": _CURRENT, "width": 3, "opacity": 1}
    elif child.id in to_failure:
        link["lineStyle"] = {"color": _FAILED_EDGE, "width": 2.5, "opacity": 1}
    elif child.status in REMOVED:
        link["lineStyle"] = {"type": "dashed", "opacity": _REMOVED_OPACITY}
    return link


_BIG_DRAWING = 1500
"""Past this many drawn nodes, skip labels so the first draw stays fast (they would overlap anyway)."""
_SVG_LIMIT = 600
"""Past this many drawn nodes the chart is drawn on a canvas (see `TreeChart.renderer`)."""


def _option(items: list[dict[str, Any]], links: list[dict[str, Any]], view: dict[str, Any] | None) -> dict[str, Any]:
    series: dict[str, Any] = {
        "type": "graph",
        "id": SERIES_ID,
        "name": "plan",
        "layout": "none",
        "roam": True,
        "draggable": False,
        "nodeScaleRatio": 0.001,  # constant symbol size at any zoom (ECharts reads 0 as "unset")
        "selectedMode": "single",
        # Labels wrap at a fixed width, narrower than the gap between two leaves, so neighbouring
        # leaves' labels sit side by side; zoomed out, the ones that would overlap are hidden.
        "label": {
            "show": True,
            "position": "bottom",
            "distance": 4,  # 5 by default; its background's padding takes the pixel back
            "fontSize": 11,
            "lineHeight": 13,
            "width": _LABEL_WIDTH,
            "overflow": "break",
            "color": _LABEL_COLOUR,
            "backgroundColor": _LABEL_BACKGROUND,
            "padding": list(_LABEL_PADDING),
            "borderRadius": 2,
        },
        "labelLayout": {"hideOverlap": True},
        "edgeSymbol": ["none", "none"],
        "lineStyle": {"color": _EDGE, "width": 1.2, "opacity": 0.9, "curveness": 0},
        # A hovered node stands out a little and nothing else changes: with `focus: "adjacency"` every
        # other node and edge faded for as long as the pointer rested on one, which it often does.
        "emphasis": {"focus": "none", "lineStyle": {"width": 3}},
        "data": items,
        "links": links,
    }
    if view is not None:
        series.update(view)
    big = len(items) > _BIG_DRAWING
    if big:
        series["label"] = {**series["label"], "show": False}  # thousands of labels overlap anyway; tooltips stay
    return {
        # No animation: the live panel redraws every 0.75 s and ECharts animates each update for a
        # second, so a running plan never stood still under the operator's pointer, and the browser
        # kept drawing frames the whole run.
        "animation": False,
        "tooltip": {
            "trigger": "item",
            "confine": True,
            "extraCssText": "max-width: 380px; white-space: normal; overflow-wrap: anywhere;",
        },
        "series": [series],
    }
