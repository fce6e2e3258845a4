"""Safe display of untrusted text (task, node, page and model text) as Markdown: one rule for the
console and the Markdown report."""

from __future__ import annotations

import re

__all__ = ["md", "md_line", "short"]

_MD_INLINE = re.compile(r"([\\`*_{}\[\]()<>#|~!&$])")
"""Characters that start emphasis, code, links, images, HTML, table cells, strikethrough or (in
Streamlit) math; a backslash before ASCII punctuation always renders the character itself."""
_MD_BLOCK_START = re.compile(r"^(?:[-+=]|\d+\.(?=\s|$))")
"""What would open a list, a rule, a heading underline or a numbered list at the start of a line."""


def short(text: str, limit: int = 80) -> str:
    """One line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape(line: str) -> str:
    escaped = _MD_INLINE.sub(r"\\\1", line)
    return _MD_BLOCK_START.sub(lambda match: match.group()[:-1] + "\\" + match.group()[-1], escaped)


def md_line(text: object, limit: int = 10_000) -> str:
    """Untrusted text as inert inline Markdown on one line: `<img src=x onerror=...>` stays characters."""
    return _escape(short(str(text), limit))


def md(text: object) -> str:
    """Untrusted text as inert Markdown, keeping its line breaks."""
    return "  \n".join(_escape(line) for line in str(text).splitlines())
