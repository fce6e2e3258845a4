"""What an editor holds and how to replace it, through each editor kind's own API where its page lets one reach it.

A code or rich text editor keeps its text in its own model: the DOM shows only the lines on screen
(CodeMirror 6 and Monaco draw a long document's visible part), hides some of them from assistive
technology (Monaco's lines), and keys typed into it go through the editor's input rules (CodeMirror 5
and Monaco indent a new line; autocompletion may take an Enter). So the agent reads and replaces the
text through the editor where the DOM leads to it: CodeMirror 5 (`.CodeMirror`'s `CodeMirror`),
CodeMirror 6 (`.cm-content`'s view tile, as `EditorView.findFromDOM` finds it), TipTap (`.ProseMirror`'s
`editor`), and, when the page loads them as globals, Monaco (`monaco.editor.getEditors()`) and Quill
(`Quill.find`). ProseMirror alone, a bundled Monaco or Quill and a plain `contenteditable` offer no
such way: they are typed into with the keyboard (`planner.browser.controls`) and read as a person
reads them (their rendered lines without what is hidden from assistive technology).

Facts per library, checked against the real packages (tests/foreign/editors): CodeMirror 5.65,
CodeMirror 6 with @codemirror/view 6.44 (`cmTile`; earlier 6.x: `cmView`), Monaco 0.58 (an EditContext
element takes its keys), ProseMirror 1.44, TipTap 3.35, Quill 2.0.
"""

from __future__ import annotations

__all__ = ["EDITOR_SNIPPET_JS", "EDITOR_TEXT_JS", "SET_EDITOR_TEXT_JS"]

EDITOR_SNIPPET_JS = """
  const textOf = e => {
    if (!e.querySelector('[aria-hidden=true]')) return (e.innerText || '').replace(/\\u00a0/g, ' ');
    return Array.from(e.children, c => (c.getAttribute('aria-hidden') === 'true' ? '' : textOf(c)))
      .filter(t => t.trim()).join('\\n');
  };
  const editorApi = e => {
    const near = selector => (e.matches(selector) ? e : e.querySelector(selector) || e.closest(selector));
    const cm5 = near('.CodeMirror');
    if (cm5 && cm5.CodeMirror && typeof cm5.CodeMirror.setValue === 'function') {
      const cm = cm5.CodeMirror;
      return { get: () => cm.getValue(), set: t => { cm.setValue(t); cm.setCursor(cm.lineCount(), 0); } };
    }
    const content = near('.cm-content');
    const tile = content && (content.cmTile || content.cmView);
    const view = tile && ((tile.root && tile.root.view) || tile.view || (tile.rootView && tile.rootView.view));
    if (view && view.state && typeof view.dispatch === 'function') {
      return {
        get: () => view.state.doc.toString(),
        set: t => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t },
          selection: { anchor: t.length }, userEvent: 'input.type' }),
      };
    }
    const prose = near('.ProseMirror');
    const tiptap = prose && prose.editor && prose.editor.view;
    if (tiptap && tiptap.state.schema.nodes.paragraph) {
      const schema = tiptap.state.schema;
      return {
        get: () => tiptap.state.doc.textBetween(0, tiptap.state.doc.content.size, '\\n'),
        set: t => tiptap.dispatch(tiptap.state.tr.replaceWith(0, tiptap.state.doc.content.size,
          t.split('\\n').map(line => schema.nodes.paragraph.create(null, line ? schema.text(line) : null)))),
      };
    }
    const editors = window.monaco && window.monaco.editor && window.monaco.editor.getEditors
      ? window.monaco.editor.getEditors() : [];
    const monaco = editors.find(m => { const d = m.getContainerDomNode(); return d.contains(e) || e.contains(d); });
    if (monaco && monaco.getModel()) {
      return {
        get: () => monaco.getModel().getValue(),
        set: t => {
          monaco.pushUndoStop();
          monaco.executeEdits('agent', [{ range: monaco.getModel().getFullModelRange(), text: t, forceMoveMarkers: true }]);
          monaco.pushUndoStop();
        },
      };
    }
    const container = near('.ql-container');
    const quill = container && window.Quill && typeof window.Quill.find === 'function' ? window.Quill.find(container) : null;
    if (quill && typeof quill.setText === 'function') {
      return { get: () => quill.getText().replace(/\\n$/, ''), set: t => quill.setText(t, 'user') };
    }
    return null;
  };
  const editorText = e => { const api = editorApi(e); return api ? api.get() : textOf(e); };
"""
"""Page-script helpers: `textOf` (an element's rendered lines without the parts hidden from assistive
technology: a gutter's line numbers, a hidden text area), `editorApi` (the editor around or inside an
element, as `{get, set}`, or null), and `editorText` (its text through the API, else as rendered)."""

EDITOR_TEXT_JS = "e => {" + EDITOR_SNIPPET_JS + "  return editorText(e);\n}"
"""The text the editor marked as a textbox holds now; `type` reads it back to check the text took."""

SET_EDITOR_TEXT_JS = (
    "(e, t) => {"
    + EDITOR_SNIPPET_JS
    + "  const api = editorApi(e);\n  if (!api) return false;\n  api.set(t);\n  return true;\n}"
)
"""Replaces an editor's whole text through its API; false when its page offers none (type it instead)."""
