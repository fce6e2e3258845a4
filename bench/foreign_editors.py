"""The editors page: every rich or code editor kind the browser agent must type into, served locally.

Real apps edit text in CodeMirror, Monaco, ProseMirror, TipTap and Quill, none of which is a form field:
typing into them goes through each library's own input handling, and appending where the task meant
replacing is the usual failure. `tests/foreign/editors/build.sh` (`make foreign`) builds the page from
the real npm packages; this module serves it and reads each editor back through the editor's own API.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["EDITOR_KINDS", "READ_BACK_JS", "EditorsPageMissing", "serve_editors"]

EDITOR_KINDS: tuple[str, ...] = (
    "codemirror5",
    "codemirror6",
    "monaco",
    "prosemirror",
    "tiptap",
    "quill",
    "contenteditable",
)

_DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "var" / "foreign" / "editors"
_PAGE = "editors.html"

# Each editor's text through its own API, from the instances the page keeps for the tests alone
# (window.__editors). Block editors join their paragraphs with one "\n"; Quill's final "\n" is dropped.
READ_BACK_JS = """() => {
  const e = window.__editors;
  const pm = (doc) => doc.textBetween(0, doc.content.size, "\\n");
  return {
    codemirror5: e.codemirror5.getValue(),
    codemirror6: e.codemirror6.state.doc.toString(),
    monaco: e.monaco.getModel().getValue(),
    prosemirror: pm(e.prosemirror.state.doc),
    tiptap: e.tiptap.getText({ blockSeparator: "\\n" }),
    quill: e.quill.getText().replace(/\\n$/, ""),
    contenteditable: document.getElementById("plain").innerText,
  };
}"""


class EditorsPageMissing(Exception):
    """The editors page is not built; run `make foreign`."""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_editors(root: Path | None = None) -> Iterator[str]:
    """Serve the built page on 127.0.0.1 at an ephemeral port; yields the page's URL."""
    directory = _DEFAULT_ROOT if root is None else root
    if not (directory / _PAGE).is_file():
        raise EditorsPageMissing(f"no {_PAGE} in {directory}; run `make foreign`")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(directory)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="editors-page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{_PAGE}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
