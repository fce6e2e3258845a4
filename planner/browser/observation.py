"""Turn a Playwright AI-mode ARIA snapshot into the compact page text a planning model reads.

Pure text work, no Playwright import, so the format can be tested and tuned without a browser.

The input is the YAML of ``locator.aria_snapshot(mode="ai", boxes=True)``: one ``- role "name"
[attr]...`` line per node, ``[ref=eN]`` (or ``[ref=fKeN]`` inside later documents and iframes) on
nodes the pointer can reach, ``[box=x,y,w,h]`` in viewport pixels, ``- text: ...`` for text and
``- /url: ...`` style properties. The output keeps one line per meaningful node; only interactive
elements get a numeric id, written ``[12] link "Next page"``, because those ids are what actions
name. Ids come from the ref's number, so an element keeps its id across observations of one
document. A control the page left without a name is named from the text inside it (a heading in
a clickable card) or, for a form control, next to it (a checkbox followed by its text, a text box
in a table cell beside its label). When the text exceeds the
budget, lines wholly above the viewport go first (so that scrolling brings new content into
view); then every line on the screen is kept wherever it stands in the page's order (a sidebar after
a long table), with as much of what follows the screen as fits; what is left out between is named
(rows a–b of a table), and lines say how many elements and characters are hidden below;
`PageText.next_top` says where the first hidden line starts, so a scroll can bring exactly the
hidden lines to the top of the screen instead of jumping past them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "INTERACTIVE_ROLES",
    "Element",
    "PageText",
    "Place",
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
        "listbox",
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
_TABLE_ROLES = frozenset({"table", "grid", "treegrid"})
_STATES = ("checked", "checked=mixed", "disabled", "expanded", "pressed", "pressed=mixed", "selected", "invalid")
_VALUE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider"})
_TOGGLES = frozenset({"checkbox", "radio", "switch"})
_NEIGHBOUR_NAME_LIMIT = 60
"""Longer neighbouring text is prose, not a label."""
_WRAPPER_LEVELS = 2
"""How many wrapper boxes a field may sit in below the box its label sits beside."""
_INLINE_LIMIT = 300
_MAX_OPTIONS = 30
_MASK = "********"
_EDITOR_LIMIT = 1000
"""An editor's text is shown up to this many characters (a whole source file would crowd out the page)."""
_MIN_PARTIAL = 200

_LINE = re.compile(r"^( *)- (.*)$")
_UNQUOTED_KEY = re.compile(r"^(.*?)(?::(?: (.*))?)?$")
_ROLE = re.compile(r"[A-Za-z][\w-]*")
_ATTR = re.compile(r"\[([^\]]*)\]")
_REF = re.compile(r"^(f\d+)?e(\d+)$")
_FRAME_STRIDE = 10_000
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}

_Box = tuple[float, float, float, float]
Place = tuple[bool, _Box]
"""Where an element is: whether in the page's main document (else in a frame), and its box in that
document's own pixels, as the snapshot gives boxes (a frame's start at its own top left)."""
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
    readonly: bool = False
    editor: bool = False
    """A rich text or code editor (a contenteditable region, a box around a hidden text area), typed into
    with the keyboard rather than filled."""
    disabled: bool = False
    """The page disabled it (shown `disabled`): an action on it fails at once instead of waiting for it."""


@dataclass(frozen=True, slots=True)
class PageText:
    """The page text and the ids it shows; ids cut by the budget are absent, so unusable.

    `next_top`: where (viewport pixels) the first line cut below starts, when lines were cut.
    """

    text: str
    elements: Mapping[int, Element]
    cut_chars: int = 0
    next_top: float | None = None


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
    cells: tuple[_Cell, ...] | None = None
    """A table row's cells, kept so the row can be shortened cell by cell (`_shortened`)."""
    row_of: _RowOf | None = None
    """Which row of which table this line is, so a cut through a long table can say which rows it shows."""


@dataclass(frozen=True, slots=True)
class _RowOf:
    """A row's place in its table: the table (a number per observation), the row's number among the
    table's data rows (from 1; 0 for a header row) and how many data rows the table has."""

    table: int
    number: int
    rows: int


@dataclass(frozen=True, slots=True)
class _Cell:
    """One cell of a row: its text (unescaped), the ids it shows, and the names of the controls in its row."""

    text: str
    ids: tuple[int, ...]
    row_names: tuple[str, ...]


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


def _assign_ids(roots: list[SnapshotNode]) -> tuple[dict[str, int], str | None]:
    """Number interactive refs: the main document's by their ``eN``, each frame's in a block of its own;
    returns the numbers by ref, and the main document's prefix.

    Refs of one document share a prefix (``e``, ``f3e``...; the number grows with every document a page
    loads); the first ref is the main document's root, so refs with its prefix keep their number. A
    frame whose prefix is ``k`` documents after the main one numbers its refs from ``k`` times a stride
    (10,000, or the next power of ten above the main document's ids): the same id for the same element
    in every observation, however many elements the main page gains or loses.
    """
    matches = [(node, _REF.match(node.ref)) for node in _walk(roots) if node.ref]
    parsed = [(node, match) for node, match in matches if match is not None]
    if not parsed:
        return {}, None
    main_prefix = parsed[0][1].group(1)
    ids: dict[str, int] = {}
    others: list[tuple[str, int, int]] = []  # (ref, its document's number, its own number)
    for node, match in parsed:
        if node.role not in INTERACTIVE_ROLES:
            continue
        if match.group(1) == main_prefix:
            ids[match.group(0)] = int(match.group(2))
        else:
            others.append((match.group(0), _prefix_number(match.group(1)), int(match.group(2))))
    stride = _FRAME_STRIDE
    while ids and max(ids.values()) >= stride:
        stride *= 10
    main_number = _prefix_number(main_prefix)
    documents = sorted({document for _, document, _ in others})
    blocks = {document: document - main_number for document in documents if document > main_number}
    for document in documents:  # a frame older than the main document (none seen so far): after the rest
        blocks.setdefault(document, max(blocks.values(), default=0) + 1)
    ids.update({ref: blocks[document] * stride + n for ref, document, n in others})
    return ids, main_prefix


def _prefix_number(prefix: str | None) -> int:
    """``f3`` -> 3; the first document's refs have no prefix: 0."""
    return int(prefix[1:]) if prefix else 0


# -- names from neighbours ----------------------------------------------------------------------


def _short_text(node: SnapshotNode) -> str:
    """The text a label-like node shows, if short and free of controls; "" otherwise."""
    if node.ref is not None and node.role in INTERACTIVE_ROLES:
        return ""
    if node.role == "text":
        text = node.value or ""
    elif node.children:
        if any(child.role != "text" for child in node.children):
            return ""
        text = " ".join(child.value or "" for child in node.children)
        text = f"{node.name} {text}".strip() if node.name not in text else text
    else:
        text = node.name or node.value or ""
    text = " ".join(text.split())
    return text if len(text) <= _NEIGHBOUR_NAME_LIMIT else ""


def _neighbour_name(node: SnapshotNode, ancestors: Sequence[SnapshotNode]) -> str:
    """A label from beside the control (`ancestors`: its parent first): the text after a checkbox or
    radio (before it for a text field); for a text field first in a wrapper, the text before the
    wrapper (`<div>Email</div><div><input><small>hint</small></div>`: the hint after it is no label);
    for a control alone in a table cell, the cell before it."""
    if not ancestors:
        return ""
    parent = ancestors[0]
    siblings = parent.children
    index = next(i for i, child in enumerate(siblings) if child is node)
    after = siblings[index + 1 : index + 2]
    before = siblings[index - 1 : index] if index else []
    for sibling in (after + before) if node.role in _TOGGLES else before:
        if text := _short_text(sibling):
            return text
    if node.role not in _TOGGLES:
        for text in (_wrapper_label(ancestors) if not index else "", *map(_short_text, after)):
            if text:
                return text
    if len(ancestors) > 1 and parent.role in _CELL_ROLES and len(siblings) == 1:
        cells = ancestors[1].children
        at = next(i for i, cell in enumerate(cells) if cell is parent)
        if at:
            return _short_text(cells[at - 1])
    return ""


def _wrapper_label(ancestors: Sequence[SnapshotNode]) -> str:
    """The short text just before the plain wrappers a control opens (each first in the next; the
    ancestors given, `_WRAPPER_LEVELS` at most): a label the page put in a box of its own. A box with
    a role (a cell, a form, a group) is no wrapper."""
    for wrapper, outer in itertools.pairwise(ancestors):
        if wrapper.role not in _TEXT_ROLES:
            return ""
        at = next(i for i, child in enumerate(outer.children) if child is wrapper)
        if at:
            return _short_text(outer.children[at - 1])
    return ""


def _content_text(node: SnapshotNode) -> str:
    """The text inside a node, its descendants' names included (a heading inside a card names it)."""
    pieces: list[str] = []
    for child in node.children:
        if child.role == "text":
            pieces.append(child.value or "")
        elif child.name:
            pieces.append(child.name)
        else:
            pieces.append(child.value or "")
            pieces.append(_content_text(child))
    return " ".join(" ".join(pieces).split())


def _name_unnamed(nodes: list[SnapshotNode], ancestors: tuple[SnapshotNode, ...] = ()) -> None:
    """Name unnamed controls in place: from the text inside them (the accessible name leaves out
    some content, such as a heading inside a clickable card), else, for form controls, from the
    text beside them (`ancestors`: the nodes' parent first)."""
    for node in nodes:
        if node.ref and not node.name and node.role in INTERACTIVE_ROLES:
            if node.role not in _VALUE_ROLES and node.children:
                node.name = _content_text(node)[:_INLINE_LIMIT]
            elif (node.role in _VALUE_ROLES or node.role in _TOGGLES) and "placeholder" not in node.props:
                node.name = _neighbour_name(node, ancestors)
        _name_unnamed(node.children, (node, *ancestors[:_WRAPPER_LEVELS]))


# -- rendering ----------------------------------------------------------------------------------


class _Renderer:
    def __init__(
        self,
        ids: dict[str, int],
        secrets: Collection[str],
        readonly: Collection[Place],
        editors: Mapping[Place, str],
        main_prefix: str | None,
        unreachable: Collection[Place] = frozenset(),
    ) -> None:
        self.ids = ids
        self.secrets = secrets
        self.readonly = readonly
        self.editors = editors
        self.main_prefix = main_prefix
        """The refs' prefix of the main document (`_assign_ids`): a ref without it is in a frame."""
        self.unreachable = unreachable
        self.lines: list[_Line] = []
        self.elements: dict[int, Element] = {}
        self.rows: dict[int, _RowOf] = {}
        """Each table row's place (`_RowOf`), by the row node's `id()`."""

    # A fragment is one piece of text plus the ids it mentions.

    def _unreachable(self, node: SnapshotNode) -> bool:
        """A control no pointer reaches (`render_page`'s `unreachable`): left out with what it holds."""
        return bool(self.unreachable and node.ref and node.box and self._place(node.ref, node.box) in self.unreachable)

    def _place(self, ref: str, box: _Box) -> Place:
        match = _REF.match(ref)
        return (match is not None and match.group(1) == self.main_prefix, box)

    def _interactive(self, node: SnapshotNode) -> _Fragment:
        ref = node.ref or ""
        element_id = self.ids[ref]
        place: Place | None = self._place(ref, node.box) if node.box is not None else None
        valued = node.role in _VALUE_ROLES and place is not None
        readonly = valued and place in self.readonly
        edited = self.editors.get(place) if valued and place is not None else None
        self.elements[element_id] = Element(
            ref=ref,
            role=node.role,
            name=node.name,
            readonly=readonly,
            editor=edited is not None,
            disabled=_has_state(node, "disabled"),
        )
        parts = [f"[{element_id}] {node.role}"]
        if node.name:
            parts.append(json.dumps(node.name, ensure_ascii=False))
        elif node.role == "link" and "url" in node.props:
            parts.append(f"url={json.dumps(node.props['url'], ensure_ascii=False)}")
        parts.extend(state for state in _STATES if _has_state(node, state))
        if readonly:
            parts.append("readonly")
        options = [child for child in node.children if child.role == "option" and child.ref is None]
        value = node.value
        texts = [child.value or "" for child in node.children if child.role == "text"]
        if value is None and texts and node.role in _VALUE_ROLES:  # a field with a placeholder lists its value as text
            value = " ".join(texts)
        if value is None and options:
            value = next((o.name for o in options if "selected" in o.attrs), None)
        if edited is not None:  # the snapshot shows an editor's lines as bits of text, or not at all
            value = edited if len(edited) <= _EDITOR_LIMIT else edited[:_EDITOR_LIMIT] + "…"
        if value is not None and node.role in _VALUE_ROLES:
            shown = _MASK if value in self.secrets else value
            parts.append(f"value={json.dumps(shown, ensure_ascii=False)}")
        if "placeholder" in node.props:
            parts.append(f"placeholder={json.dumps(node.props['placeholder'], ensure_ascii=False)}")
        if options:
            names = [o.name for o in options[:_MAX_OPTIONS]]
            listed = json.dumps(names, ensure_ascii=False, separators=(",", ":"))
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
        if node.role == "heading" and node.name:
            # A heading as Markdown writes one: "# Shipments", not 'heading "Shipments"' (the
            # quotes and the word are a tenth of a short page's observation).
            return "# " + " ".join(node.name.split())
        text = node.role
        if node.name:
            text += " " + json.dumps(node.name, ensure_ascii=False)
        text += "".join(f" {state}" for state in _STATES if _has_state(node, state))
        if node.value:
            text += f": {node.value}"
        return text

    def _inline(self, node: SnapshotNode, limit: int | None) -> _Inline | None:
        """Render a small subtree as one line, or None when it holds block content or is too long."""
        pieces: list[_Fragment] = []
        used = 0  # the length of the pieces so far joined by spaces, kept as they come (the line is cut at `limit`)
        prose = False
        for child in _visible_children(node):
            if "aria-hidden" in child.attrs and not _has_interactive(child, self._is_interactive):
                continue  # a gutter's line numbers, an icon's glyph: decoration the page hid from assistive technology
            if self._unreachable(child):
                continue
            if self._is_interactive(child):
                if _has_interactive(child, self._is_interactive, below=True):
                    return None  # a control holding controls (a notebook cell and its toolbar): a block
                text, child_ids = self._interactive(child)
            elif child.children and (child.role in _TEXT_ROLES or child.role in _CELL_ROLES):
                inner = self._inline(child, None if limit is None else limit - used)
                if inner is None:
                    return None
                text, child_ids, prose = inner.text, inner.ids, prose or inner.prose
            elif child.role in _TEXT_ROLES or child.role in _CELL_ROLES or child.role == "img":
                text, child_ids = (_img(child) if child.role == "img" else self._label(child)), ()
                prose = prose or bool(text)
            else:
                return None
            if text:
                used += len(text) + bool(pieces)
                pieces.append((text, tuple(child_ids)))
            if limit is not None and used > limit:
                return None
        kept = [piece for index, piece in enumerate(pieces) if piece[1] or not self._repeats_a_name(pieces, index)]
        return _Inline(" ".join(text for text, _ in kept), tuple(i for _, ids in kept for i in ids), prose)

    def _repeats_a_name(self, pieces: Sequence[_Fragment], index: int) -> bool:
        """Whether a text piece of a line only repeats the name of the control right beside it (a field's
        label before it: `Email [4] textbox "Email"`), which that control carries already."""
        key = _label_key(pieces[index][0])
        nearest = [pieces[index - 1][1][-1]] if index and pieces[index - 1][1] else []
        if index + 1 < len(pieces) and pieces[index + 1][1]:
            nearest.append(pieces[index + 1][1][0])
        return any(_label_key(self.elements[i].name) == key for i in nearest)

    def _prose(self, node: SnapshotNode) -> _Inline | None:
        """A subtree as one line when it reads as text; a run of bare controls gets a line each."""
        inline = self._inline(node, _INLINE_LIMIT)
        if inline is None or (len(inline.ids) > 1 and not inline.prose):
            return None
        return inline

    def _emit(
        self,
        text: str,
        node: SnapshotNode,
        box: _Box | None,
        ids: tuple[int, ...] = (),
        cells: tuple[_Cell, ...] | None = None,
        row_of: _RowOf | None = None,
    ) -> None:
        if not text:
            return
        box = node.box or box
        top = box[1] if box else None
        bottom = box[1] + box[3] if box else None
        self.lines.append(_Line(text, top, bottom, tuple(ids), cells, row_of))

    def render(self, node: SnapshotNode, box: _Box | None = None) -> None:
        box = node.box or box
        if self._unreachable(node):
            return
        if node.role in _TABLE_ROLES:
            self._number_rows(node)
        if "aria-hidden" in node.attrs and not self._is_interactive(node):
            for child in node.children:  # hidden from assistive technology: only its controls, if any, count
                self._render_interactive_only(child, box)
        elif node.role == "text":
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
                if node.role in _TEXT_ROLES and any(self.elements[i].name == node.name for i in inline.ids):
                    label = inline.text  # a wrapper named as the control it holds (a toolbar item's title)
                elif inline.text and inline.text != node.name:
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
        if "aria-hidden" in node.attrs:
            return  # an editor's own hidden text area, its gutter: parts of it, not controls of their own
        if self._is_interactive(node):
            self.render(node, box)
            return
        for child in node.children:
            self._render_interactive_only(child, box)

    def _number_rows(self, table: SnapshotNode) -> None:
        """Number the table's rows: header rows (of column headers only) 0, data rows from 1."""
        rows = [node for node in _walk(table.children) if node.role == "row" and id(node) not in self.rows]
        header = [row for row in rows if row.children and all(c.role == "columnheader" for c in row.children)]
        data = [row for row in rows if row not in header]
        key = len({place.table for place in self.rows.values()})
        self.rows.update({id(row): _RowOf(key, 0, len(data)) for row in header})
        self.rows.update({id(row): _RowOf(key, number, len(data)) for number, row in enumerate(data, 1)})

    def _row(self, node: SnapshotNode, box: _Box | None) -> None:
        cells: list[tuple[str, tuple[int, ...]]] = []
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
            cells.append((text, tuple(child_ids)))
            ids.extend(child_ids)
        if not cells and (node.name or node.value):
            cells.append((node.name or node.value or "", ()))
        if cells:
            names = tuple(self.elements[i].name for i in ids if self.elements[i].name)
            row = tuple(_Cell(text, cell_ids, names) for text, cell_ids in cells)
            self._emit(_row_text(row), node, box, tuple(ids), row, self.rows.get(id(node)))

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


def _has_interactive(node: SnapshotNode, is_interactive: Callable[[SnapshotNode], bool], below: bool = False) -> bool:
    """Whether `node` (or, `below`, one of its descendants) is interactive."""
    return any(is_interactive(child) for child in _walk(node.children if below else [node]))


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


def _row_text(cells: tuple[_Cell, ...]) -> str:
    return "| " + " | ".join(cell.text.replace("|", "\\|") for cell in cells) + " |"


_CLAMPS = (None, 24, 12)
"""How far `_shortened` goes, level by level, once a row's cells that only repeat a control's name in the
row are emptied: no clamp, then text-only cells clamped to 24 characters, then to 12 (text lines to ten
times that)."""


def _clamp(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _words(text: str) -> str:
    return f" {' '.join(text.casefold().split())} "


def _shortened(line: _Line, level: int) -> _Line:
    """`line` with its text-only parts shortened to `level` (an index of `_CLAMPS`); its ids are never
    touched."""
    limit = _CLAMPS[level]
    if line.cells is None:
        if line.ids or limit is None or len(line.text) <= limit * 10:
            return line
        return _Line(_clamp(line.text, limit * 10), line.top, line.bottom, line.ids, row_of=line.row_of)
    cells = []
    for cell in line.cells:
        text = cell.text
        if not cell.ids and text.strip():
            repeated = any(_words(text) in _words(name) for name in cell.row_names)
            text = "" if repeated else text if limit is None else _clamp(text, limit)
        cells.append(_Cell(text, cell.ids, cell.row_names))
    row = tuple(cells)
    return _Line(_row_text(row), line.top, line.bottom, line.ids, row, line.row_of)


_LEFT_OUT_NOTE = 70
"""Room kept for the note that says text lines were left out."""


def _on_screen(line: _Line, bottom: float) -> bool:
    """Whether a line (not above the viewport) starts on the screen; a line without a box counts as on it."""
    return line.top is None or line.top < bottom


def _chars(lines: Sequence[_Line]) -> int:
    return sum(len(line.text) + 1 for line in lines)


def _keep_screen_ids(rest: list[_Line], room: int, bottom: float) -> tuple[list[_Line], int]:
    """Make the lines on screen (starting above `bottom`, wherever they are in the page's order: a sidebar
    can follow a long table) fit `room` when some of them hold ids: shorten text-only parts level by
    level, then, if that is not enough, leave out text-only lines on screen, lowest first. Returns the
    lines and how many were left out; lines that fit already are returned as they are."""
    screen = [line for line in rest if _on_screen(line, bottom)]
    if _chars(screen) <= room or not any(line.ids for line in screen):
        return rest, 0
    for level in range(len(_CLAMPS)):
        shortened = [_shortened(line, level) for line in rest]
        if _chars([line for line in shortened if _on_screen(line, bottom)]) <= room:
            return shortened, 0
    excess = _chars([line for line in shortened if _on_screen(line, bottom)]) - (room - _LEFT_OUT_NOTE)
    left_out: set[int] = set()
    for index in range(len(shortened) - 1, -1, -1):
        if excess <= 0:
            break
        line = shortened[index]
        if _on_screen(line, bottom) and not line.ids:
            left_out.add(index)
            excess -= len(line.text) + 1
    return [line for index, line in enumerate(shortened) if index not in left_out], len(left_out)


def _above(line: _Line, top: float) -> bool:
    return line.top is not None and line.bottom is not None and line.top < top and line.bottom <= top


_RUN_NOTE = 110
"""Room kept for each note that says what was left out between kept lines."""


def _run_note(run: Sequence[_Line], where: str) -> str:
    """What a run of left-out lines held: rows a–b of one table, else how many lines and controls."""
    rows = [line.row_of for line in run if line.row_of is not None and line.row_of.number]
    tables = {row.table for row in rows}
    ids = sum(len(line.ids) for line in run)
    if rows and len(tables) == 1 and len(rows) >= len(run) - 1:
        first, last = rows[0], rows[-1]
        return (
            f"(rows {first.number:,}–{last.number:,} of the {first.rows:,} in this table {where}; "
            f"scroll {'down' if where.startswith('below') else 'up'} to read them)"
        )
    controls = f", with {ids} interactive elements," if ids else ""
    return f"({len(run)} lines{controls} {where} left out here; scroll down to see them)"


def _headed(above: list[_Line], rest: list[_Line]) -> list[_Line]:
    """`rest` with, before the first kept row of a table whose first rows are above the screen, that
    table's header row and a note saying which rows are above, so rows read on still have their columns."""
    headers = {line.row_of.table: line for line in above if line.row_of is not None and not line.row_of.number}
    gone: dict[int, list[_Line]] = {}
    for line in above:
        if line.row_of is not None and line.row_of.number:
            gone.setdefault(line.row_of.table, []).append(line)
    out: list[_Line] = []
    for line in rest:
        table = line.row_of.table if line.row_of is not None else None
        if table is not None and table in gone:
            if table in headers:
                out.append(headers.pop(table))
            out.append(_Line(_run_note(gone.pop(table), "above the screen"), None, None))
        out.append(line)
    return out


def _screen_first(rest: list[_Line], room: int, bottom: float) -> tuple[list[_Line], _Line | None, int] | None:
    """Keep every line on screen and, in the page's order, as many lines below the screen as fit beside
    them; where lines below were left out before a line on screen (rows of a long table before a sidebar),
    a note says what they were. Returns the lines, the first line left out, and 0 (no line is cut inside);
    None when the screen's own lines do not fit (`_fit` then cuts the tail)."""
    reserved = _chars([line for line in rest if _on_screen(line, bottom)])
    if reserved > room:
        return None
    for notes in range(len(rest) + 1):  # the room the notes between kept lines need, found by trying
        spare = room - reserved - notes * _RUN_NOTE
        if spare < 0:
            return None
        kept: list[_Line] = []
        run: list[_Line] = []
        first_cut: _Line | None = None
        runs = 0
        for line in rest:
            if _on_screen(line, bottom):
                if run:
                    kept.append(_Line(_run_note(run, "below the screen"), None, None))
                    runs, run = runs + 1, []
                kept.append(line)
            elif first_cut is None and len(line.text) + 1 <= spare:
                kept.append(line)
                spare -= len(line.text) + 1
            else:
                first_cut = first_cut or line
                run.append(line)
        if runs <= notes:
            return kept, first_cut, 0
    return None


def _fit(
    header: list[str], lines: list[_Line], budget: int, top: float, bottom: float | None = None
) -> tuple[list[str], list[_Line], int, float | None]:
    """Keep what fits in `budget`: first drop lines above `top` (the viewport's top, or lower when
    the page cannot scroll further), then, when `bottom` (the viewport's height) is known, keep every
    line on the screen, its controls first (`_keep_screen_ids`), and as much below it as fits
    (`_screen_first`); else, or when the screen alone is too much, cut the tail.

    Also returns where the first line cut from the tail starts, so a scroll can bring it to the top.
    """
    total = sum(len(h) + 1 for h in header) + _chars(lines)
    if total <= budget:
        return header, lines, 0, None
    above = [line for line in lines if _above(line, top)]
    rest = _headed(above, [line for line in lines if not _above(line, top)])
    notes = list(header)
    above_chars = _chars(above)
    if above:
        notes.append(f"({above_chars} characters above the viewport not shown; scroll up to see them)")
    tail_reserve = 100
    room = budget - sum(len(n) + 1 for n in notes) - tail_reserve
    chosen: tuple[list[_Line], _Line | None, int] | None = None
    if bottom is not None:
        rest, left_out = _keep_screen_ids(rest, room, bottom)
        if left_out:
            notes.append(f"({left_out} lines of text on screen left out to show its controls)")
            room -= len(notes[-1]) + 1
        chosen = _screen_first(rest, room, bottom)
    kept, first_cut, partial = chosen if chosen is not None else _cut_tail(rest, room)
    shown_ids = {i for line in kept for i in line.ids}
    hidden = len({i for line in rest for i in line.ids} - shown_ids)
    kept_lines = {id(line) for line in kept}
    cut_below = _chars([line for line in rest if id(line) not in kept_lines]) - partial
    if cut_below:
        if hidden:
            kept.append(_Line(f"({hidden} more interactive elements below)", None, None))
        kept.append(_Line(f"({cut_below} more characters cut; scroll down to see more)", None, None))
    next_top = first_cut.top if first_cut is not None else None
    return notes, kept, above_chars + cut_below, next_top


def _cut_tail(rest: list[_Line], room: int) -> tuple[list[_Line], _Line | None, int]:
    """The lines in the page's order up to `room`, the last one cut inside when a good part of it fits;
    the first line left out (the next with a box, after a line cut inside); and how many characters of
    the line cut inside are shown."""
    kept: list[_Line] = []
    for index, line in enumerate(rest):
        if len(line.text) + 1 > room:
            if room > _MIN_PARTIAL:
                part = line.text[: room - 2] + "…"
                ids = tuple(i for i in line.ids if f"[{i}]" in part)
                kept.append(_Line(part, line.top, line.bottom, ids))
                return kept, next((later for later in rest[index + 1 :] if later.top is not None), None), room - 2
            return kept, line, 0
        kept.append(line)
        room -= len(line.text) + 1
    return kept, None, 0


def _label_key(text: str) -> str:
    """A label as it names a control: case, spacing and a trailing colon or required mark set aside."""
    return " ".join(text.strip().rstrip(":*").split()).casefold()


def _without_repeated_labels(lines: list[_Line], elements: Mapping[int, Element]) -> list[_Line]:
    """Drop a text line that only repeats the name of a control on the line next to it: a field's
    visible label ("Email", then `[4] textbox "Email"`), which the control already carries as its
    name. Every labelled field on a form spends its label twice otherwise."""

    def names(line: _Line | None) -> set[str]:
        if line is None:
            return set()
        return {_label_key(elements[i].name) for i in line.ids if i in elements and elements[i].name}

    kept: list[_Line] = []
    for index, line in enumerate(lines):
        if not line.ids and line.cells is None:
            before = lines[index - 1] if index else None
            after = lines[index + 1] if index + 1 < len(lines) else None
            if _label_key(line.text) in names(before) | names(after):
                continue
        kept.append(line)
    return kept


def render_page(
    title: str,
    snapshot: str,
    budget: int = 6000,
    secrets: Collection[str] = (),
    readonly: Collection[Place] = (),
    reading_top: float = 0.0,
    reports: Sequence[str] = (),
    editors: Mapping[Place, str] | None = None,
    viewport_height: float | None = None,
    unreachable: Collection[Place] = (),
) -> PageText:
    """Render a snapshot as compact page text of at most `budget` characters, headed by the page's `title`.

    The URL is not repeated in the text: it is `Page.url`, and every prompt that shows a page gives it
    on a line of its own (`planner.models.prompts.render_observation`).

    `secrets` are values to mask if they appear as a field's value (the current password inputs'
    contents), so a typed password never reaches a model prompt or the event log. `readonly` are
    the places (`Place`) of read-only text fields (the snapshot does not mark them): such a field shows
    `readonly`, so a model clicks it (it usually opens a picker) rather than typing. `reading_top`
    (viewport pixels) is where reading starts when the budget is short: 0, or lower once the page is
    scrolled to its end and lines on screen were still cut. `reports` (what the page did beside the
    action: a dialog it showed, a file it downloaded) head the text, each in parentheses, never cut.
    `editors` maps the places of rich text and code editors to the text they hold, which the snapshot
    does not show as a value: such a textbox shows it as `value=`, and `Element.editor` says how to type.
    `viewport_height`, when given, lets the budget keep the screen's controls first: their lines
    survive a short budget with the text beside them shortened. `unreachable` are the places of controls
    no pointer reaches (a skip link parked off the page, a widget's 1-pixel focus proxy): left out.
    """
    roots = parse_snapshot(snapshot)
    _name_unnamed(roots)
    secret = frozenset(s for s in secrets if s)
    ids, main_prefix = _assign_ids(roots)
    renderer = _Renderer(ids, secret, frozenset(readonly), editors or {}, main_prefix, frozenset(unreachable))
    for root in roots:
        renderer.render(root)
    header = [f"Title: {title}", *(f"({report})" for report in reports)]
    body = _without_repeated_labels(renderer.lines, renderer.elements)
    header, lines, cut, next_top = _fit(header, body, budget, reading_top, viewport_height)
    shown = {element_id for line in lines for element_id in line.ids}
    text = "\n".join([*header, *(line.text for line in lines)])
    elements = {i: e for i, e in renderer.elements.items() if i in shown}
    return PageText(text=text, elements=elements, cut_chars=cut, next_top=next_top)
