"""Process-wide resources of the console: the store, who runs sessions, the change feed and the demo shop.

Created once per console process (`st.cache_resource`) and shared by every page and tab, which is
what makes two tabs show the same session and a reload find the run still going. `ANDOR_RUNNER`
says who runs sessions (`sessions.worker.pool.runners_for`: the console's own runner threads, or
workers on a shared database); on exit the console's own runners pause whatever is still running.
The change feed (`sessions.store.feed`) lets every redraw skip the store reads of sessions that have not
changed.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from demo.shop import ShopServer, start_shop
from sessions.backends import artifacts_root
from sessions.errors import SessionsError
from sessions.store import EventStore, StoreUnavailable, database_target
from sessions.store.feed import Changes, Reads, open_feed
from sessions.store.sql import open_store
from sessions.worker.pool import Runners, runners_for

__all__ = ["Console", "console", "database_trouble"]

_DEFAULT_SHOP_PORT = 8765


@dataclass(frozen=True)
class Console:
    store: EventStore
    pool: Runners
    shop: ShopServer | None
    artifacts: Path
    changes: Changes
    reads: Reads
    """The store reads every redraw repeats, reused until `changes` says their session changed."""

    shop_elsewhere: str | None = None
    """`$ANDOR_SHOP_URL`: a demo shop served apart from the console (`make fleet` runs one, so that
    sessions submitted before anyone opens the console, when its own shop would start, find it)."""

    @property
    def shop_url(self) -> str | None:
        return self.shop.url if self.shop is not None else self.shop_elsewhere


def _shop() -> ShopServer | None:
    """The bundled shop on a fixed port, so sessions from an earlier console run can resume against it;
    none with `ANDOR_SHOP=0`, or when `ANDOR_SHOP_URL` names one served elsewhere."""
    if os.environ.get("ANDOR_SHOP", "1") == "0" or os.environ.get("ANDOR_SHOP_URL"):
        return None
    port = int(os.environ.get("ANDOR_SHOP_PORT", _DEFAULT_SHOP_PORT))
    try:
        return start_shop(port=port)
    except OSError:
        return start_shop(port=0)


@contextmanager
def database_trouble() -> Iterator[None]:
    """A database the console cannot reach shows one sentence where the page (or the live panel) would
    be, instead of a traceback; the next drawing tries again."""
    try:
        yield
    except StoreUnavailable as error:
        st.error(f"{error}. Check ANDOR_DB and the database server; the page tries again when it is next drawn.")


@st.cache_resource(show_spinner=False)
def console() -> Console:
    db = str(database_target())
    store = open_store(db)
    artifacts = artifacts_root(db)
    try:
        pool = runners_for(os.environ.get("ANDOR_RUNNER"), store, artifacts)
    except SessionsError as error:
        store.close()
        st.error(str(error))
        st.stop()
        raise  # outside a script run, where `st.stop` does nothing
    changes = open_feed(store)
    shop = _shop()
    # Runners must pause their sessions while the interpreter can still run them: `threading`'s
    # exit hooks (where concurrent.futures stops its executors, which Playwright needs) run before
    # `atexit`'s, so a runner stopped from `atexit` would fail mid-action instead of pausing cleanly.
    threading._register_atexit(pool.shutdown)  # type: ignore[attr-defined]  # private, so typeshed leaves it out
    if shop is not None:
        atexit.register(shop.stop)
    atexit.register(changes.close)
    elsewhere = os.environ.get("ANDOR_SHOP_URL", "").rstrip("/") or None
    return Console(store, pool, shop, artifacts, changes, Reads(store, changes), elsewhere)
