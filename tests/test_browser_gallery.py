"""The observation and action layer on pages built like the real web: the gallery in tests/pages.

One page per hard case (`gallery_*.html`): clickables without a role (a delegated handler's among
them), rich editors, read-only and custom inputs, controls without an accessible name, a long dense
table, web components, frames, downloads, new tabs, a hover menu (dialogs: test_browser_dialogs.py).
Every element an agent should reach carries `data-g="its name"`, and the pages' `gallery.js` records
which `data-g` element really received each event, so a test can check that an id acted on the
element the observation named. `python -m bench.browser` prints the same measurements as figures.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.browser import GALLERY, HOVERED, Shown, find, hits, shown_elements, targets
from planner.actions import Hover, parse_action
from planner.browser.chromium import find_chromium
from planner.browser.environment import BrowserEnvironment
from planner.browser.observation import render_page
from planner.guard import GuardRules, make_guard
from planner.protocols import ElementInfo, Page

_needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed")


def browser_test(test: Callable[..., None]) -> Callable[..., None]:
    """Runs in real Chromium: marked `browser`, skipped where no Chromium is installed."""
    return pytest.mark.browser(_needs_chromium(test))


@pytest.fixture(scope="module")
def env(gallery_site: str) -> Iterator[BrowserEnvironment]:
    with BrowserEnvironment(f"{gallery_site}/gallery_clickables.html") as environment:
        environment.start()
        yield environment


def open_page(env: BrowserEnvironment, gallery_site: str, name: str) -> Page:
    result = env.goto(f"{gallery_site}/{name}.html")
    assert result.ok and result.page is not None, result.error
    return result.page


def element(page: Page | None, name: str) -> Shown:
    assert page is not None
    shown = find(page.text, name)
    assert shown is not None, f"no element named {name!r} in the observation:\n{page.text}"
    return shown


def visible_targets(env: BrowserEnvironment) -> list[str]:
    return [str(t["g"]) for t in targets(env) if t["visible"]]


# -- pure: the observation format ---------------------------------------------------------------


def test_unnamed_controls_are_named_from_the_text_beside_or_inside_them() -> None:
    snapshot = """\
- paragraph [ref=e1]:
  - checkbox [ref=e2] [box=0,0,10,10]
  - text: Remember me
- row [ref=e3]:
  - cell "Username" [ref=e4]
  - cell [ref=e5]:
    - textbox [ref=e6] [box=0,20,100,20]
- button [ref=e7]:
  - heading "Blue mug" [level=3] [ref=e8]
  - text: $12
- generic [ref=e9]:
  - generic [ref=e10]: Email
  - generic [ref=e11]:
    - textbox [ref=e12] [box=0,40,100,20]
    - text: We never share it.
"""
    observation = render_page("X", snapshot)
    lines = observation.text.splitlines()[1:]
    assert lines[:3] == [
        '[2] checkbox "Remember me"',
        '| Username | [6] textbox "Username" |',
        '[7] button "Blue mug $12"',
    ]
    assert observation.elements[6].name == "Username"  # the guard sees the same name
    assert observation.elements[12].name == "Email", "a label in the box before the field's, not the hint after it"


def test_read_only_fields_say_so() -> None:
    snapshot = '- textbox "Departure" [ref=e2] [box=10,20,185,21]: 2030-06-03'
    observation = render_page("X", snapshot, readonly=[(True, (10.0, 20.0, 185.0, 21.0))])
    assert '[2] textbox "Departure" readonly value="2030-06-03"' in observation.text
    assert observation.elements[2].readonly


def test_a_read_only_field_in_a_frame_leaves_the_pages_field_at_the_same_box_editable() -> None:
    """Boxes are each document's own: a frame's read-only field at its top left has the same box as a
    field at the page's top left, and only the frame's is read-only (the page's was refused typing)."""
    snapshot = """- textbox "Main name" [ref=e2] [box=8,8,150,20]
- iframe [ref=e3]:
  - textbox "Booked on" [ref=f1e2] [box=8,8,150,20]: 2030-06-03
"""
    observation = render_page("X", snapshot, readonly=[(False, (8.0, 8.0, 150.0, 20.0))])
    [main] = [e for e in observation.elements.values() if e.name == "Main name"]
    [framed] = [e for e in observation.elements.values() if e.name == "Booked on"]
    assert not main.readonly and framed.readonly


def test_a_cut_observation_counts_the_elements_below_and_says_where_they_start() -> None:
    rows = [f'- link "Row {i}" [ref=e{i}] [box=0,{i * 10},100,10]' for i in range(1, 300)]
    observation = render_page("X", "\n".join(rows), budget=1000)
    shown = len(observation.elements)
    assert f"({299 - shown} more interactive elements below)" in observation.text
    assert observation.next_top == (shown + 1) * 10  # the first cut line's top
    further = render_page("X", "\n".join(rows), budget=1000, reading_top=observation.next_top)
    assert min(further.elements) == shown + 1  # reading on starts at the first element cut


def test_a_short_budget_keeps_the_screens_controls_by_shortening_the_text_beside_them() -> None:
    long_text = "Signature required on delivery, weekdays only, at the back door"
    rows = [
        f"""- row [ref=e{i}0] [box=0,{i * 15},900,15]:
  - cell "R-{i}" [ref=e{i}1]
  - cell "{long_text}" [ref=e{i}2]
  - cell [ref=e{i}3]:
    - button "Open R-{i}" [ref=e{i}4] [box=800,{i * 15},60,15]"""
        for i in range(1, 41)
    ]
    snapshot = "\n".join(rows)
    on_screen = [i for i in range(1, 41) if i * 15 < 300]
    plain = render_page("X", snapshot, budget=1500)
    assert len(plain.elements) < len(on_screen)  # without the viewport's height: the tail is cut, as before
    kept = render_page("X", snapshot, budget=1500, viewport_height=300)
    assert {element.name for element in kept.elements.values()} >= {f"Open R-{i}" for i in on_screen}
    assert f'|  | Signature required on d… | [{on_screen[0]}4] button "Open R-{on_screen[0]}" |' in kept.text
    assert len(kept.text) <= 1500
    roomy = render_page("X", snapshot, budget=20_000, viewport_height=300)
    assert long_text in roomy.text and "| R-1 |" in roomy.text  # nothing is shortened when all fits


def _long_table_then_sidebar(rows: int = 100) -> str:
    """A change list as Django's admin draws one: a table of `rows` rows, 30 px each, then a filter sidebar
    at the top right of the screen, after the table in the page's order."""
    lines = [
        "- table [ref=e1] [box=0,100,900,3030]:",
        "  - row [ref=e2] [box=0,100,900,30]:",
        '    - columnheader "Number" [ref=e3]',
        '    - columnheader "Total" [ref=e4]',
    ]
    for i in range(1, rows + 1):
        top = 100 + i * 30
        lines += [
            f"  - row [ref=e{10 * i}] [box=0,{top},900,30]:",
            f"    - cell [ref=e{10 * i + 1}]:",
            f'      - link "SO-{i:05}" [ref=e{10 * i + 2}] [box=0,{top},80,30]',
            f'    - cell "{i * 3}.50 EUR, paid by card, shipped to the customer\'s office address" [ref=e{10 * i + 3}]',
        ]
    lines.append('- navigation "Filter" [ref=e5000] [box=950,100,300,400]:')
    lines += [f'  - link "Status {n}" [ref=e{5001 + n}] [box=950,{120 + n * 30},200,30]' for n in range(8)]
    return "\n".join(lines)


def test_controls_on_screen_after_a_long_table_get_ids_and_the_left_out_rows_are_named() -> None:
    observation = render_page("X", _long_table_then_sidebar(), budget=3000, viewport_height=800)
    names = {element.name for element in observation.elements.values()}
    assert {f"Status {n}" for n in range(8)} <= names, observation.text  # the sidebar is on the screen
    assert {f"SO-{i:05}" for i in range(1, 23)} <= names  # the rows on the screen (up to y = 800)
    note = re.search(
        r"\(rows ([\d,]+)–100 of the 100 in this table below the screen; scroll down to read them\)", observation.text
    )
    assert note is not None, observation.text
    assert f"SO-{int(note[1]):05}" not in names and f"SO-{int(note[1]) - 1:05}" in names
    assert len(observation.text) <= 3000


def test_reading_on_through_a_long_table_keeps_its_header_and_says_which_rows_are_above() -> None:
    observation = render_page("X", _long_table_then_sidebar(), budget=3000, reading_top=1600, viewport_height=2400)
    lines = observation.text.splitlines()
    header = lines.index("| Number | Total |")
    assert re.fullmatch(
        r"\(rows 1–4\d of the 100 in this table above the screen; scroll up to read them\)", lines[header + 1]
    )
    assert lines[header + 2].startswith("| [")  # then the first row read on


def test_text_lines_on_screen_give_way_to_controls_lowest_first() -> None:
    prose = [f'- paragraph [ref=e{i}] [box=0,{i * 10},900,10]: "Paragraph {i} {"x" * 140}"' for i in range(1, 31)]
    buttons = [f'- button "Go {i}" [ref=e{100 + i}] [box=0,{300 + i * 10},60,10]' for i in range(1, 11)]
    observation = render_page("X", "\n".join(prose + buttons), budget=1500, viewport_height=800)
    assert {element.name for element in observation.elements.values()} == {f"Go {i}" for i in range(1, 11)}
    assert "Paragraph 1 " in observation.text and "Paragraph 30 " not in observation.text
    assert re.search(r"\(\d+ lines of text on screen left out to show its controls\)", observation.text)
    assert len(observation.text) <= 1500


def test_hover_is_an_action_and_harmless() -> None:
    assert parse_action("hover [7]") == Hover(element=7)
    guard = make_guard(GuardRules(), "http://shop.test/")
    assert guard("hover [7]", ElementInfo(role="button", name="Delete account")) is None


# -- 1. clickables without a role ---------------------------------------------------------------


@browser_test
def test_clickables_without_a_role_get_ids_named_from_text_label_or_title(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_clickables")
    for target in visible_targets(env):
        element(page, target)
    buttons = [shown for shown in shown_elements(page.text) if shown.role == "button"]
    assert len(buttons) == len(visible_targets(env)), (
        "a container got an id besides its inner clickables:\n" + page.text
    )
    assert "A large region" in page.text and not find(page.text, "A large region")  # an analytics listener is no button


@browser_test
def test_each_id_acts_on_the_element_the_observation_named(env: BrowserEnvironment, gallery_site: str) -> None:
    for name in ("gallery_clickables", "gallery_names", "gallery_icons"):
        for target in visible_targets_of(env, gallery_site, name):
            page = open_page(env, gallery_site, name)
            shown = element(page, target)
            hits(env)
            verb = f"type [{shown.id}] [x] [0]" if shown.role == "textbox" else f"click [{shown.id}]"
            result = env.execute(verb)
            assert result.ok, f"{verb} on {target}: {result.error}"
            assert set(hits(env)) == {target}, f"{verb} was meant for {target}"


def visible_targets_of(env: BrowserEnvironment, gallery_site: str, name: str) -> list[str]:
    open_page(env, gallery_site, name)
    return visible_targets(env)


@browser_test
def test_ids_stay_the_same_across_observations(env: BrowserEnvironment, gallery_site: str) -> None:
    first = open_page(env, gallery_site, "gallery_clickables")
    again = env.observe()
    assert [(s.id, s.name) for s in shown_elements(first.text)] == [(s.id, s.name) for s in shown_elements(again.text)]


_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


@browser_test
def test_icon_only_controls_are_named_from_a_tooltip_an_svg_title_or_the_icon_class(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_icons")
    for target in visible_targets(env):  # each data-g is the name the control should have
        element(page, target)
    assert not _PRIVATE_USE.search(page.text), f"an icon font's glyph was shown as a name:\n{page.text}"


@browser_test
def test_a_covered_control_is_not_clicked_and_the_sentence_names_the_cover(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    """A cookie banner over a button, a veil over a frame: the click would land on the cover, so it is not
    made; once the cover is gone (the banner accepted, the veil hidden), the same ids click their elements."""
    page = open_page(env, gallery_site, "covered")
    covered = {
        "Place order": 'covered by <div id="consent"> "We use cookies',
        "Apply coupon": 'covered by <div id="veil">',
    }
    for name, sentence in covered.items():
        hits(env)
        result = env.execute(f"click [{element(page, name).id}]")
        assert not result.ok and result.error is not None and sentence in result.error, result.error
        assert hits(env) == [], f"a click meant for {name} reached the page"
    for name in ("Accept", "Hide veil", "Place order", "Apply coupon"):
        hits(env)
        result = env.execute(f"click [{element(env.observe(), name).id}]")
        assert result.ok, f"{name}: {result.error}"
        assert hits(env) == [name]


@browser_test
def test_controls_no_pointer_reaches_are_left_out_and_a_hidden_checkbox_is_clicked_through_its_label(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    """A skip link parked off the page and a one-pixel focus proxy under the control a person sees get no
    id (clicking them could only fail); a visually hidden checkbox keeps its id and state, and a click on
    it lands through its styled label."""
    page = open_page(env, gallery_site, "gallery_widgets")
    assert "Skip to content" not in page.text
    assert [shown.name for shown in shown_elements(page.text) if "colour" in shown.name] == ["Choose a colour"]
    checkbox = next(shown for shown in shown_elements(page.text) if shown.role == "checkbox")
    hits(env)
    result = env.execute(f"click [{checkbox.id}]")
    assert result.ok, result.error
    assert set(hits(env)) == {"Newsletter"}
    assert "checked" in element(result.page, "Newsletter").rest


@browser_test
def test_a_disabled_control_fails_at_once_saying_so(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_widgets")
    save = element(page, "Save")
    assert "disabled" in save.rest
    result = env.execute(f"click [{save.id}]")
    assert not result.ok and result.error is not None and "is disabled" in result.error
    assert result.duration_ms < env.timeout_ms / 2  # Playwright alone waits the whole timeout for it


@browser_test
def test_a_summary_and_the_items_of_a_roving_tabindex_are_buttons(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_widgets")
    summary = element(page, "Advanced options")
    assert summary.role == "button"
    for name in ("report.csv", "notes.txt", "photo.png"):
        element(page, name)
    opened = env.execute(f"click [{summary.id}]")
    assert opened.ok and "Proxy: none" in (opened.page.text if opened.page else "")


@browser_test
def test_a_page_its_scripts_draw_after_it_loads_is_read_once_drawn(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_late")
    assert "# Dashboard" in page.text
    element(page, "Refresh")  # drawn 300 ms after the heading: the reading waited for the drawing to settle


@browser_test
def test_an_empty_page_is_waited_for_once_not_at_every_reading(gallery_site: str) -> None:
    with BrowserEnvironment(f"{gallery_site}/empty.html", timeout_ms=2000) as env:
        first = env.observe()  # nothing drawn: waited for up to half the timeout
        started = time.perf_counter()
        again = env.execute("scroll [down]")
        assert first.text == "Title: Nothing here" and again.ok
        assert time.perf_counter() - started < 0.9, "the empty page was waited for again"


# -- 2. rich editors ----------------------------------------------------------------------------

EDITOR_TEXT = {
    "Notes": "Call the supplier on Monday.",
    "Query": "SELECT name FROM parts\nWHERE stock < 5",
    "Script": "function total(items) {\n  return 0;\n}",
}


@browser_test
def test_each_editor_is_one_textbox_showing_its_text(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_editors")
    textboxes = [shown for shown in shown_elements(page.text) if shown.role == "textbox"]
    assert [shown.name for shown in textboxes] == list(EDITOR_TEXT), page.text  # no second box for a hidden text area
    for shown in textboxes:
        assert f"value={json.dumps(EDITOR_TEXT[shown.name])}" in shown.rest, page.text


@browser_test
@pytest.mark.parametrize("name", list(EDITOR_TEXT))
def test_typing_into_an_editor_replaces_its_text(env: BrowserEnvironment, gallery_site: str, name: str) -> None:
    page = open_page(env, gallery_site, "gallery_editors")
    hits(env)
    typed = env.execute(f"type [{element(page, name).id}] [total = 0\nreturn total] [0]")
    assert typed.ok, typed.error
    assert set(hits(env)) == {name}, "the text went into another element"
    assert 'value="total = 0\\nreturn total"' in element(typed.page, name).rest, typed.page
    lines = env._require_page().evaluate(_EDITOR_LINES_JS, name)  # what the page's own editor holds
    assert lines == ["total = 0", "return total"]


_EDITOR_LINES_JS = """name => {
  const editor = document.querySelector(`[data-g="${name}"]`);
  const lines = editor.querySelectorAll('.cm-line, .lines pre');
  return lines.length ? Array.from(lines, line => line.textContent) : editor.innerText.split('\\n');
}"""


# -- 3. read-only and custom inputs -------------------------------------------------------------


@browser_test
def test_a_read_only_date_field_refuses_typing_at_once_and_its_picker_works(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    date = element(page, "Departure")
    assert "readonly" in date.rest
    typed = env.execute(f"type [{date.id}] [June 3]")
    assert not typed.ok and typed.error is not None and "read-only" in typed.error and "click it" in typed.error
    opened = env.execute(f"click [{date.id}]")
    chosen = env.execute(f"click [{element(opened.page, 'June 3').id}]")
    assert chosen.ok, chosen.error
    assert 'value="June 3"' in element(chosen.page, "Departure").rest


@browser_test
def test_sliders_take_a_value_by_type_or_select(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    volume = element(page, "Volume")
    typed = env.execute(f"type [{volume.id}] [7]")
    assert typed.ok, typed.error
    assert 'value="7"' in element(typed.page, "Volume").rest
    selected = env.execute(f"select [{volume.id}] [2]")
    assert selected.ok, selected.error
    assert 'value="2"' in element(selected.page, "Volume").rest
    assert env._require_page().inner_text("#volume-out") == "2"  # the page's input listener ran
    zoom = element(selected.page, "Zoom")  # an ARIA slider moves only by its own key handling
    moved = env.execute(f"type [{zoom.id}] [8]")
    assert moved.ok, moved.error
    assert 'value="8"' in element(moved.page, "Zoom").rest


@browser_test
def test_a_slider_that_cannot_reach_the_value_fails_saying_where_it_stopped(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    zoom = element(page, "Zoom")  # whole steps: 7.5 lies between two of them
    between = env.execute(f"type [{zoom.id}] [7.5]")
    assert not between.ok, "a value the slider cannot take passed as set"
    assert between.error == f"element {zoom.id} is a slider that cannot take 7.5: its step went from 7 to 8", (
        between.error
    )
    contrast = element(page, "Contrast")  # its keys do nothing
    stuck = env.execute(f"select [{contrast.id}] [6]")
    assert not stuck.ok, "a slider its keys do not move passed as set"
    assert stuck.error == f"element {contrast.id} is a slider that stayed at 4 when its arrow keys were pressed", (
        stuck.error
    )


@browser_test
def test_custom_combobox_and_listbox_take_select(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    fruit = element(page, "Fruit")
    picked = env.execute(f"select [{fruit.id}] [Banana]")
    assert picked.ok, picked.error
    assert 'value="Banana"' in element(picked.page, "Fruit").rest
    missing = env.execute(f"select [{fruit.id}] [Kiwi]")
    assert not missing.ok and missing.error is not None and 'no option "Kiwi"' in missing.error
    assert "selected" in element(page, "Medium").rest
    size = element(page, "Size")
    assert size.role == "listbox", "a listbox gets an id of its own, so select can name it"
    large = env.execute(f"select [{size.id}] [Large]")
    assert large.ok, large.error
    assert "selected" in element(large.page, "Large").rest and "selected" not in element(large.page, "Medium").rest


@browser_test
def test_a_combobox_picks_from_its_own_list_while_another_list_shows_the_same_option(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    opened = env.execute(f"click [{element(page, 'Fruit').id}]")  # the fruit list, Banana in it, stays open
    assert opened.ok and find(opened.page.text if opened.page else "", "Cherry") is not None, opened.error
    hits(env)
    picked = env.execute(f"select [{element(opened.page, 'Topping').id}] [Banana]")
    assert picked.ok, picked.error
    assert hits(env)[-1] == "Banana slices", "the option clicked was the other list's"
    assert 'value="Banana"' in element(picked.page, "Topping").rest
    assert "value=" not in element(picked.page, "Fruit").rest


@browser_test
def test_a_long_select_lists_some_options_and_takes_any(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_inputs")
    country = element(page, "Country")
    assert "(+50 more)" in country.rest and "Country 77" not in page.text
    chosen = env.execute(f"select [{country.id}] [Country 77]")
    assert chosen.ok, chosen.error
    assert 'value="Country 77"' in element(chosen.page, "Country").rest


# -- 4. names -----------------------------------------------------------------------------------


@browser_test
def test_tabs_fields_checkboxes_and_options_without_a_name_get_one(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_names")
    roles = {name: element(page, name).role for name in visible_targets(env)}
    assert roles == {
        "Mail": "tab",
        "Files": "tab",
        "Username": "textbox",
        "Password": "textbox",
        "Remember me": "checkbox",
        "Monthly": "radio",
        "Yearly": "radio",
        "Promo code": "textbox",
        "Email": "textbox",
        "Phone": "textbox",
        "Verify": "button",
        "Red": "option",
        "Green": "option",
    }
    files = env.execute(f"click [{element(page, 'Files').id}]")
    assert "selected" in element(files.page, "Files").rest


# -- 5. long pages ------------------------------------------------------------------------------


@browser_test
def test_every_row_of_a_long_table_is_reachable_by_scrolling_with_stable_ids(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_long")
    assert re.search(r"\(\d+ more interactive elements below\)", page.text)
    wanted = set(visible_targets(env))
    ids: dict[str, int] = {}
    for _ in range(40):
        for shown in shown_elements(page.text):
            assert ids.setdefault(shown.name, shown.id) == shown.id, f"{shown.name} changed its id"
        if "scroll down" not in page.text:
            break
        result = env.execute("scroll [down]")
        assert result.ok and result.page is not None, result.error
        page = result.page
    assert wanted <= set(ids), f"never shown: {sorted(wanted - set(ids))[:10]}"
    last = find(page.text, "Open S-1160")
    assert last is not None
    hits(env)
    assert env.execute(f"click [{last.id}]").ok
    assert hits(env) == ["Open S-1160"]
    back = env.execute("scroll [up]")
    assert back.ok and "S-1160" not in (back.page.text if back.page else "")


# -- 6. shadow DOM ------------------------------------------------------------------------------


@browser_test
def test_inside_open_shadow_roots_clickables_get_ids_read_only_fields_say_so_and_passwords_are_masked(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_shadow")
    typed = env.execute(f"type [{element(page, 'Password').id}] [pw-secret-9] [0]")
    assert typed.ok, typed.error
    assert typed.page is not None and "pw-secret-9" not in typed.page.text, typed.page.text
    assert 'value="********"' in element(typed.page, "Password").rest
    wanted = visible_targets(env)
    assert len(wanted) == 7, wanted  # the page's fields and buttons, all inside shadow roots
    shown = {target: element(typed.page, target) for target in wanted}
    assert {target: s.role for target, s in shown.items() if s.role != "textbox"} == {
        "Sign in": "button",
        "Bold": "button",
        "Italic": "button",  # a component inside a component
        "Underline": "button",
    }
    assert "readonly" in shown["Birthday"].rest
    for target in ("Sign in", "Italic", "Email"):
        page = open_page(env, gallery_site, "gallery_shadow")
        target_id = element(page, target).id
        hits(env)
        verb = f"type [{target_id}] [x] [0]" if target == "Email" else f"click [{target_id}]"
        assert env.execute(verb).ok
        assert set(hits(env)) == {target}, f"{verb} was meant for {target}"


# -- 6. frames -----------------------------------------------------------------------------------

FRAMED = ["Apply coupon", "Coupon terms", "Accept offer", "Remind me later", "Coupon code"]
"""The controls of gallery_frames' two frames (a coupon form from the page's own origin, an offer from another),
the text field last: leaving it fires its change event on the next target."""


@browser_test
def test_ids_in_same_and_cross_origin_frames_stay_put_and_act_on_their_element(
    env: BrowserEnvironment, gallery_site: str
) -> None:
    page = open_page(env, gallery_site, "gallery_frames")
    assert set(visible_targets(env)) == {"Add a line", *FRAMED}
    documents = [len(frame.content()) for frame in env._require_page().frames]  # no public API; the test must
    assert len(documents) == 3 and page.html_chars >= sum(documents) - 3 * len("<!DOCTYPE html>"), (
        "the raw HTML an observation stands for counts the frames' documents too"
    )
    before = {target: element(page, target).id for target in FRAMED}
    added = env.execute(f"click [{element(page, 'Add a line').id}]")
    assert added.ok, added.error
    assert find(added.page.text if added.page else "", "Remove") is not None, "the main page gained a control"
    assert {target: element(added.page, target).id for target in FRAMED} == before, "a frame's ids moved"
    for target in FRAMED:
        shown = element(env.observe(), target)
        hits(env)
        verb = f"type [{shown.id}] [SPRING] [0]" if shown.role == "textbox" else f"click [{shown.id}]"
        result = env.execute(verb)
        assert result.ok, f"{verb} on {target}: {result.error}"
        assert set(hits(env)) == {target}, f"{verb} was meant for {target}"


@browser_test
def test_a_cross_origin_frame_loads_only_where_the_fence_allows_its_host(gallery_site: str) -> None:
    start = f"{gallery_site}/gallery_frames.html"
    with BrowserEnvironment(start, allowed_domains=["localhost"]) as allowed:
        page = allowed.observe()
        offer = element(page, "Accept offer")
        hits(allowed)
        assert allowed.execute(f"click [{offer.id}]").ok
        assert hits(allowed) == ["Accept offer"]
    with BrowserEnvironment(start, allowed_domains=[]) as fenced:
        page = fenced.observe()
        assert find(page.text, "Apply coupon") is not None and find(page.text, "Accept offer") is None


# -- 6. downloads --------------------------------------------------------------------------------


@browser_test
def test_a_download_is_saved_with_the_sessions_artifacts_and_reported_never_opened(
    gallery_site: str, tmp_path: Path
) -> None:
    start = f"{gallery_site}/gallery_downloads.html"
    csv = (GALLERY / "gallery_report.csv").read_bytes()
    with BrowserEnvironment(start, tmp_path) as env:
        page = env.observe()
        for saved_as in ("orders-q1.csv", "orders-q1 (2).csv"):  # a second copy does not overwrite the first
            hits(env)
            result = env.execute(f"click [{element(page, 'Download the orders').id}]")
            assert result.ok, result.error
            assert hits(env) == ["Download the orders"]
            report = (
                f"the page downloaded 'orders-q1.csv' ({len(csv)} bytes) from {gallery_site}/gallery_report.csv; "
                f"saved as downloads/{saved_as}, not opened"
            )
            assert result.reports == (report,)
            assert result.page is not None and result.page.text.splitlines()[1] == f"({report})"
            assert (tmp_path / "downloads" / saved_as).read_bytes() == csv
            page = result.page
        # A busy server answers the download a second after the click: the click's own result reports it
        # (Chromium's late news of it went with the next action's result before).
        slow = env.execute(f"click [{element(page, 'Download the archive').id}]")
        assert slow.ok, slow.error
        assert len(slow.reports) == 1 and "'orders-archive.csv' (" in slow.reports[0], slow.reports
        for action in (f"click [{element(page, 'March invoice').id}]", "goto [attachment/gallery_report.csv]"):
            attached = env.execute(action)  # a server's attachment, by a link or a goto: the page stays
            assert attached.ok, f"{action}: {attached.error}"
            assert len(attached.reports) == 1 and "'gallery_report.csv' (" in attached.reports[0]
            assert attached.page is not None and attached.page.url == start
        assert (tmp_path / "downloads" / "gallery_report (2).csv").read_bytes() == csv
        exported = env.execute(f"click [{element(page, 'Export as JSON').id}]")
        assert (
            exported.ok and len(exported.reports) == 1 and "'march.json' (42 bytes) from blob:" in exported.reports[0]
        )
        assert json.loads((tmp_path / "downloads" / "march.json").read_text()) == {
            "month": "March",
            "orders": 143,
            "returns": 2,
        }
        assert env._require_page().url == start, "the browser stayed on the page; nothing opened the file"


# -- 6. new tabs ---------------------------------------------------------------------------------


@browser_test
@pytest.mark.parametrize(("target", "via"), [("Invoice 1041", "link"), ("Print preview", "script")])
def test_a_link_or_script_that_opens_a_new_tab_is_followed_in_the_same_page(
    env: BrowserEnvironment, gallery_site: str, target: str, via: str
) -> None:
    page = open_page(env, gallery_site, "gallery_newtab")
    hits(env)
    result = env.execute(f"click [{element(page, target).id}]")
    assert result.ok, result.error
    assert result.page is not None and result.page.url == f"{gallery_site}/gallery_newtab_opened.html?via={via}"
    assert f"# Opened by the {via}" in result.page.text
    assert hits(env) == [target], "the click that opened the tab was meant for its element"
    assert len(env._require_page().context.pages) == 1, "the new tab was left open"


# -- 7. hover menus -----------------------------------------------------------------------------


@browser_test
def test_hover_opens_a_menu_whose_items_can_then_be_clicked(env: BrowserEnvironment, gallery_site: str) -> None:
    page = open_page(env, gallery_site, "gallery_hover")
    assert find(page.text, "Orders") is None
    hits(env, HOVERED)
    hovered = env.execute(f"hover [{element(page, 'Account').id}]")
    assert hovered.ok, hovered.error
    assert hits(env, HOVERED) == ["Account"], "the pointer went over another element"
    orders = element(hovered.page, "Orders")
    hits(env)
    assert env.execute(f"click [{orders.id}]").ok
    assert hits(env) == ["Orders"]


@browser_test
@pytest.mark.parametrize(
    ("button", "saved_as"),
    [
        ("Get the startup script", "_.._startup_evil.cmd"),  # a Windows path: a plain name inside downloads/
        ("Get the profile", "profile"),  # never a hidden file
        ("Get the invoice", "invoice_fdp.exe"),  # the right-to-left override that shows it as "invoiceexe.pdf" is gone
    ],
)
def test_a_download_with_a_hostile_name_is_saved_under_a_plain_one_inside_downloads(
    gallery_site: str, tmp_path: Path, button: str, saved_as: str
) -> None:
    with BrowserEnvironment(f"{gallery_site}/download_names.html", tmp_path) as env:
        result = env.execute(f"click [{element(env.observe(), button).id}]")
        assert result.ok, result.error
        assert len(result.reports) == 1 and f"saved as downloads/{saved_as}, not opened" in result.reports[0]
        saved = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
        assert [p for p in saved if not p.endswith(".jpg")] == [f"downloads/{saved_as}"]
        assert (tmp_path / "downloads" / saved_as).read_bytes() == b"echo owned"
