"""Safe display of untrusted text (task, node, page and model text) in Streamlit markdown."""

from __future__ import annotations

import re

__all__ = ["md", "short"]

_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]<>#|~$])")
"""Enough to stop emphasis, code, links, images, HTML, headings, tables and LaTeX; parentheses only
form a link after a `]`, which is escaped."""


def md(text: object) -> str:
    """Escape every Markdown- and HTML-active character, so `<img src=x onerror=...>` shows as text."""
    return _MARKDOWN_ACTIVE.sub(r"\\\1", str(text)).replace("\n", "  \n")


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
