"""Safe display of untrusted text (task, node, page, model and operator text) as Markdown: the one
rule for the console (`ui/`) and the reports (`sessions.client.export`, `sessions.client.report`).

Where an API shows plain text (`st.text`, `st.code`, dataframes, selectbox options) the console uses
it instead. Everything else Streamlit renders as Markdown, widget labels, expander titles, image
captions and alerts included, so text headed there goes through `md` or `md_line`. The rule has to
stop more than CommonMark: Streamlit adds GFM (tables, strikethrough, literal links), math, colour
and icon directives, and rewrites some words after parsing. What a reader sees stays the same
characters; the only trace is an invisible word joiner inside URLs, `www.`, `@` and `:name`.

A URL a report shows as such (the start URL, the page a step ran on) goes through `md_url` instead:
a code span, inside which Markdown neither links nor interprets anything, so it needs no escape and
no word joiner and copies out intact. URLs inside other text stay that text's, escaped.
"""

from __future__ import annotations

import re

__all__ = ["md", "md_line", "md_url", "short"]

_MD_INLINE = re.compile(r"[\\`*\[\]<>#|~$]|&(?=#|[A-Za-z0-9]+;)|_+")
"""What starts code, emphasis, links and images, HTML, headings, table cells, strikethrough, math or an
entity (`&amp;`, not the `&` of `?a=1&b=2`). A backslash before ASCII punctuation renders the
character itself. `(`, `)`, `!`, `{`, `}` need none once `[`, `]` and `<` are escaped, and an
underscore run inside a word (`min_price`) can neither open nor close emphasis in CommonMark, so
those stay as they are: a reader of the raw Markdown report sees the text, not a thicket of escapes."""
_MD_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+[.)](?=\s|$))")
"""What would open a list, a rule, a heading underline or a numbered list at the start of a line."""

_WJ = "\u2060"
"""WORD JOINER: invisible, zero width, and not a character any of the syntaxes below accepts."""
_JOIN_AT = re.compile(r"(?<=:)(?=[\w/])|(?i:(?<=www)(?=\.))|(?=@)")
"""Where Markdown turns plain words into something else, in places backslash escapes cannot reach:
GFM links bare `http://...`, `www.example.com` and `name@example.com` in the text *after* parsing,
Streamlit reads `:name[...]` and `:name` as directives (colour, help icon, small...), rewrites
`:material/` in the raw source and swaps `:material_icon:` and `:streamlit:` in the parsed text for
icons. A word joiner after the colon, inside `www.` and before `@` breaks every one of them."""
_ARROWS = re.compile(r"(?<!\S)(?:<->|->|<-|--|>=|<=|~=)(?!\S)")
"""Streamlit turns these words into arrows, a dash and (in)equality signs; a word joiner keeps them."""
_NOT_IN_CODE = re.compile(r"[|\s]|(?i::material/)")
"""What a code span cannot show as it is: `|` still ends a GFM table cell inside one, whitespace is no
part of a URL (and a line break in a list or table ends it), and Streamlit rewrites `:material/` in
the raw source, code included."""


def short(text: str, limit: int = 80) -> str:
    """One line, cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape_match(match: re.Match[str], line: str) -> str:
    """A backslash before each escaped character; an underscore run between two letters or digits stays."""
    text = match.group()
    if text[0] == "_":
        start, end = match.span()
        if 0 < start and end < len(line) and _WORD.match(line[start - 1]) and _WORD.match(line[end]):
            return text
    return "".join("\\" + char for char in text)


_WORD = re.compile(r"[^\W_]")
"""A letter or digit (any script): what sits on both sides of an underscore that cannot be emphasis."""


def _escape(line: str) -> str:
    line = _JOIN_AT.sub(_WJ, _ARROWS.sub(lambda m: m.group()[0] + _WJ + m.group()[1:], line))
    escaped = _MD_INLINE.sub(lambda m: _escape_match(m, line), line)
    return _MD_BLOCK_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], escaped)


def md_line(text: object, limit: int = 10_000) -> str:
    """Untrusted text as inert inline Markdown on one line: `<img src=x onerror=...>` stays characters."""
    return _escape(short(str(text), limit))


def md_url(url: object, limit: int = 2_000) -> str:
    """A URL as an inline code span, shown and copied exactly as it is, anywhere inline text goes (a
    table cell included): its fence is one backtick longer than any run inside, and a space pads a URL
    that starts or ends with a backtick (CommonMark strips one from each side). A URL a code span cannot
    hold as it is (`_NOT_IN_CODE`), or an empty one, is escaped text like any other (`md_line`)."""
    text = str(url)
    if not text or _NOT_IN_CODE.search(text) or len(text) > limit:
        return md_line(text, limit)
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md(text: object) -> str:
    """Untrusted text as inert Markdown, keeping its line breaks."""
    return "  \n".join(_escape(line) for line in str(text).splitlines())
