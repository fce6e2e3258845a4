"""One report you can send: `python -m sessions report ID --out FILE`, written by the file's extension.

`.html` is one self-contained page that opens offline in any browser: the tree as an inline SVG
outline, one row per node labelled with its status and description, as wide as the window (a bigger
tree grows down, never sideways), coloured by status, with failures and operator-made nodes marked;
a timeline slider that redraws the tree as of any event; each node's action, observation summary,
model calls and screenshot (downscaled, inlined); the operator's interventions; the paper's metrics
and the diagnosis. No request leaves it: the styles and the script are written here and inlined,
images are data URLs, and a Content-Security-Policy forbids every other source. All text is
escaped: server-side with `html.escape`, and the session's data travels as JSON the script reads
with `JSON.parse` and puts on the page only as text nodes (`textContent`), never as markup.

`.md`, `.svg`, `.dot` and `.json` (the trace) are the exports of `sessions.client.export`; `.graphml` is
the final tree for graph tools, written by networkx.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import networkx as nx

from planner.events import (
    ActionExecuted,
    CommandApplied,
    CommandRejected,
    Event,
    ModelCalled,
    Observed,
)
from planner.metrics import SessionMetrics, session_metrics, tree_graph
from planner.state import SessionState, apply
from planner.tree import Node
from sessions.client.export import markdown_report, trace_json, tree_dot, tree_svg
from sessions.client.verdict import judged_line, standing
from sessions.errors import SessionInputError
from sessions.store import EventStore
from sessions.store.artifacts import ArtifactStore, LocalArtifacts
from sessions.store.reading import load_events

__all__ = ["FORMATS", "html_report", "report_command", "tree_graphml", "write_report"]

_SHOT_WIDTH = 640
"""Screenshots are downscaled to this width (JPEG) before they are inlined."""
_SHOT_BUDGET = 3_000_000
"""Bytes of inlined screenshots at most; past it, later screenshots are left out (and the page says so)."""
_PROMPT_CHARS = 4_000
"""Characters of a model call's prompt and answer kept in the page."""


def write_report(store: EventStore, session_id: str, path: Path | str, artifacts: ArtifactStore | None = None) -> Path:
    """Write the session's report to `path`, in the format its extension names; returns the path.
    The HTML report reads its screenshots from `artifacts` (see `html_report`)."""
    target = Path(path)
    render = FORMATS.get(target.suffix.lower())
    if render is None:
        raise SessionInputError(
            f"cannot write a report as '{target.suffix or target.name}'; use one of {', '.join(sorted(FORMATS))}"
        )
    events = load_events(store, session_id)
    state = SessionState()
    for event in events:
        apply(state, event)
    content = (
        html_report(session_id, state, events, artifacts)
        if render is html_report
        else render(session_id, state, events)
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    return target


def report_command(
    store: EventStore, session_id: str, out: str, artifacts: ArtifactStore | None = None
) -> tuple[str, int]:
    """The CLI's `report`: (the last stdout line, exit code 0)."""
    written = write_report(store, session_id, out, artifacts)
    return json.dumps({"session_id": session_id, "out": str(written), "bytes": written.stat().st_size}), 0


def tree_graphml(session_id: str, state: SessionState, events: list[Event]) -> str:
    """The final tree as GraphML: each node's type, status, origin, description, action and reason."""
    graph = nx.DiGraph(session=session_id, task=state.task)
    for node_id, data in tree_graph(state.tree).nodes(data=True):
        node = cast(Node, data["node"])
        graph.add_node(
            node_id,
            type=node.type.value,
            status=node.status.value,
            origin=node.origin.value,
            description=node.description,
            action=node.action or "",
            reason=node.reason or "",
        )
        if node.parent is not None:
            graph.add_edge(node.parent, node_id)
    return "\n".join(nx.generate_graphml(graph))


# -- HTML -------------------------------------------------------------------------------------------


def html_report(
    session_id: str, state: SessionState, events: list[Event], artifacts: ArtifactStore | None = None
) -> str:
    """The self-contained HTML report (see the module docstring). Screenshots are read through
    `artifacts`; without it, the recorded paths are read as files here (as `LocalArtifacts` reads them)."""
    data = {"frames": _frames(events), "details": _details(events, artifacts or LocalArtifacts(Path.cwd()))}
    # `<`, `>` and `&` as JSON escapes: the data can never close its script element or open markup.
    payload = (
        json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    )
    metrics = session_metrics(state, events)
    e = html.escape
    title = f"Run report: {session_id}"
    return _PAGE.format(
        title=e(title),
        css=_CSS,
        js=_JS,
        data=payload,
        header=_header(session_id, state, events),
        metrics=_metrics_table(metrics),
        diagnosis=_diagnosis(state),
        interventions=_interventions(events),
        last=len(events) - 1,
    )


def _frames(events: list[Event]) -> list[dict[str, Any]]:
    """Per event: what changed in the tree (new or changed node fields, by node id) and a one-line label.

    The script rebuilds the tree at event k by applying frames 0..k, so the slider needs no server.
    """
    state = SessionState()
    seen: dict[str, dict[str, Any]] = {}
    frames = []
    for event in events:
        apply(state, event)
        changes = {}
        for node in state.tree.walk():
            now = {
                "p": node.parent,
                "t": node.type.value,
                "s": node.status.value,
                "d": node.description,
                "a": node.action,
                "o": node.origin.value,
                "r": node.reason,
                "k": list(node.children),
                "f": node.id in state.failed,
                "e": node.edited,
            }
            before = seen.get(node.id, {})
            delta = {key: value for key, value in now.items() if before.get(key) != value}
            if delta:
                changes[node.id] = delta
                seen[node.id] = now
        label = f"{event.seq} {event.kind.value}" + (f" at {event.node_id}" if event.node_id else "")
        frames.append({"seq": event.seq, "label": label, "c": changes})
    return frames


def _details(events: list[Event], artifacts: ArtifactStore) -> dict[str, dict[str, Any]]:
    """Per node: its actions (outcome, page, screenshot), observation summaries and model calls."""
    details: dict[str, dict[str, Any]] = {}
    budget = _SHOT_BUDGET
    for event in events:
        if event.node_id is None:
            continue
        entry = details.setdefault(event.node_id, {"runs": [], "seen": [], "calls": []})
        payload = event.payload
        if isinstance(payload, ActionExecuted):
            shot = _inline_shot(artifacts, payload.screenshot, budget)
            budget -= len(shot or "")
            entry["runs"].append(
                {
                    "seq": event.seq,
                    "action": payload.action,
                    "ok": payload.ok,
                    "error": payload.error,
                    "url": payload.url,
                    "shot": shot,
                }
            )
        elif isinstance(payload, Observed):
            entry["seen"].append({"seq": event.seq, "summary": payload.summary, "notes": payload.notes})
        elif isinstance(payload, ModelCalled):
            usage = payload.usage
            entry["calls"].append(
                {
                    "seq": event.seq,
                    "op": payload.question.value,
                    "ok": payload.ok,
                    "error": payload.error,
                    "tokens": f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out",
                    "ms": payload.latency_ms,
                    "prompt": (payload.prompt or "")[:_PROMPT_CHARS],
                    "raw": (payload.raw or "")[:_PROMPT_CHARS],
                }
            )
    return details


def _inline_shot(artifacts: ArtifactStore, path: str | None, budget: int) -> str | None:
    """A screenshot as a downscaled JPEG data URL, or None (no file, no Pillow, or over the budget)."""
    if not path or budget <= 0 or not artifacts.exists(path):
        return None
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(artifacts.read(path))) as opened:
            image = opened.convert("RGB")
            if image.width > _SHOT_WIDTH:
                image = image.resize((_SHOT_WIDTH, round(image.height * _SHOT_WIDTH / image.width)))
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=60)
    except OSError:
        return None
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    return url if len(url) <= budget else None


def _header(session_id: str, state: SessionState, events: list[Event]) -> str:
    e = html.escape
    status = standing(state.status.value, state.cause.value if state.cause else None)
    judged = [("Answer judged", judged_line(state.answer_verdict))] if state.answer_verdict else []
    rows = [
        ("Session", session_id),
        ("Task", state.task),
        ("Status", status + (f": {state.reason}" if state.reason else "")),
        ("Final answer", state.final_answer or "(none)"),
        *judged,
        ("Model", state.model or "(unknown)"),
        ("Started by", state.started_by or "(not known)"),
        ("Start URL", state.start_url or "(none)"),
        ("Constraints", "; ".join(state.constraints or []) or "(none recorded)"),
        ("Events", str(len(events))),
    ]
    return "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)


def _metrics_table(metrics: SessionMetrics) -> str:
    e = html.escape
    cells = []
    for name, value in metrics.model_dump().items():
        shown = "–" if value is None else (f"{value:.0%}" if isinstance(value, float) else str(value))
        cells.append(f"<tr><th>{e(name.replace('_', ' '))}</th><td>{e(shown)}</td></tr>")
    return "".join(cells)


def _diagnosis(state: SessionState) -> str:
    e = html.escape
    stored = state.diagnosis
    if stored is None:
        return "<p>No diagnosis. Run <code>python -m sessions diagnose ID</code> to add one.</p>"
    if stored.diagnosis is None:
        return f"<p class='bad'>The diagnosis by {e(stored.model)} failed: {e(stored.error or '')}</p>"
    d = stored.diagnosis
    steps = "".join(
        f"<tr><td>{s.step_number}</td><td><a href='#' class='goto' data-node='{e(s.node_id or '')}'>"
        f"{e(s.node_id or '–')}</a></td><td>{e(s.what_happened)}</td><td>{e(s.what_went_wrong)}</td></tr>"
        for s in d.critical_steps
    )
    return (
        f"<p><b>Root cause:</b> {e(d.root_cause)}</p>"
        f"<p><b>Category:</b> {e(d.failure_category.value)} · <b>Confidence:</b> {d.confidence} of 5 · "
        f"<b>By:</b> {e(stored.model)}</p>"
        f"<p><b>What should have been done:</b> {e(d.what_should_have_been_done)}</p>"
        "<table><tr><th>Step</th><th>Node</th><th>What happened</th><th>What went wrong</th></tr>"
        f"{steps}</table>"
    )


def _interventions(events: list[Event]) -> str:
    e = html.escape
    rows = []
    for event in events:
        payload = event.payload
        if isinstance(payload, CommandApplied | CommandRejected):
            result = "applied" if isinstance(payload, CommandApplied) else f"rejected: {payload.reason}"
            detail = json.dumps(
                {k: v for k, v in payload.command.items() if k not in ("kind", "by")}, ensure_ascii=False
            )
            rows.append(
                f"<tr><td>{event.seq}</td><td>{e(payload.by or '–')}</td>"
                f"<td>{e(str(payload.command.get('kind', '?')))}</td><td>{e(result)}</td><td>{e(detail)}</td></tr>"
            )
    if not rows:
        return "<p>None.</p>"
    header = "<tr><th>Event</th><th>By</th><th>Command</th><th>Result</th><th>Detail</th></tr>"
    return "<table>" + header + "".join(rows) + "</table>"


FORMATS: dict[str, Callable[[str, SessionState, list[Event]], str | bytes]] = {
    ".html": html_report,
    ".md": markdown_report,
    ".json": trace_json,
    ".dot": lambda session_id, state, events: tree_dot(state),
    ".svg": lambda session_id, state, events: tree_svg(state),
    ".graphml": tree_graphml,
}
"""What each extension writes."""


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}
header,section{padding:8px 16px}
h1{font-size:20px;margin:8px 0;overflow-wrap:anywhere}h2{font-size:16px;margin:12px 0 6px}
table{border-collapse:collapse;margin:4px 0;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}
th{background:#f5f5f5;font-weight:600}
#main{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
#chart{flex:2 1 420px;min-width:0;overflow:hidden auto;border:1px solid #ddd;max-height:70vh}
#chart svg{display:block;width:100%}
#detail{flex:1 1 280px;min-width:0;max-height:70vh;overflow:auto;border:1px solid #ddd;padding:6px;overflow-wrap:anywhere}
#timeline{display:flex;flex-wrap:wrap;gap:8px;align-items:center}#slider{flex:1 1 160px;min-width:0}
.node{cursor:pointer}.node text{font-size:12px}.node .st{font-weight:600}.node .desc{fill:#444}
.row{fill:transparent}.node:hover .row{fill:#f2f5f9}.node.selected .row{fill:#e6ecf5}
.s-SUCCESS{fill:#4caf50}.s-FAIL{fill:#e53935}.s-VISITED{fill:#42a5f5}.s-UNVISITED{fill:#bdbdbd}
.s-PRUNED,.s-DELETED{fill:#eeeeee}
.shape{stroke:#777;stroke-width:1}
.node.failed .shape{stroke:#b71c1c;stroke-width:2.5}
.node.operator .shape{stroke:#7b1fa2;stroke-width:2.5;stroke-dasharray:3 2}
.node.selected .shape{stroke:#000;stroke-width:2.5}
.edge{stroke:#999;fill:none}.edge.removed{stroke-dasharray:4 3}
.bad{color:#b71c1c}.legend span{margin-right:12px}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;border:1px solid #eee;padding:4px;max-height:240px;overflow:auto}
img{max-width:100%;border:1px solid #ccc}
"""

_JS = r"""
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const NS = "http://www.w3.org/2000/svg";
const slider = document.getElementById("slider");
let selected = null;

function el(tag, attrs, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function treeAt(k) {
  const nodes = {};
  for (let i = 0; i <= k; i++) {
    for (const [id, change] of Object.entries(D.frames[i].c)) nodes[id] = Object.assign(nodes[id] || {id: id}, change);
  }
  return nodes;
}

const ROW = 24, INDENT = 22, PAD = 10, R = 8, GAP = 6;
// The tree as an outline: each node on its own row in plan order, indented by its depth, so the
// chart is as wide as the window and a bigger tree only grows down.

function short(text, limit) {
  const line = String(text || "").split(/\s+/).filter(Boolean).join(" ");
  return line.length <= limit ? line : line.slice(0, limit - 1) + "…";
}

function layout(nodes) {
  const rows = [];
  function place(id, depth) {
    rows.push({id: id, depth: depth});
    for (const c of nodes[id].k || []) if (nodes[c]) place(c, depth + 1);
  }
  if (nodes["0"]) place("0", 0);
  return rows;
}

function shape(node, x, y) {
  const r = R, cls = "shape s-" + node.s;
  if (node.t === "AND") return el("svg:rect", {x: x - r, y: y - r, width: 2 * r, height: 2 * r, class: cls});
  if (node.t === "OR") return el("svg:polygon", {points: `${x},${y - r - 2} ${x + r + 2},${y} ${x},${y + r + 2} ${x - r - 2},${y}`, class: cls});
  if (node.t === "ACTION") return el("svg:circle", {cx: x, cy: y, r: r, class: cls});
  return el("svg:polygon", {points: `${x},${y - r} ${x + r},${y + r} ${x - r},${y + r}`, class: cls});
}

function label(node, id, x, y) {
  let mark = node.f ? " ✗" : "";
  if (node.o === "operator" || node.e) mark += " ✎";
  else if (node.o === "repair") mark += " ↻";
  const text = el("svg:text", {x: x, y: y + 4});
  text.appendChild(el("svg:tspan", {class: "id"}, id + mark + " "));
  text.appendChild(el("svg:tspan", {class: "st"}, node.s));
  const words = short(node.d, 80);
  text.appendChild(el("svg:tspan", {class: "desc"}, words ? " · " + words : ""));
  return text;
}

function fit(svg, labels) {
  // Cut each description that would run past the chart's right edge. A pass measures every label
  // before it changes any, so it costs one layout whatever the size of the tree.
  const right = svg.getBoundingClientRect().width - PAD;
  for (let pass = 0; pass < 4; pass++) {
    const over = [];
    for (const t of labels) {
      const width = t.getComputedTextLength(), excess = Number(t.getAttribute("x")) + width - right;
      if (excess > 0 && t.lastChild.textContent.length > 4) over.push([t, excess, width]);
    }
    if (!over.length) return;
    for (const [t, excess, width] of over) {
      const desc = t.lastChild, words = desc.textContent.replace(/…$/, "");
      const perChar = Math.max(1, width / Math.max(1, t.textContent.length));
      desc.textContent = words.slice(0, Math.max(3, words.length - Math.ceil(excess / perChar) - 1)) + "…";
    }
  }
}

function draw(k) {
  const nodes = treeAt(k);
  const rows = layout(nodes);
  const pos = {};
  rows.forEach((row, i) => { pos[row.id] = [PAD + R + 2 + row.depth * INDENT, PAD + R + i * ROW]; });
  const svg = el("svg:svg", {id: "tree", width: "100%", height: rows.length * ROW + 2 * PAD});
  for (const {id} of rows) {
    const p = nodes[id].p;
    if (p && pos[p]) {
      const [x1, y1] = pos[p], [x2, y2] = pos[id];
      const removed = nodes[id].s === "PRUNED" || nodes[id].s === "DELETED";
      svg.appendChild(el("svg:path", {d: `M${x1},${y1 + R} V${y2} H${x2 - R - 2}`, class: "edge" + (removed ? " removed" : "")}));
    }
  }
  const labels = [];
  for (const {id} of rows) {
    const node = nodes[id];
    const [x, y] = pos[id];
    const classes = ["node"];
    if (node.f) classes.push("failed");
    if (node.o === "operator" || node.e) classes.push("operator");
    if (id === selected) classes.push("selected");
    const g = el("svg:g", {class: classes.join(" "), "data-id": id, "data-status": node.s, "data-failed": node.f ? "1" : "0",
                           "data-origin": node.o});
    g.appendChild(el("svg:title", {}, `${id} ${node.t} ${node.s}: ${node.d}` + (node.r ? ` (${node.r})` : "")));
    g.appendChild(el("svg:rect", {x: 0, y: y - ROW / 2, width: "100%", height: ROW, class: "row"}));
    g.appendChild(shape(node, x, y));
    labels.push(g.appendChild(label(node, id, x + R + 2 + GAP, y)));
    g.addEventListener("click", () => { selected = id; draw(Number(slider.value)); showDetail(nodes, id); });
    svg.appendChild(g);
  }
  const chart = document.getElementById("chart");
  chart.replaceChildren(svg);
  fit(svg, labels);
  document.getElementById("event-label").textContent = D.frames[k].label;
  if (selected && nodes[selected]) showDetail(nodes, selected);
}

function add(parent, tag, text, attrs) { const node = el(tag, attrs, text); parent.appendChild(node); return node; }

function showDetail(nodes, id) {
  const box = document.getElementById("detail");
  box.replaceChildren();
  const node = nodes[id];
  add(box, "h2", `${id} · ${node.t} · ${node.s}`);
  add(box, "p", node.d);
  add(box, "p", "origin: " + node.o + (node.e ? " (operator-edited)" : ""));
  if (node.a) add(box, "p", "action: " + node.a);
  if (node.f) add(box, "p", "FAILED during the run" + (node.r ? ": " + node.r : ""), {class: "bad"});
  else if (node.r) add(box, "p", "reason: " + node.r);
  const info = D.details[id] || {runs: [], seen: [], calls: []};
  for (const run of info.runs) {
    add(box, "h3", `ran at event ${run.seq}: ${run.ok ? "ok" : "FAILED"}`);
    add(box, "p", run.action + (run.error ? " — " + run.error : ""), {class: run.ok ? "" : "bad"});
    if (run.url) add(box, "p", "page: " + run.url);
    if (run.shot) add(box, "img", undefined, {src: run.shot, alt: "screenshot after " + run.action});
  }
  for (const seen of info.seen) {
    add(box, "h3", `observed at event ${seen.seq}`);
    add(box, "p", seen.summary);
    for (const note of seen.notes) add(box, "p", "note: " + note);
  }
  for (const call of info.calls) {
    const d = add(box, "details");
    add(d, "summary", `model call ${call.op} at event ${call.seq}: ${call.ok ? "ok" : "failed"}, ${call.tokens}, ${call.ms} ms`);
    if (call.error) add(d, "p", call.error, {class: "bad"});
    add(d, "pre", call.prompt);
    add(d, "pre", call.raw);
  }
}

slider.addEventListener("input", () => draw(Number(slider.value)));
let redraw = 0;
window.addEventListener("resize", () => {
  cancelAnimationFrame(redraw);
  redraw = requestAnimationFrame(() => draw(Number(slider.value)));
});
for (const link of document.querySelectorAll("a.goto")) {
  link.addEventListener("click", event => {
    event.preventDefault();
    selected = link.getAttribute("data-node");
    slider.value = slider.max;
    draw(Number(slider.max));
  });
}
draw(Number(slider.value));
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{title}</title><style>{css}</style></head>
<body>
<header><h1>{title}</h1><table>{header}</table></header>
<section><h2>Tree</h2>
<p class="legend"><span>■ AND</span><span>◆ OR</span><span>● action</span><span>▲ not expanded</span>
<span>✗ failed</span><span>✎ operator-made or edited</span><span>↻ made by repair</span></p>
<div id="timeline"><label for="slider">Event</label>
<input id="slider" type="range" min="0" max="{last}" value="{last}"><span id="event-label"></span></div>
<div id="main"><div id="chart"></div><div id="detail"><p>Click a node to see its action, observation and model calls.</p></div></div>
</section>
<section><h2>Diagnosis</h2>{diagnosis}</section>
<section><h2>Metrics</h2><table>{metrics}</table></section>
<section><h2>Operator interventions</h2>{interventions}</section>
<script type="application/json" id="data">{data}</script>
<script>{js}</script>
</body></html>
"""
