"""Turn a Playwright AI-mode ARIA snapshot into the compact page text a planning model reads.

Pure text work, no Playwright import, so the format can be tested and tuned without a browser.

The input is the YAML of ``locator.aria_snapshot(mode="ai", boxes=True)``: one ``- role "name"
[attr]...`` line per node, ``[ref=eN]`` (or ``[ref=fKeN]`` inside later documents and iframes) on
nodes the pointer can reach, ``[box=x,y,w,h]`` in viewport pixels, ``- text: ...`` for text and
``- /url: ...`` style properties. The output keeps one line per meaningful node; only interactive
elements get a numeric id, written ``[12] link "Next page"``, because those ids are what actions
name. Ids come from the ref's number, so an element keeps its id across observations of one
document. When the text exceeds the budget, lines wholly above the viewport go first (so that
scrolling brings new content into view), then the tail is cut, and a line says how much is hidden.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field

__all__ = [
    "INTERACTIVE_ROLES",
    "Element",
    "PageText",
    "SnapshotNode",
    "parse_snapshot",
    "render_page",
]

INTERACTIVE_ROLES = frozenset(
    {
        "link",
        "button",
        "textbox",
        "searchbox",
        "combobox",
        "checkbox",
        "radio",
        "option",
        "menuitem",
        "tab",
        "spinbutton",
        "slider",
        "switch",
    }
)

_TEXT_ROLES = frozenset(
    {
        "generic",
        "paragraph",
        "text",
        "strong",
        "emphasis",
        "code",
        "listitem",
        "caption",
        "blockquote",
        "time",
        "mark",
        "deletion",
        "insertion",
        "subscript",
        "superscript",
        "term",
        "definition",
        "none",
        "presentation",
    }
)
"""Roles whose name or text is shown bare: the role word would add characters, not meaning."""

_ALWAYS_SHOWN = frozenset({"dialog", "alertdialog", "alert", "table", "grid"})
"""Roles worth a line even without a name: they change how the rest of the page should be read."""

_CELL_ROLES = frozenset({"cell", "gridcell", "columnheader", "rowheader"})
_STATES = ("checked", "checked=mixed", "disabled", "expanded", "pressed", "pressed=mixed", "selected", "invalid")
_VALUE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider"})
_INLINE_LIMIT = 300
_MAX_OPTIONS = 30
_MASK = "********"
_MIN_PARTIAL = 200

_LINE = re.compile(r"^( *)- (.*)$")
_UNQUOTED_KEY = re.compile(r"^(.*?)(?::(?: (.*))?)?$")
_ROLE = re.compile(r"[A-Za-z][\w-]*")
_ATTR = re.compile(r"\[([^\]]*)\]")
_REF = re.compile(r"^(f\d+)?e(\d+)$")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}

_Box = tuple[float, float, float, float]
_Fragment = tuple[str, tuple[int, ...]]


@dataclass(slots=True)
class SnapshotNode:
    """One parsed snapshot line with its children; ``value`` is the text after the colon."""

    role: str
    name: str = ""
    value: str | None = None
    ref: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    props: dict[str, str] = field(default_factory=dict)
    box: _Box | None = None
    children: list[SnapshotNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Element:
    """What an id stands for: the Playwright ref to act through, and what the model was shown."""

    ref: str
    role: str
    name: str


@dataclass(frozen=True, slots=True)
class PageText:
    """The page text and the ids it shows; ids cut by the budget are absent, so unusable."""

    text: str
    elements: Mapping[int, Element]
    cut_chars: int = 0


@dataclass(frozen=True, slots=True)
class _Inline:
    text: str
    ids: tuple[int, ...]
    prose: bool


@dataclass(slots=True)
class _Line:
    text: str
    top: float | None
    bottom: float | None
    ids: tuple[int, ...] = ()


# -- parsing ------------------------------------------------------------------------------------


def _unquote_double(text: str) -> str:
    """Decode a YAML double-quoted scalar as Playwright writes it (JSON escapes plus ``\\xNN``)."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPE.sub(replace, text[1:-1])


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return _unquote_double(text)
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def _split_item(item: str) -> tuple[str, str | None, bool]:
    """Split ``key``, ``key:`` or ``key: value`` into (key, value, has_colon); keys may be quoted."""
    if item.startswith("'"):
        i = 1
        while i < len(item):
            if item[i] == "'":
                if item[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                break
            i += 1
        key, rest = item[1:i].replace("''", "'"), item[i + 1 :]
        if not rest.startswith(":"):
            return key, None, False
        value = rest[1:].strip()
        return key, (value or None), True
    match = _UNQUOTED_KEY.match(item)
    assert match is not None  # the pattern matches every string
    has_colon = len(match.group(1)) < len(item)
    return match.group(1), match.group(2), has_colon


def _parse_key(key: str) -> SnapshotNode:
    role_match = _ROLE.match(key)
    role = role_match.group(0) if role_match else key
    rest = key[len(role) :].lstrip()
    name = ""
    if rest.startswith('"'):
        try:
            name, end = json.JSONDecoder().raw_decode(rest)
            rest = rest[end:]
        except json.JSONDecodeError:
            pass
    node = SnapshotNode(role=role, name=str(name))
    for attr in _ATTR.findall(rest):
        attr_name, _, attr_value = attr.partition("=")
        if attr_name == "ref":
            node.ref = attr_value
        elif attr_name == "box":
            parts = attr_value.split(",")
            if len(parts) == 4:
                try:
                    x, y, w, h = (float(part) for part in parts)
                    node.box = (x, y, w, h)
                except ValueError:
                    pass
        else:
            node.attrs[attr_name] = attr_value
    return node


def parse_snapshot(snapshot: str) -> list[SnapshotNode]:
    """Parse the YAML of an AI-mode ARIA snapshot into a forest of nodes."""
    roots: list[SnapshotNode] = []
    stack: list[tuple[int, SnapshotNode]] = []
    for raw in snapshot.splitlines():
        match = _LINE.match(raw)
        if not match:
            continue
        indent, item = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        key, value, _ = _split_item(item)
        if key.startswith("/") and parent is not None:
            parent.props[key[1:]] = _scalar(value or "")
            continue
        if key == "text":
            node = SnapshotNode(role="text", value=_scalar(value or ""))
        else:
            node = _parse_key(key)
            if value is not None:
                node.value = _scalar(value)
        (parent.children if parent is not None else roots).append(node)
        stack.append((indent, node))
    return roots


# -- ids ----------------------------------------------------------------------------------------


def _walk(nodes: list[SnapshotNode]) -> Iterator[SnapshotNode]:
    for node in nodes:
        yield node
        yield from _walk(node.children)


def _assign_ids(roots: list[SnapshotNode]) -> dict[str, int]:
    """Number interactive refs: the main document's by their ``eN``, iframes' after them.

    Refs of one document share a prefix (``e``, ``f3e``...); the first ref is the main document's
    root, so refs with its prefix keep their number and others, which could collide, are renumbered.
    """
    matches = [(node, _REF.match(node.ref)) for node in _walk(roots) if node.ref]
    parsed = [(node, match) for node, match in matches if match is not None]
    if not parsed:
        return {}
    main_prefix = parsed[0][1].group(1)
    ids: dict[str, int] = {}
    others: list[str] = []
    for node, match in parsed:
        if node.role not in INTERACTIVE_ROLES:
            continue
        if match.group(1) == main_prefix:
            ids[match.group(0)] = int(match.group(2))
        else:
            others.append(match.group(0))
    first_free = max(ids.values(), default=0) + 1
    ids.update({ref: first_free + i for i, ref in enumerate(others)})
    return ids


# -- rendering ----------------------------------------------------------------------------------


class _Renderer:
    def __init__(self, ids: dict[str, int], secrets: Collection[str]) -> None:
        self.ids = ids
        self.secrets = secrets
        self.lines: list[_Line] = []
        self.elements: dict[int, Element] = {}

    # A fragment is one piece of text plus the ids it mentions.

    def _interactive(self, node: SnapshotNode) -> _Fragment:
        ref = node.ref or ""
        element_id = self.ids[ref]
        self.elements[element_id] = Element(ref=ref, role=node.role, name=node.name)
        parts = [f"[{element_id}] {node.role}"]
        if node.name:
            parts.append(json.dumps(node.name, ensure_ascii=False))
        elif node.role == "link" and "url" in node.props:
            parts.append(f"url={json.dumps(node.props['url'], ensure_ascii=False)}")
        parts.extend(state for state in _STATES if _has_state(node, state))
        options = [child for child in node.children if child.role == "option" and child.ref is None]
        value = node.value
        if value is None and options:
            value = next((o.name for o in options if "selected" in o.attrs), None)
        if value is not None and node.role in _VALUE_ROLES:
            shown = _MASK if value in self.secrets else value
            parts.append(f"value={json.dumps(shown, ensure_ascii=False)}")
        if "placeholder" in node.props:
            parts.append(f"placeholder={json.dumps(node.props['placeholder'], ensure_ascii=False)}")
        if options:
            names = [o.name for o in options[:_MAX_OPTIONS]]
            listed = json.dumps(names, ensure_ascii=False)
            more = f" (+{len(options) - _MAX_OPTIONS} more)" if len(options) > _MAX_OPTIONS else ""
            parts.append(f"options={listed}{more}")
        return " ".join(parts), (element_id,)

    def _is_interactive(self, node: SnapshotNode) -> bool:
        return node.role in INTERACTIVE_ROLES and node.ref in self.ids

    def _label(self, node: SnapshotNode) -> str:
        """A non-interactive node's own line, or "" when it carries nothing worth a line."""
        if node.role in _TEXT_ROLES:
            if node.name and node.value and node.value not in node.name:
                return f"{node.name}: {node.value}"
            return node.name or node.value or ""
        if not (node.name or node.value or node.role in _ALWAYS_SHOWN):
            return ""
        text = node.role
        if node.name:
            text += " " + json.dumps(node.name, ensure_ascii=False)
        text += "".join(f" {state}" for state in _STATES if _has_state(node, state))
        if node.value:
            text += f": {node.value}"
        return text

    def _inline(self, node: SnapshotNode, limit: int | None) -> _Inline | None:
        """Render a small subtree as one line, or None when it holds block content or is too long."""
        pieces: list[str] = []
        ids: list[int] = []
        prose = False
        for child in _visible_children(node):
            if self._is_interactive(child):
                text, child_ids = self._interactive(child)
            elif child.children and (child.role in _TEXT_ROLES or child.role in _CELL_ROLES):
                inner = self._inline(child, None if limit is None else limit - len(" ".join(pieces)))
                if inner is None:
                    return None
                text, child_ids, prose = inner.text, inner.ids, prose or inner.prose
            elif child.role in _TEXT_ROLES or child.role in _CELL_ROLES or child.role == "img":
                text, child_ids = (_img(child) if child.role == "img" else self._label(child)), ()
                prose = prose or bool(text)
            else:
                return None
            if text:
                pieces.append(text)
                ids.extend(child_ids)
            if limit is not None and len(" ".join(pieces)) > limit:
                return None
        return _Inline(" ".join(pieces), tuple(ids), prose)

    def _prose(self, node: SnapshotNode) -> _Inline | None:
        """A subtree as one line when it reads as text; a run of bare controls gets a line each."""
        inline = self._inline(node, _INLINE_LIMIT)
        if inline is None or (len(inline.ids) > 1 and not inline.prose):
            return None
        return inline

    def _emit(self, text: str, node: SnapshotNode, box: _Box | None, ids: tuple[int, ...] = ()) -> None:
        if not text:
            return
        box = node.box or box
        top = box[1] if box else None
        bottom = box[1] + box[3] if box else None
        self.lines.append(_Line(text, top, bottom, tuple(ids)))

    def render(self, node: SnapshotNode, box: _Box | None = None) -> None:
        box = node.box or box
        if node.role == "text":
            self._emit(node.value or "", node, box)
        elif self._is_interactive(node):
            text, ids = self._interactive(node)
            self._emit(text, node, box, ids)
            for child in node.children:
                if _has_interactive(child, self._is_interactive):
                    self._render_interactive_only(child, box)
        elif node.role == "row":
            self._row(node, box)
        elif node.role in _TEXT_ROLES and not node.name:
            prefix = "- " if node.role == "listitem" else ""
            inline = self._prose(node) if node.children else _Inline(node.value or "", (), True)
            if inline is None:
                first = len(self.lines)
                self._children(node, box)
                if prefix and first < len(self.lines):  # mark where a block list item (a card) starts
                    self.lines[first].text = prefix + self.lines[first].text
            elif inline.text:
                self._emit(prefix + inline.text, node, box, inline.ids)
        else:
            self._named(node, box)

    def _named(self, node: SnapshotNode, box: _Box | None) -> None:
        label = _img(node) if node.role == "img" else self._label(node)
        if label and node.children and node.role not in _ALWAYS_SHOWN:
            inline = self._prose(node)
            if inline is not None:
                if inline.text and inline.text != node.name:
                    label = f"{label}: {inline.text}"
                self._emit(label, node, box, inline.ids)
                return
        self._emit(label, node, box)
        self._children(node, box)

    def _children(self, node: SnapshotNode, box: _Box | None) -> None:
        for child in _visible_children(node):
            self.render(child, box)

    def _render_interactive_only(self, node: SnapshotNode, box: _Box | None) -> None:
        """Inside an interactive element only nested interactive elements matter; the rest is its name."""
        box = node.box or box
        if self._is_interactive(node):
            self.render(node, box)
            return
        for child in node.children:
            self._render_interactive_only(child, box)

    def _row(self, node: SnapshotNode, box: _Box | None) -> None:
        cells: list[str] = []
        ids: list[int] = []
        for child in node.children:
            if self._is_interactive(child):
                text, child_ids = self._interactive(child)
            elif child.children:
                inline = self._inline(child, None)
                text, child_ids = (inline.text, inline.ids) if inline is not None else ("", ())
                if not text:
                    text, child_ids = self._flatten(child)
            else:
                text, child_ids = (child.name or child.value or "", ())
            cells.append(text.replace("|", "\\|"))
            ids.extend(child_ids)
        if not cells and (node.name or node.value):
            cells.append(node.name or node.value or "")
        if cells:
            self._emit("| " + " | ".join(cells) + " |", node, box, ids)

    def _flatten(self, node: SnapshotNode) -> _Fragment:
        """A cell with block content (a list, a heading) squeezed into one line anyway."""
        pieces: list[str] = []
        ids: list[int] = []
        for child in node.children:
            if self._is_interactive(child):
                text, child_ids = self._interactive(child)
            elif child.children:
                text, child_ids = self._flatten(child)
            else:
                text, child_ids = (child.value if child.role == "text" else child.name or child.value) or "", ()
            if text:
                pieces.append(text)
                ids.extend(child_ids)
        return " ".join(pieces), tuple(ids)


def _has_state(node: SnapshotNode, state: str) -> bool:
    name, _, value = state.partition("=")
    return name in node.attrs and node.attrs[name] == value


def _img(node: SnapshotNode) -> str:
    return f"img {json.dumps(node.name, ensure_ascii=False)}" if node.name else ""


def _has_interactive(node: SnapshotNode, is_interactive: Callable[[SnapshotNode], bool]) -> bool:
    return any(is_interactive(child) for child in _walk([node]))


def _visible_children(node: SnapshotNode) -> list[SnapshotNode]:
    """Children minus text that only repeats the node's or a sibling's name (labels, captions)."""
    names = {node.name} | {child.name for child in node.children if child.role != "text" and child.name}
    names.discard("")
    kept: list[SnapshotNode] = []
    for child in node.children:
        if child.role == "text" and (child.value or "").strip() in names:
            continue
        if child.role == "caption" and not child.children and (child.value or child.name) == node.name:
            continue
        kept.append(child)
    return kept


def _above_viewport(line: _Line) -> bool:
    return line.top is not None and line.bottom is not None and line.top < 0 and line.bottom <= 0


def _fit(header: list[str], lines: list[_Line], budget: int) -> tuple[list[str], list[_Line], int]:
    """Keep what fits in `budget`: first drop lines above the viewport, then cut the tail."""
    total = sum(len(h) + 1 for h in header) + sum(len(line.text) + 1 for line in lines)
    if total <= budget:
        return header, lines, 0
    above = [line for line in lines if _above_viewport(line)]
    rest = [line for line in lines if not _above_viewport(line)]
    notes = list(header)
    above_chars = sum(len(line.text) + 1 for line in above)
    if above:
        notes.append(f"({above_chars} characters above the viewport not shown; scroll up to see them)")
    tail_reserve = 80
    room = budget - sum(len(n) + 1 for n in notes) - tail_reserve
    kept: list[_Line] = []
    shown_chars = 0
    for line in rest:
        if len(line.text) + 1 > room:
            if room > _MIN_PARTIAL:
                part = line.text[: room - 2] + "…"
                ids = tuple(i for i in line.ids if f"[{i}]" in part)
                kept.append(_Line(part, line.top, line.bottom, ids))
                shown_chars += room - 2
            break
        kept.append(line)
        room -= len(line.text) + 1
        shown_chars += len(line.text) + 1
    cut_below = sum(len(line.text) + 1 for line in rest) - shown_chars
    if cut_below:
        kept.append(_Line(f"({cut_below} more characters cut; scroll down to see more)", None, None))
    return notes, kept, above_chars + cut_below


def render_page(
    url: str,
    title: str,
    snapshot: str,
    budget: int = 6000,
    secrets: Collection[str] = (),
) -> PageText:
    """Render a snapshot as compact page text of at most `budget` characters.

    `secrets` are values to mask if they appear as a field's value (the current password inputs'
    contents), so a typed password never reaches a model prompt or the event log.
    """
    roots = parse_snapshot(snapshot)
    renderer = _Renderer(_assign_ids(roots), frozenset(s for s in secrets if s))
    for root in roots:
        renderer.render(root)
    header = [f"URL: {url}", f"Title: {title}"]
    header, lines, cut = _fit(header, renderer.lines, budget)
    shown = {element_id for line in lines for element_id in line.ids}
    text = "\n".join([*header, *(line.text for line in lines)])
    elements = {i: e for i, e in renderer.elements.items() if i in shown}
    return PageText(text=text, elements=elements, cut_chars=cut)
