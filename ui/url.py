"""The URL names what is on screen, so a reload or a shared link opens the same view: `?session=` and
`?node=` (written here) and `?tab=`, `?panel=` (the tab sets, bound to the URL by Streamlit itself).

Only the page's whole run writes `session` and `node`. A run's write sends back the whole query
string its request carried, and the live panel's fragment, redrawn every 0.75 s, often carries one
older than the URL: its write could put back the session the operator had just left. So a fragment
that finds the URL behind what is on screen (`url_behind`) asks for a whole run, which writes the
URL from session state.

What the URL holds is also kept in session state under a key no widget has (`_URL`): Streamlit drops a
widget's value when a run is interrupted before the browser has seen the widget (as the first run
after a reload often is), and the picker and the node selector then fall back to the URL's values
(`linked`) instead of to the newest session and the root.
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from planner.tree import ROOT_ID, Tree

__all__ = [
    "NODE_KEY",
    "SESSIONS_TABLE",
    "SESSION_KEY",
    "follow_agent",
    "follow_key",
    "following",
    "forget_node",
    "linked",
    "missing_session",
    "open_session",
    "picked_elsewhere",
    "picker_key",
    "read_url",
    "select",
    "selected_node",
    "session_on_screen",
    "shown_node",
    "shown_session",
    "url_behind",
    "write_url",
]

SESSION_KEY = "session"
"""The URL's `?session=`, and the key of the session picker's container."""
_SESSION = "_shown_session"
"""The id of the session on screen (see the module docstring for why no widget holds it)."""
SESSIONS_TABLE = "sessions_table"
"""The name of the All sessions table, a picker of sessions too: a row clicked opens that session."""
NODE_KEY = "node"
"""The URL's `?node=`, and the key of the node selector's container (its widget is keyed by the selection)."""
_SELECTED = "_selected_node"
"""The selected node's id (see the module docstring for why no widget holds it)."""
_MISSING = "_missing_session"
"""The session id a link named that the store does not have (see `shown_session`)."""
_FOLLOWING = "_following_agent"
"""Whether the tree follows the agent (absent: it does)."""
_FOLLOW_TURNS = "_follow_turns"
"""How often following was turned on or off: part of the toggle's key (`follow_key`)."""
_URL = "_url"
"""{SESSION_KEY: ..., NODE_KEY: ...} as the URL holds them: read on the tab's first run, then as written."""


def read_url() -> None:
    """On a tab's first run, take the session and the node from the URL (a reload or a shared link)."""
    if _URL not in st.session_state:
        st.session_state[_URL] = {key: st.query_params.get(key) for key in (SESSION_KEY, NODE_KEY)}


def linked(key: str) -> str | None:
    """The URL's `?key=`, as this tab last read or wrote it."""
    return st.session_state.get(_URL, {}).get(key)


def picker_key(name: str, shown: str | None) -> str:
    """The key of a picker that shows `shown`: a new choice makes a new widget (see the module docstring)."""
    return f"{name}_pick_{shown}"


def _follow(name: str, shown: str, options: Collection[str]) -> str:
    """`shown`, or the option the picker `name` keyed by `shown` now holds: that picker can only hold
    another option if the operator picked it (a request sent before the browser drew the latest choice
    carries an older key, and is ignored). Read here, where every reader of the choice asks, and not in
    the picker's callback: Streamlit skips that callback when the live panel's timer request carries
    the new value first (a fragment's run calls only the fragment's callbacks, and the whole run after
    it sees no change), and the sidebar then showed one session and the page another."""
    value = _picked(name, shown, options)
    if value is None:
        return shown
    (open_session if name == SESSION_KEY else select)(value)
    return value


def _picked(name: str, shown: str | None, options: Collection[str]) -> str | None:
    """The other option the picker `name` keyed by `shown` holds, if the operator picked one."""
    value = st.session_state.get(picker_key(name, shown))
    return value if value is not None and value != shown and value in options else None


def open_session(session_id: str) -> None:
    """Show another session (the sidebar's picker, a row of the sessions table, an inbox item, a new
    session or a fork), on its root. Both pickers of sessions start afresh on it."""
    st.session_state[_SESSION] = session_id
    st.session_state.pop(_MISSING, None)
    _fresh_picker(SESSION_KEY, session_id)
    _fresh_picker(SESSIONS_TABLE, session_id)
    forget_node()


def shown_session(session_ids: list[str]) -> str | None:
    """The session on screen: the one the picker holds or last opened; else the URL's (a reload or a shared link, which
    keeps the URL's node too); else the newest (`session_ids` comes newest first). None if there is none.

    A link to a session the store does not have opens the newest, and says so (`missing_session`):
    silently, a stale shared link showed another run as if it were the one linked."""
    shown = st.session_state.get(_SESSION)
    if shown not in session_ids:
        shown = linked(SESSION_KEY)
        if shown is not None and shown not in session_ids:
            st.session_state[_MISSING] = shown
        shown = st.session_state[_SESSION] = shown if shown in session_ids else next(iter(session_ids), None)
    return shown if shown is None else _follow(SESSION_KEY, shown, session_ids)


def missing_session() -> str | None:
    """The session a link named that the store does not have, until the operator opens another."""
    return st.session_state.get(_MISSING)


def picked_elsewhere(session_ids: Collection[str]) -> bool:
    """Whether the sidebar's picker holds another of `session_ids` than the session on screen. Its
    change can reach the server with a run of the live panel only (the timer's request carried the new
    value), which draws no sidebar; if the whole run that should follow never comes, the page would go
    on showing one session under a picker naming another. The panel then asks for a whole run itself,
    and `shown_session` follows the picker."""
    return _picked(SESSION_KEY, session_on_screen(), session_ids) is not None


def session_on_screen() -> str | None:
    """The session the page's last whole run put on screen, as it decided it (`shown_session`). The live
    panel's parts ask this: deciding again there could follow the sidebar's picker in a run that
    draws only the panel, and the panel would go on showing the session it was drawn for."""
    return st.session_state.get(_SESSION)


def select(node_id: str) -> None:
    """Select a node: the callbacks of a click in the tree, the selector, the J/K keys and the links.
    The tree stops following the agent: the operator looks at something of their own now."""
    _choose(node_id)
    follow_agent(False)


def _choose(node_id: str) -> None:
    st.session_state[_SELECTED] = node_id
    _fresh_picker(NODE_KEY, node_id)


def following() -> bool:
    """Whether the tree keeps the agent in view ("Follow agent"): on until the operator selects a node."""
    return bool(st.session_state.get(_FOLLOWING, True))


def follow_agent(on: bool) -> None:
    """Turn following on or off; the toggle showing it is drawn afresh when this changes its value,
    since a selection may come after the toggle was drawn in the same run (`follow_key`)."""
    if on != following():
        st.session_state[_FOLLOWING] = on
        st.session_state[_FOLLOW_TURNS] = st.session_state.get(_FOLLOW_TURNS, 0) + 1


def follow_key() -> str:
    """The key of the "Follow agent" toggle: a new one at each turn, so it always shows `following()`."""
    return f"follow_agent_{st.session_state.get(_FOLLOW_TURNS, 0)}"


def _fresh_picker(name: str, shown: str) -> None:
    """A new choice gets a picker with nothing in it but the choice: a value left under its key (by a
    picker of the same key shown earlier, in this session or another) would otherwise be followed."""
    st.session_state.pop(picker_key(name, shown), None)


def selected_node() -> str | None:
    """The node the operator selected last, if any (it may belong to no tree on screen: see `shown_node`)."""
    return st.session_state.get(_SELECTED)


def forget_node() -> None:
    """A node id means nothing in another session: the next one opens on its root."""
    st.session_state.pop(_SELECTED, None)
    st.session_state.setdefault(_URL, {})[NODE_KEY] = None
    follow_agent(True)


def shown_node(tree: Tree) -> str:
    """The node the selector holds or last selected; else the URL's node; else the root (nothing selected, or a node of another
    session)."""
    selected = selected_node()
    if selected is None or selected not in tree:
        wanted = linked(NODE_KEY)
        selected = wanted if wanted is not None and wanted in tree else ROOT_ID
        _choose(selected)  # the page's own choice (the URL's, or the root): the tree still follows the agent
    return _follow(NODE_KEY, selected, tree.nodes)


def _wanted(session_id: str, tree: Tree) -> dict[str, str | None]:
    return {SESSION_KEY: session_id, NODE_KEY: shown_node(tree) if len(tree) else None}


def write_url(session_id: str, tree: Tree) -> None:
    """Put the session and node on screen into the URL (the page's whole run only, see the module
    docstring); a parameter already right is not written again, since each write is a message."""
    wanted = _wanted(session_id, tree)
    for key, value in wanted.items():
        if value is None:
            st.query_params.pop(key, None)
        elif st.query_params.get(key) != value:
            st.query_params[key] = value
    st.session_state[_URL] = wanted


def url_behind(session_id: str, tree: Tree) -> bool:
    """Whether the URL the browser sent with this run's request names another session or node than
    the one on screen: the operator selected a node in the live panel, or the last write has not
    reached the browser yet. The live panel then asks for a whole run, which writes the URL."""
    return any(st.query_params.get(key) != value for key, value in _wanted(session_id, tree).items())
