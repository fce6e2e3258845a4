"""The README stays a front page and the docs stay connected: a moved section must not leave a dead link.

The README is what a newcomer reads first, so it is kept short (the manual, the CLI reference and the
figures live in docs/); every relative link in it and in docs/*.md must reach a file that exists and,
for `file.md#anchor`, a heading of that file as GitHub names it; and every page of docs/ is listed in
the README's map, so none is reachable only by chance. Pure text work: no browser, no server.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAP_HEADING = "The docs"

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed: a `[x](y)` in code is not a link."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        lines.append("" if fenced else _CODE_SPAN.sub("", line))
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text lower-cased, every character but letters, digits,
    marks, `_`, `-` and spaces dropped, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = "".join(c for c in text if c.isalnum() or c in "_- " or unicodedata.category(c).startswith("M"))
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file, repeated headings numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    anchors = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            slug = _slug(match.group(2))
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(path: Path) -> list[str]:
    return [m.group(1) for line in _prose_lines(path.read_text(encoding="utf-8")) for m in _LINK.finditer(line)]


def _broken(path: Path) -> list[str]:
    """The relative links of one file that reach no file, or no heading of it."""
    broken = []
    for target in _links(path):
        if _EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target} (no heading with that anchor in {linked.relative_to(ROOT)})")
    return broken


def test_the_readme_is_a_front_page_under_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; move detail into docs/ and link to it"


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_heading(path: Path) -> None:
    broken = _broken(path)
    assert not broken, f"{path.relative_to(ROOT)} links to what does not exist: {broken}"


def test_every_page_of_docs_is_in_the_readme_map() -> None:
    lines = _prose_lines(README.read_text(encoding="utf-8"))
    start = next((i for i, line in enumerate(lines) if line.strip() == f"## {MAP_HEADING}"), None)
    assert start is not None, f"README.md has no '## {MAP_HEADING}' section listing docs/"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    listed = {
        (ROOT / m.group(1).partition("#")[0]).resolve() for line in lines[start:end] for m in _LINK.finditer(line)
    }
    missing = [str(p.relative_to(ROOT)) for p in DOCS if p.resolve() not in listed]
    assert not missing, f"README.md's map of docs/ leaves out {missing}"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Claude (`--model claude`)", "claude---model-claude"),
        ("Figures: `python -m bench.tokens`", "figures-python--m-benchtokens"),
        ("Sign-in and roles", "sign-in-and-roles"),
        ("The demo: shop, tasks and offline models", "the-demo-shop-tasks-and-offline-models"),
        ("See [the guard](browser.md) *now*", "see-the-guard-now"),
    ],
)
def test_anchors_follow_githubs_rule(heading: str, anchor: str) -> None:
    assert _slug(heading) == anchor
