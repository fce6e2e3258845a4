"""What an action promises that comes late, noted by a script in every document the browser opens.

A click may open a new tab, start a download, or set a short timer whose callback asks a question, all
a moment after Playwright's click has returned. The page's own script notes each promise as it is made
(`PROMISES_JS`), and the environment reads them (`read_promise`), so it waits for what the action promised
instead of racing it.
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.sync_api import Error
from playwright.sync_api import Page as PlaywrightPage

__all__ = ["PROMISES_JS", "Promise", "read_promise", "watch"]

_SHORT_TIMER_MS = 1000
"""A timer an action sets for at most this long is part of the action: its callback may ask a question."""

PROMISES_JS = """(() => {
  const key = Symbol.for('andor.promises');
  if (window[key]) return;
  const state = { click: null, clicked: null, submit: null, opened: '' };
  Object.defineProperty(window, key, { value: state });
  const named = name => Array.from(document.querySelectorAll('iframe[name], frame[name]')).some(f => f.name === name);
  const newTab = target => {
    const name = String(target || '').trim(), word = name.toLowerCase();
    return word === '_blank' || (name !== '' && !['_self', '_parent', '_top'].includes(word) && !named(name));
  };
  const base = () => document.querySelector('base[target]')?.getAttribute('target') || '';
  const own = e => (e.hasAttribute('target') ? e.getAttribute('target') : base());
  const busy = new Set(), seen = new Set();
  let watching = false;
  state.watch = () => { busy.clear(); seen.clear(); watching = true; };
  state.promised = () => {
    const link = state.click && !state.click.defaultPrevented && state.clicked?.closest?.('a[href], area[href]');
    const submit = state.submit && !state.submit.defaultPrevented ? state.submit : null;
    const formTarget = submit && (submit.submitter?.hasAttribute('formtarget') ? submit.submitter.getAttribute('formtarget') : own(submit.target));
    // Chromium downloads a same-origin, blob: or data: link that has a download attribute, whatever its target.
    const download = !!link && link.hasAttribute('download')
      && (/^(blob|data):/i.test(link.href) || new URL(link.href, location.href).origin === location.origin);
    const tab = download ? '' : link && newTab(own(link)) ? 'the link opens a new tab'
      : submit && newTab(formTarget) ? 'the form opens its result in a new tab'
      : state.opened;
    state.click = state.clicked = state.submit = null;
    state.opened = '';
    if (!busy.size) watching = false;
    return { tab, download, busy: busy.size };
  };
  addEventListener('click', e => { state.click = e; state.clicked = e.composedPath()[0]; }, true);
  addEventListener('submit', e => { state.submit = e; }, true);
  const open = window.open;
  window.open = function (url, target, features) {
    const tab = open.apply(this, arguments);
    const name = target === undefined ? '' : String(target).trim();
    if ((tab !== null || /noopener|noreferrer/i.test(String(features || ''))) && (name === '' || newTab(name))) {
      state.opened = 'the page opened a new window';
    }
    return tab;
  };
  // The work an action starts that calls back later: a short timer, a fetch or XHR, reading a fetched body.
  // A key seen once in this action (a timer's delay and callback source, a request's method and URL) is not
  // counted again, so a poll counts once rather than keeping the action busy.
  const begin = seenKey => {
    if (!watching || seen.has(seenKey)) return null;
    if (seenKey !== null) seen.add(seenKey);
    const token = {};
    busy.add(token);
    return token;
  };
  const end = token => { if (token) busy.delete(token); };
  const settled = (promise, token) => {
    if (token) promise.then(() => end(token), () => end(token));
    return promise;
  };
  // A timer that sets itself again from its own callback (a clock, a poll) is the page's own rhythm, never counted.
  const later = window.setTimeout, timers = new Map(), recurring = new Set();
  let running = null;
  window.setTimeout = function (callback, delay, ...rest) {
    const ms = Number(delay) || 0;
    if (typeof callback !== 'function' || ms > SHORT_TIMER_MS) return later.apply(window, arguments);
    const timerKey = `${ms} ${Function.prototype.toString.call(callback)}`;
    if (timerKey === running) recurring.add(timerKey);
    const token = recurring.has(timerKey) ? null : begin(timerKey);
    const id = later.call(window, function () {
      timers.delete(id);
      const outer = running;
      running = timerKey;
      try { return callback.apply(this, arguments); } finally { running = outer; end(token); }
    }, delay, ...rest);
    if (token) timers.set(id, token);
    return id;
  };
  for (const name of ['clearTimeout', 'clearInterval']) {
    const clear = window[name];
    window[name] = function (id) { end(timers.get(id)); timers.delete(id); return clear.apply(window, arguments); };
  }
  const fetching = window.fetch;
  if (fetching) window.fetch = function (input, init) {
    const request = input instanceof Request ? input : null;
    const seenKey = `fetch ${init?.method || request?.method || 'GET'} ${request ? request.url : String(input)}`;
    return settled(fetching.apply(this, arguments), begin(seenKey));
  };
  for (const name of ['arrayBuffer', 'blob', 'formData', 'json', 'text']) {
    const read = Response.prototype[name];
    if (read) Response.prototype[name] = function () { return settled(read.apply(this, arguments), begin(null)); };
  }
  const opening = XMLHttpRequest.prototype.open, sending = XMLHttpRequest.prototype.send, requests = new WeakMap();
  XMLHttpRequest.prototype.open = function (method, url) {
    requests.set(this, `xhr ${method} ${url}`);
    return opening.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    const token = begin(requests.get(this) ?? null);
    if (token) this.addEventListener('loadend', () => end(token), { once: true });
    try { return sending.apply(this, arguments); } catch (error) { end(token); throw error; }
  };
})()""".replace("SHORT_TIMER_MS", str(_SHORT_TIMER_MS))
"""Runs in every document before its own scripts: notes what an action promises, so the environment
waits for it instead of racing it. A new tab: a click on a link (or a submit of a form) that targets
a new tab, unless a script prevented its default, or a `window.open` into a new tab. A download: a
click on a link with a `download` attribute that Chromium honours (the page's own script clicking
one it made counts too). Callbacks: from `watch()` (the action's start) on, the timers of up to
`_SHORT_TIMER_MS` and the requests the page starts, until they have called back, since a callback
can ask a question (a confirm) or open a tab that belongs to the action. `promised()` says what
({tab: why or '', download: true or false, busy: callbacks still to come}), forgets the tab and
download, and stops watching once nothing is left to come."""
_PROMISED_JS = "() => window[Symbol.for('andor.promises')]?.promised() ?? {tab: '', download: false, busy: 0}"
_WATCH_JS = "() => { const promises = window[Symbol.for('andor.promises')]; promises?.promised(); promises?.watch(); }"
"""An element action's start: forget what the page's own scripts promised since the last one, and watch
for the callbacks this action starts."""


@dataclass(frozen=True)
class Promise:
    """What an action promised that comes late (`PROMISES_JS`): why a new tab opens, a download, and how
    many of the callbacks it started are still to come."""

    tab: str = ""
    download: bool = False
    busy: int = 0

    def then(self, later: Promise) -> Promise:
        """This promise updated by a later read: a tab or download promised in either, the later count."""
        return Promise(self.tab or later.tab, self.download or later.download, later.busy)


def watch(page: PlaywrightPage) -> None:
    """Start an element action in every frame of `page` (`_WATCH_JS`)."""
    for frame in page.frames:
        try:
            frame.evaluate(_WATCH_JS)
        except Error:
            continue  # a frame detached or navigating: its new document watches nothing yet


def read_promise(page: PlaywrightPage) -> Promise:
    """What the action promised so far, as the frames' `PROMISES_JS` noted it (each forgets its tab and
    download on reading)."""
    promise = Promise()
    for frame in page.frames:
        try:
            found = frame.evaluate(_PROMISED_JS)
        except Error:
            continue  # a frame detached or navigating: its new document has promised nothing
        tab, download = str(found.get("tab") or ""), bool(found.get("download"))
        promise = Promise(promise.tab or tab, promise.download or download, promise.busy + int(found.get("busy") or 0))
    return promise
