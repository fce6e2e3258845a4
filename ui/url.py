"""The URL names what is on screen, so a reload or a shared link opens the same view: `?session=` and
`?node=` (written here) and `?tab=`, `?panel=` (the tab sets, bound to the URL by Streamlit itself).

Only the page's whole run writes `session` and `node`, never the live panel's timed fragment. Every run,
a fragment's too, starts from the query string the browser sent with its request, and a write sends
that whole string back. The fragment redraws every 0.75 s, so its request has often left the browser
before the URL last moved: a write from it could put back the session the operator had just left. So
a fragment that finds the URL behind what is on screen (`url_behind`) asks for a whole run instead,
and that run writes the URL from session state.

What the URL holds is also kept in session state under a key no widget has (`_URL`): Streamlit drops a
widget's value when a run is interrupted before the browser has seen the widget (as the first run
after a reload often is), and the picker and the node selector then fall back to the URL's values
(`linked`) instead of to the newest session and the root.
"""

from __future__ import annotations

import streamlit as st

from planner.tree import ROOT_ID, Tree

__all__ = ["NODE_KEY", "SESSION_KEY", "forget_node", "linked", "read_url", "shown_node", "url_behind", "write_url"]

SESSION_KEY = "session"
"""The session picker's key and the URL's `?session=`."""
NODE_KEY = "node"
"""The node selector's key and the URL's `?node=`."""
_URL = "_url"
"""{SESSION_KEY: ..., NODE_KEY: ...} as the URL holds them: read on the tab's first run, then as written."""


def read_url() -> None:
    """On a tab's first run, take the session and the node from the URL (a reload or a shared link)."""
    if _URL not in st.session_state:
        st.session_state[_URL] = {key: st.query_params.get(key) for key in (SESSION_KEY, NODE_KEY)}


def linked(key: str) -> str | None:
    """The URL's `?key=`, as this tab last read or wrote it."""
    return st.session_state.get(_URL, {}).get(key)


def forget_node() -> None:
    """A node id means nothing in another session: the next one opens on its root."""
    st.session_state.pop(NODE_KEY, None)
    st.session_state.setdefault(_URL, {})[NODE_KEY] = None


def shown_node(tree: Tree) -> str:
    """The selected node; else the URL's node; else the root (nothing selected, or a node of another
    session)."""
    selected = st.session_state.get(NODE_KEY)
    if selected not in tree:
        selected = linked(NODE_KEY)
        selected = st.session_state[NODE_KEY] = selected if selected in tree else ROOT_ID
    return selected


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
