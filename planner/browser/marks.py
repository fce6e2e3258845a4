"""What the accessibility tree leaves out, marked in the page before each snapshot.

Playwright's AI-mode snapshot gives ids (refs) to what it sees as interactive; on the real web
many controls are plain `div`s, `span`s, `li`s or `svg`s with a script's click handler, and the
snapshot shows them as bare text. Two page scripts close that gap:

- `LISTENERS_JS`, an init script, runs in every document before the page's own scripts and notes
  each element that gets a click-like listener through `addEventListener` (jQuery and most
  libraries attach theirs that way). A listener delegated from a container (the document, a list)
  gives the elements it serves no listener of their own; when its source asks which element was
  hit with a selector, `event.target.closest('.row')` or `.matches('.row')`, the selector is noted
  (if it names a class, id or attribute: a bare `div` says nothing), and elements matching it count
  as clickable. A delegated listener that reads no such selector (jQuery's `.on('click', '.row')`
  keeps it in its own tables) leaves them to the other signs: `cursor: pointer`, a `tabindex`.
- `MARK_JS`, run in every frame just before the snapshot, finds the clickables without a role:
  an element with such a listener or matching a delegated selector, an `onclick` handler
  (attribute or property), a framework's click prop (React's `__reactProps$*.onClick`, Vue's
  `_vei.onClick`), a `tabindex`, or where a `cursor: pointer` region starts. It keeps only the innermost meaningful one (a container whose
  text all sits in inner clickables or native controls gives way to them) and skips big regions
  (an analytics listener on a whole section) and elements an author gave a role. Each kept element
  gets `role="button"`, so the snapshot names it from its text, `aria-label` or `title`, gives it
  a ref, and every action reaches it the one way all elements are reached (`aria-ref=eN`). Refs
  are kept per element, so its id stays the same across observations. The same pass names
  controls that have no name from the DOM alone, icon-only ones above all (a font icon's glyph is a
  private code point, not a word): from an inner `aria-label`, `title` or `alt`, a tab's panel heading
  (`aria-controls`), a tooltip (`aria-describedby`, Bootstrap's and others' tooltip attributes), an SVG
  `<title>`, or the icon's class (`fa-trash` -> "trash", `data-icon`, `<use href="#icon-star">`, the
  control's own class as a last resort), in that order; and it reports the boxes of read-only text
  fields, which the snapshot does not mark, so the observation can.

Both look inside open shadow roots too (web components keep their fields and buttons there, where
`querySelectorAll` does not reach; the snapshot and `aria-ref` do): a password typed into a
component's field is masked like any other. Closed shadow roots stay closed to them.

The same pass makes every rich text or code editor one `textbox`: a `contenteditable` root, the box
around an element the EditContext API gives keys to (Monaco), or the box around a text area an editor
hides to read keys from (CodeMirror 5's is 1000 px wide, clipped to 3 px by its wrapper), whose key
taker is then hidden from the snapshot; it reports each editor's box and the text it holds (through
the editor's API where there is one, `planner.browser.editor_api`; else its rendered lines without
the parts hidden from assistive technology), which the snapshot does not show.

Marking changes only ARIA attributes (`role`, `aria-label`, and an editor's `aria-multiline`,
`aria-readonly` and its text area's `aria-hidden`), never layout or behaviour. A session with secrets
(`planner.secrets`) also marks, before each screenshot, the fields holding one (`SECRET_FIELDS_JS`), for
the screenshot to mask.
"""

from __future__ import annotations

from planner.browser.editor_api import EDITOR_SNIPPET_JS

__all__ = ["DRAWN_JS", "LISTENERS_JS", "MARK_JS", "SECRET_FIELD", "SECRET_FIELDS_JS"]

LISTENERS_JS = """(() => {
  const key = Symbol.for('andor.clickListeners');
  if (window[key]) return;
  const listened = new WeakSet();
  Object.defineProperty(window, key, { value: listened });
  const delegated = new Set();
  Object.defineProperty(window, Symbol.for('andor.delegatedSelectors'), { value: delegated });
  const kinds = new Set(['click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'touchend']);
  const sourceOf = listener => {
    const f = typeof listener === 'function' ? listener : listener && listener.handleEvent;
    try { return typeof f === 'function' ? Function.prototype.toString.call(f) : ''; } catch { return ''; }
  };
  const asked = /\\.(?:closest|matches)\\(\\s*(['"`])([^'"`]+)\\1\\s*\\)/g;
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (kinds.has(String(type)) && this) {
      if (this.nodeType === 1) listened.add(this);
      for (const found of sourceOf(listener).matchAll(asked)) if (/[.#[]/.test(found[2])) delegated.add(found[2]);
    }
    return add.call(this, type, listener, options);
  };
})()"""

_DEEP_JS = """
  const up = e => e.assignedSlot || e.parentElement || (e.parentNode instanceof ShadowRoot ? e.parentNode.host : null);
  const deepAll = root => {
    const out = [];
    const visit = scope => {
      for (const e of scope.querySelectorAll('*')) { out.push(e); if (e.shadowRoot) visit(e.shadowRoot); }
    };
    if (root.shadowRoot) visit(root.shadowRoot);
    visit(root);
    return out;
  };
  const closestDeep = (e, selector) => { for (let x = e; x; x = up(x)) if (x.matches(selector)) return x; return null; };
"""
"""Helpers for the page scripts that must see inside open shadow roots (web components), which
`querySelectorAll`, `closest` and tree walkers stop at: `up` is an element's parent in the flattened
tree (its slot, its parent, or its shadow root's host), `deepAll` every element under a root and in
every open shadow root below it, `closestDeep` a `closest` that crosses shadow boundaries."""

DRAWN_JS = """() => {
  const body = document.body;
  if (!body || location.href === 'about:blank') return true;
  return body.innerText.trim().length > 0
    || !!body.querySelector('a[href], button, input, select, textarea, [role], img, svg, canvas, video, iframe');
}"""
"""Whether the page shows anything yet: a single-page application's document is loaded long before its
scripts draw it (JupyterLab's body holds only a splash picture for a second or more)."""

MARK_JS = (
    """() => {"""
    + _DEEP_JS
    + EDITOR_SNIPPET_JS
    + """
  const listened = window[Symbol.for('andor.clickListeners')] || new WeakSet();
  const valid = selector => { try { document.querySelector(selector); return true; } catch { return false; } };
  const delegatedTo = Array.from(window[Symbol.for('andor.delegatedSelectors')] || []).filter(valid).join(', ');
  const delegated = e => delegatedTo !== '' && e.matches(delegatedTo);
  const controlRoles = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'option', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem', 'listbox']);
  const nativeSelector = 'a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, label, iframe, '
    + '[contenteditable=""], [contenteditable=true]';
  const bareRoles = new Set(['', 'generic']);
  const isControl = e => e.matches(nativeSelector) || controlRoles.has(e.getAttribute('role') || '');
  const styles = new Map();
  const style = e => { let s = styles.get(e); if (!s) { s = getComputedStyle(e); styles.set(e, s); } return s; };
  const handled = e => {
    if (listened.has(e) || typeof e.onclick === 'function' || e.hasAttribute('onclick')) return true;
    for (const key of Object.keys(e)) {
      const value = e[key];
      if (key.startsWith('__reactProps$') && value && (value.onClick || value.onMouseDown)) return true;
      if (key === '_vei' && value && (value.onClick || value.onMousedown)) return true;
    }
    return false;
  };
  const pointerStart = e => style(e).cursor === 'pointer' && !(up(e) && style(up(e)).cursor === 'pointer');
  const focusable = e => e.hasAttribute('tabindex') && e.tabIndex >= 0;
  const visible = e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && style(e).visibility !== 'hidden';
  };
  const named = e => ['aria-label', 'aria-labelledby', 'title'].some(a => (e.getAttribute(a) || '').trim())
    || (e.innerText || '').trim() || (e.labels && e.labels.length);
  const small = e => e.childElementCount <= 40 && (e.innerText || '').length <= 200;
  const region = e => {  // a dialog or a backdrop: its listener closes or drags it, it is no button
    if (e.matches('dialog, [aria-modal=true]')) return true;
    const r = e.getBoundingClientRect();
    return r.width * r.height > 0.5 * innerWidth * innerHeight;
  };
  const all = deepAll(document);
  const editors = [];
  const editor = (root, input) => {
    if (root.getAttribute('role') !== 'textbox' && bareRoles.has(root.getAttribute('role') || '')) {
      root.setAttribute('role', 'textbox');
      root.setAttribute('aria-multiline', 'true');
    }
    if (input && input !== root) {
      input.setAttribute('aria-hidden', 'true');  // the box it types into is the textbox, not a second one
      const label = input.getAttribute('aria-label') || input.getAttribute('placeholder') || '';
      const labelled = ['aria-label', 'aria-labelledby', 'title'].some(a => (root.getAttribute(a) || '').trim());
      if (label.trim() && !labelled) root.setAttribute('aria-label', label.trim().slice(0, 80));
      if (input.readOnly) root.setAttribute('aria-readonly', 'true');
    }
    if (!visible(root)) return;
    const r = root.getBoundingClientRect();
    editors.push([Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height), editorText(root).trim()]);
  };
  const boxAround = e => {
    for (let x = up(e), depth = 0; x && depth < 6; x = up(x), depth++) {
      const [width, height] = clipped(x);
      if (width >= 40 && height >= 14 && style(x).visibility !== 'hidden') return x;
    }
    return null;
  };
  const clipped = e => {  // its box as far as its clipping ancestors show it (CodeMirror 5 clips a wide text area)
    let r = e.getBoundingClientRect(), width = r.width, height = r.height;
    for (let x = up(e), depth = 0; x && depth < 4; x = up(x), depth++) {
      if (style(x).overflow === 'visible') continue;
      const c = x.getBoundingClientRect();
      width = Math.min(width, Math.max(0, Math.min(r.right, c.right) - Math.max(r.left, c.left)));
      height = Math.min(height, Math.max(0, Math.min(r.bottom, c.bottom) - Math.max(r.top, c.top)));
    }
    return [width, height];
  };
  const tiny = e => { const [w, h] = clipped(e); return w <= 4 || h <= 4 || style(e).opacity === '0'; };
  const roots = [];
  for (const e of all) {
    if (e.isContentEditable && !(up(e) && up(e).isContentEditable)) {
      editor(e, null);
    } else if (e.editContext) {  // Monaco: the EditContext API's element takes the keys, a zero-width box
      const root = tiny(e) ? boxAround(e) : e;
      if (root) { editor(root, e); roots.push(root); }
    }
  }
  for (const e of all) {
    if (e.tagName !== 'TEXTAREA' || e.disabled || e.closest('[contenteditable]') || roots.some(r => r.contains(e))) continue;
    const hidden = tiny(e) && style(e).display !== 'none';
    const root = hidden ? boxAround(e) : null;
    if (root) editor(root, e);
  }
  const candidates = new Set();
  for (const e of document.body ? deepAll(document.body) : []) {
    if (isControl(e) || !bareRoles.has(e.getAttribute('role') || '') || closestDeep(e, nativeSelector + ', [role=textbox]')) continue;
    if (!(handled(e) || delegated(e) || focusable(e) || pointerStart(e))) continue;
    if (visible(e) && small(e) && !region(e)) candidates.add(e);
  }
  // A roving tabindex (one item of a list with tabindex=0, its siblings -1, the list's listener serving them
  // all, as JupyterLab's file list does): the items like the focusable one are clickables too.
  for (const e of all.filter(e => e.getAttribute('tabindex') === '0' && (candidates.has(e) || e.getAttribute('role') === 'button'))) {
    const list = e.closest('ul, ol, [role=list], [role=listbox], [role=grid], [role=tree], [role=menu], [role=toolbar]');
    if (!list || !e.className) continue;
    for (const other of list.querySelectorAll(`${e.tagName}[tabindex="-1"]`)) {
      const bare = !isControl(other) && bareRoles.has(other.getAttribute('role') || '');
      if (bare && other.className === e.className && visible(other) && small(other)) candidates.add(other);
    }
  }
  const inner = (outer, e) => e !== outer && (candidates.has(e) || isControl(e));
  const ownText = (outer, inside) => {
    for (const holder of [outer, ...inside]) {
      for (const t of holder.childNodes) {
        if (t.nodeType !== Node.TEXT_NODE || !t.nodeValue.trim()) continue;
        let e = holder;
        while (e && !inner(outer, e)) e = e === outer ? null : up(e);
        if (!e) return true;
      }
    }
    return false;
  };
  for (const e of Array.from(candidates)) {
    const inside = deepAll(e);
    if (inside.some(d => inner(e, d)) && !ownText(e, inside)) candidates.delete(e);
  }
  for (const e of candidates) e.setAttribute('role', 'button');
  for (const e of all.filter(e => e.matches('details > summary:first-of-type:not([role])'))) {
    e.setAttribute('role', 'button');  // a disclosure the snapshot shows as bare text: a button that opens its details
    e.setAttribute('aria-expanded', String(e.parentElement.open));
  }
  const namedRoles = 'a[href], button, [role=tab], [role=option], [role=button], [role=link], [role=menuitem], '
    + '[role=menuitemcheckbox], [role=menuitemradio], [role=treeitem], [role=switch], [role=checkbox]';
  const tipAttributes = ['data-tooltip', 'data-bs-original-title', 'data-original-title', 'data-bs-title', 'data-tip',
    'data-title', 'data-hint', 'data-balloon', 'aria-description'];
  const iconClass = /^(?:fa|fas|far|fal|fab|glyphicon|bi|icon|icons|mdi|ion|ionicon|ti|octicon|lucide|feather|ri|la|las|lar|lab|codicon|oi|gg|ph|uil|bx|bxs|fi|si)-([a-z0-9][a-z0-9_-]*)$/;
  const iconModifier = /^(?:solid|regular|light|thin|duotone|brands|sharp|fw|lg|sm|xs|xl|\\d+x|spin|pulse|border|inverse|stack(?:-\\dx)?|rotate-\\d+|flip-\\w+|pull-\\w+|li|ul|white|large|small)$/;
  const genericClasses = new Set(['btn', 'button', 'icon', 'icons', 'link', 'links', 'control', 'controls', 'item', 'items',
    'action', 'actions', 'nav', 'navbar', 'menu', 'tool', 'tools', 'toolbar', 'active', 'disabled', 'selected', 'open',
    'show', 'hide', 'hidden', 'visible', 'small', 'large', 'left', 'right', 'pull', 'float', 'clickable', 'pointer',
    'glyphicon', 'material', 'fa', 'fas', 'far', 'fab', 'bi', 'mdi', 'ion', 'svg', 'img', 'image', 'wrapper', 'inner',
    'outer', 'container', 'row', 'col', 'cell', 'text', 'label', 'primary', 'secondary', 'default', 'outline', 'flat']);
  const innerName = e => {
    const inside = e.querySelector('[title], img[alt], svg title, [aria-label]');
    if (!inside) return '';
    return (inside.tagName.toLowerCase() === 'title' ? inside.textContent
      : inside.getAttribute('aria-label') || inside.getAttribute('title') || inside.getAttribute('alt') || '').trim();
  };
  const panelName = e => {
    const panel = e.getRootNode().getElementById(e.getAttribute('aria-controls') || '');
    if (!panel) return '';
    const heading = panel.getAttribute('aria-label') || panel.querySelector('h1, h2, h3, h4, h5, h6, legend')?.textContent;
    return (heading || '').trim();
  };
  const tooltipName = e => {
    for (const id of (e.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean)) {
      const tip = e.getRootNode().getElementById?.(id);
      const text = tip ? (tip.textContent || '').trim() : '';
      if (text) return text;
    }
    const tip = tipAttributes.map(a => (e.getAttribute(a) || '').trim()).find(Boolean);
    return tip || '';
  };
  const classWords = c => {
    const found = c.match(iconClass);
    if (!found || iconModifier.test(found[1])) return '';
    return found[1].replace(/-(?:o|alt|fill|filled|outline|outlined|solid|line|icon|\\d+)$/, '').replace(/[-_]+/g, ' ');
  };
  const iconName = e => {
    for (const x of [e, ...e.querySelectorAll('*')].slice(0, 12)) {
      const data = (x.getAttribute('data-icon') || '').split(':').pop();
      if (data) return data.replace(/[-_]+/g, ' ');
      const used = x.tagName.toLowerCase() === 'use' ? (x.getAttribute('href') || x.getAttribute('xlink:href') || '') : '';
      if (used.includes('#')) return classWords(used.split('#').pop()) || used.split('#').pop().replace(/[-_]+/g, ' ');
      for (const c of (x.getAttribute('class') || '').split(/\\s+/)) {
        const camel = c.match(/^jp-([A-Z][A-Za-z]+?)Icon$/);
        if (camel) return camel[1].replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
        const words = classWords(c);
        if (words) return words;
      }
    }
    return (e.getAttribute('class') || '').split(/\\s+/).find(c => /^[a-z]{3,20}$/.test(c) && !genericClasses.has(c)) || '';
  };
  for (const e of all.filter(e => e.matches(namedRoles))) {
    if (named(e)) continue;
    const name = innerName(e) || (e.getAttribute('role') === 'tab' ? panelName(e) : '') || tooltipName(e) || iconName(e);
    if (name) e.setAttribute('aria-label', name.trim().slice(0, 80));
  }
  // Controls only a screen reader or the keyboard meets: a skip link parked off the page until it has
  // the focus, a widget's 1-pixel focus proxy under the control a person sees (select2's). A pointer
  // cannot reach them, so the observation leaves them out; a visually hidden checkbox, radio or file
  // input stays (its state matters, and its label takes the click: `planner.browser.aim`).
  const unreachable = [];
  for (const e of all.filter(e => isControl(e) && !e.matches('input[type=checkbox], input[type=radio], input[type=file]'))) {
    if (e.isContentEditable || style(e).display === 'none') continue;
    const r = e.getBoundingClientRect();
    const [width, height] = clipped(e);
    const parked = r.right <= -100 + Math.min(0, -scrollX) || r.bottom <= -100 - scrollY;
    const clippedAway = /^rect\\(0px,? 0px,? 0px,? 0px\\)$/.test(style(e).clip) || style(e).clipPath === 'inset(50%)';
    if (r.width > 0 && (parked || clippedAway || (width <= 2 && height <= 2))) {
      unreachable.push([Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]);
    }
  }
  const readonly = [];
  for (const e of all.filter(e => e.matches('input, textarea, [aria-readonly=true]'))) {
    const field = e.tagName === 'TEXTAREA' || (e.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit',
      'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(e.type));
    const fixed = e.getAttribute('aria-readonly') === 'true' || (field && e.readOnly);
    if (!fixed || e.disabled || !visible(e)) continue;
    const r = e.getBoundingClientRect();
    readonly.push([Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]);
  }
  const markup = all.reduce((sum, e) => sum + (e.shadowRoot ? e.shadowRoot.innerHTML.length : 0),
    document.documentElement.outerHTML.length);
  const passwords = all.filter(e => e.matches('input[type=password]')).map(e => e.value).filter(Boolean);
  return { readonly, editors, markup, passwords, unreachable, drawn: ("""
    + DRAWN_JS
    + """)() };
}"""
)
"""Marks clickables and editors and names unnamed tabs and options; returns the read-only fields'
boxes and those of controls no pointer can reach (parked off the page, a pixel in size), rounded as
the snapshot rounds its own (`[box=x,y,w,h]`, the frame's viewport pixels), the editors' boxes with
their text, the size of the frame's markup (its open shadow roots' included), the current contents of
its password fields, for the observation to mask (the snapshot shows a field's value as it is), and
whether the document shows anything yet (`DRAWN_JS`)."""

SECRET_FIELD = "data-andor-secret"
"""The attribute `SECRET_FIELDS_JS` marks a field holding a secret with, for a screenshot to mask it."""

SECRET_FIELDS_JS = (
    """values => {"""
    + _DEEP_JS
    + """
  const all = deepAll(document.documentElement);
  for (const e of all) {
    e.removeAttribute('SECRET_FIELD');
    const field = e.tagName === 'INPUT' || e.tagName === 'TEXTAREA';
    const editor = e.isContentEditable && !(up(e)?.isContentEditable);
    const text = field ? e.value : editor ? e.innerText : '';
    if (text && values.some(value => text.includes(value))) e.setAttribute('SECRET_FIELD', '');
  }
}""".replace("SECRET_FIELD", SECRET_FIELD)
)
"""Marks every field of the page (its open shadow roots' included) whose value holds one of `values`, and
unmarks the rest: a text field, a text area, or an editor's root, so a screenshot can mask them (their
values would otherwise show as they are; a password field's show as dots anyway)."""
