"""Filling in controls the way a person does, where Playwright's own `fill` and `select_option` fall short.

A rich text editor keeps its text in its own model, so it is typed into; a custom drop-down (the ARIA
combobox and listbox patterns) is opened and its option clicked; a slider is set or moved with its
arrow keys. Each reads back what it did and fails, saying what the control now holds, when the control
did not take it.
"""

from __future__ import annotations

from playwright.sync_api import Locator
from playwright.sync_api import Page as PlaywrightPage

from planner.actions import Select, Type
from planner.browser.editor_api import EDITOR_TEXT_JS, SET_EDITOR_TEXT_JS
from planner.browser.failures import _ActionFailed, read_only
from planner.browser.navigation import SETTLE_MS
from planner.browser.observer import Observer
from planner.secrets import Secrets

__all__ = ["Controls"]

_FOCUS_EDITOR_JS = """e => {
  const input = e.isContentEditable ? e : Array.from(e.querySelectorAll('*')).find(x => x.editContext)
    || e.querySelector('textarea:not([readonly]), [contenteditable=""], [contenteditable=true]') || e;
  input.focus();
  let focused = document.activeElement;
  while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
  return focused === input;
}"""
"""Focuses an editor where it takes keys: a contenteditable root itself, or inside it the element the
EditContext API gives them to (Monaco), the text area it hides, or a contenteditable; false when the
focus went elsewhere."""
_OPTIONS_JS = "e => e.tagName === 'SELECT' ? Array.from(e.options, o => o.label || o.text) : null"
_SLIDER_JS = """(e, wanted) => {
  if (e.tagName === 'INPUT' && e.type === 'range') {
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(e, wanted);
    e.dispatchEvent(new Event('input', { bubbles: true }));
    e.dispatchEvent(new Event('change', { bubbles: true }));
    return { native: true, value: e.value };
  }
  const number = name => { const v = parseFloat(e.getAttribute(name)); return Number.isFinite(v) ? v : null; };
  return { native: false, now: number('aria-valuenow'), min: number('aria-valuemin'), max: number('aria-valuemax') };
}"""
"""Sets a native range input (its value setter, then the events a drag fires) or reads an ARIA
slider's position, which only its keyboard handling can move."""
_MAX_SLIDER_KEYS = 200


class Controls:
    """Types into and chooses in the elements `observer` gave ids, filling in `secrets` as it types."""

    def __init__(self, observer: Observer, secrets: Secrets, timeout_ms: int) -> None:
        self._observer = observer
        self._secrets = secrets
        self._timeout_ms = timeout_ms

    def type(self, page: PlaywrightPage, action: Type) -> None:
        """Replace a text field's or an editor's text, then press Enter if the action says so."""
        locator = self._observer.locate(page, action)
        if not locator.is_editable(timeout=self._timeout_ms):
            raise _ActionFailed(read_only(action.element))
        if self._observer.elements[action.element].editor:
            self._type_into_editor(page, action, locator)
        else:
            locator.fill(self._secrets.fill(action.text), timeout=self._timeout_ms)
        if action.enter:
            locator.press("Enter", timeout=self._timeout_ms)

    def select(self, page: PlaywrightPage, action: Select) -> None:
        """Choose an option of a native or a custom drop-down, or move a slider to a value."""
        if self._observer.role(action.element) == "slider":
            self.slide(page, action, action.option)
            return
        locator = self._observer.locate(page, action)
        labels = locator.evaluate(_OPTIONS_JS, timeout=self._timeout_ms)
        wanted = action.option.strip()
        if labels is None:
            self._pick(page, action.element, locator, wanted)
            return
        index = next((i for i, label in enumerate(labels) if label.strip() == wanted), None)
        if index is None:
            index = next((i for i, label in enumerate(labels) if label.strip().casefold() == wanted.casefold()), None)
        if index is None:
            shown = ", ".join(f'"{label}"' for label in labels[:10]) + (", ..." if len(labels) > 10 else "")
            raise _ActionFailed(f'element {action.element} has no option "{wanted}"; its options are {shown}')
        locator.select_option(index=index, timeout=self._timeout_ms)

    def slide(self, page: PlaywrightPage, action: Type | Select, wanted: str) -> None:
        """Move a slider to a value: a native range input is set directly, an ARIA slider is moved
        with the arrow keys from where it says it is."""
        element_id = action.element
        locator = self._observer.locate(page, action)
        try:
            target = float(wanted.strip())
        except ValueError:
            raise _ActionFailed(
                f"element {element_id} is a slider; give it a number, not {self._secrets.hide(wanted)!r}"
            ) from None
        state = locator.evaluate(_SLIDER_JS, wanted.strip(), timeout=self._timeout_ms)
        if state["native"]:
            return
        if state["now"] is None:
            raise _ActionFailed(
                f"element {element_id} is a slider that does not say its value; click or drag it instead"
            )
        low = state["min"] if state["min"] is not None else float("-inf")
        high = state["max"] if state["max"] is not None else float("inf")
        target = min(max(target, low), high)
        locator.focus(timeout=self._timeout_ms)
        now = state["now"]
        for _ in range(_MAX_SLIDER_KEYS):
            if now == target:
                return
            locator.press("ArrowRight" if now < target else "ArrowLeft", timeout=self._timeout_ms)
            after = locator.evaluate(_SLIDER_JS, wanted.strip(), timeout=self._timeout_ms)["now"]
            if after is None or after == now:
                raise _ActionFailed(
                    f"element {element_id} is a slider that stayed at {now:g} when its arrow keys were pressed"
                )
            if (after - target) * (now - target) < 0:
                raise _ActionFailed(
                    f"element {element_id} is a slider that cannot take {target:g}: its step went from {now:g} to "
                    f"{after:g}"
                )
            now = after
        raise _ActionFailed(
            f"element {element_id} is a slider still at {now:g} after {_MAX_SLIDER_KEYS} arrow key presses "
            f"toward {target:g}"
        )

    def _type_into_editor(self, page: PlaywrightPage, action: Type, locator: Locator) -> None:
        """Replace an editor's text through its own API where the page offers one (`editor_api`), else the
        way a person does (focus, select all, delete, type), since filling its hidden text area would only
        add to what the editor's own model holds; then read it back."""
        text = self._secrets.fill(action.text)
        if not locator.evaluate(SET_EDITOR_TEXT_JS, text, timeout=self._timeout_ms):
            if not locator.evaluate(_FOCUS_EDITOR_JS, timeout=self._timeout_ms):
                locator.click(timeout=self._timeout_ms)  # an editor that takes focus only from the pointer
            page.keyboard.press("ControlOrMeta+A")
            page.keyboard.press("Delete")
            page.keyboard.insert_text(text)
        held = locator.evaluate(EDITOR_TEXT_JS, timeout=self._timeout_ms)
        if " ".join(held.split()) != " ".join(text.split()):
            shown = self._secrets.hide(" ".join(held.split()))
            shown = shown if len(shown) <= 120 else shown[:119] + "…"
            raise _ActionFailed(
                f"element {action.element} is an editor that did not take the text; it now holds {shown!r}"
            )

    def _pick(self, page: PlaywrightPage, element_id: int, locator: Locator, wanted: str) -> None:
        """Choose an option of a custom drop-down (the ARIA combobox and listbox patterns): open
        it with a click unless it is a list already, then click the option with that name in it: a
        listbox's own, a combobox's in the list its `aria-controls` names (another list open on the
        page may show the same name), else anywhere on the page."""
        listbox = self._observer.role(element_id) == "listbox"
        if not listbox and locator.get_attribute("aria-expanded", timeout=self._timeout_ms) != "true":
            locator.click(timeout=self._timeout_ms)
            page.wait_for_timeout(SETTLE_MS)
        scope = locator if listbox else self._controlled(page, locator)
        for exact in (True, False):
            options = scope.get_by_role("option", name=wanted, exact=exact).filter(visible=True)
            if options.count():
                options.first.click(timeout=self._timeout_ms)
                return
        shown = scope.get_by_role("option").filter(visible=True).all_inner_texts()[:10]
        listed = ", ".join(f'"{" ".join(text.split())}"' for text in shown) or "none is showing"
        raise _ActionFailed(f'element {element_id} has no option "{wanted}"; its options are {listed}')

    def _controlled(self, page: PlaywrightPage, locator: Locator) -> Locator | PlaywrightPage:
        """The element(s) a combobox's `aria-controls` names, looked up in its own document or shadow
        root as the attribute means them; the page when it names none that is there."""
        names = (locator.get_attribute("aria-controls", timeout=self._timeout_ms) or "").split()
        quoted = [f"'{name}'" if '"' in name else f'"{name}"' for name in names if not {'"', "'"} <= set(name)]
        if quoted:  # an XPath string cannot hold both quotes; no real id does
            ids = " or ".join(f"@id={name}" for name in quoted)
            # From the combobox up to its document or shadow root, then down: a bare `//` would start at the combobox.
            controlled = locator.locator(f"xpath=ancestor-or-self::node()[last()]//*[{ids}]")
            if controlled.count():
                return controlled
        return page
