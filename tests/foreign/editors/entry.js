// The editors that ship as ES modules, bundled by esbuild (build.sh) into one IIFE script, as an app's
// own bundle would hold them: CodeMirror 6, ProseMirror and TipTap. None of them sets a global. The
// page's other editors come from their libraries' own scripts (editors.html): CodeMirror 5 and Quill as
// their UMD builds (window.CodeMirror, window.Quill), Monaco through its AMD loader (window.monaco).
//
// window.__editors holds each instance for the tests' read-back only (bench/foreign_editors.py,
// READ_BACK_JS); an agent's typing code must not use it, since real apps have nothing like it.

import { basicSetup } from "codemirror";
import { EditorView as CMEditorView } from "@codemirror/view";
import { sql } from "@codemirror/lang-sql";

import { EditorState } from "prosemirror-state";
import { EditorView as PMEditorView } from "prosemirror-view";
import { DOMParser as PMDOMParser } from "prosemirror-model";
import { schema } from "prosemirror-schema-basic";
import { exampleSetup } from "prosemirror-example-setup";

import { Editor as TipTapEditor } from "@tiptap/core";
import StarterKit from "@tiptap/starter-kit";

import "prosemirror-view/style/prosemirror.css";
import "prosemirror-menu/style/menu.css";
import "prosemirror-example-setup/style/style.css";

const SQL = "select 1\nfrom dual";

function codemirror5() {
  const textarea = document.getElementById("cm5-source");
  const cm = window.CodeMirror.fromTextArea(textarea, {
    mode: "text/x-sql",
    lineNumbers: true,
    screenReaderLabel: "SQL query (CodeMirror 5)",
  });
  cm.setSize(null, 160);
  return cm;
}

function codemirror6() {
  return new CMEditorView({
    doc: SQL,
    extensions: [
      basicSetup,
      sql(),
      CMEditorView.contentAttributes.of({ "aria-label": "SQL query (CodeMirror 6)" }),
    ],
    parent: document.getElementById("cm6"),
  });
}

function prosemirror() {
  const source = document.getElementById("pm-source");
  const state = EditorState.create({
    doc: PMDOMParser.fromSchema(schema).parse(source),
    plugins: exampleSetup({ schema }),
  });
  source.remove();
  return new PMEditorView(document.getElementById("pm"), {
    state,
    attributes: { "aria-label": "Release notes (ProseMirror)" },
  });
}

function tiptap() {
  return new TipTapEditor({
    element: document.getElementById("tiptap"),
    extensions: [StarterKit],
    content: "<p>Meeting notes from Monday.</p><p>Ship the parser before Friday.</p>",
    editorProps: { attributes: { "aria-label": "Meeting notes (TipTap)" } },
  });
}

function quill() {
  const editor = new window.Quill("#quill", {
    theme: "snow",
    placeholder: "Write a comment…",
    modules: { toolbar: [["bold", "italic", "underline"], [{ list: "ordered" }, { list: "bullet" }], ["link"]] },
  });
  editor.root.setAttribute("aria-label", "Comment (Quill)");
  return editor;
}

window.__editors = {
  codemirror5: codemirror5(),
  codemirror6: codemirror6(),
  prosemirror: prosemirror(),
  tiptap: tiptap(),
  quill: quill(),
};
