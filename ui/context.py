"""Process-wide resources of the console: its session client and, when asked, the demo shop.

Created once per console process (`st.cache_resource`) and shared by every page and tab, which is
what makes two tabs show the same session and a reload find the run still going. The client
(`sessions.client.SessionClient`) runs sessions as `ANDOR_RUNNER` says (the console's own runner
threads, or workers on a shared database); on exit the console's own runners pause whatever is
still running. The bundled demo shop starts only when asked (`ANDOR_SHOP=1`; `make run` asks).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from sessions.client import SessionClient
from sessions.client.errors import SessionsError, StoreUnavailable
from ui.lifecycle import at_exit, before_threads_stop

if TYPE_CHECKING:
    from demo.shop import ShopServer

__all__ = ["Console", "console", "database_trouble"]

_DEFAULT_SHOP_PORT = 8765


@dataclass(frozen=True)
class Console:
    client: SessionClient
    shop: ShopServer | None = None
    shop_elsewhere: str | None = None
    """`$ANDOR_SHOP_URL`: a demo shop served apart from the console (`make fleet` runs one, so that
    sessions submitted before anyone opens the console find it)."""

    @property
    def shop_url(self) -> str | None:
        return self.shop.url if self.shop is not None else self.shop_elsewhere


def _shop() -> ShopServer | None:
    """The bundled shop on a fixed port, so sessions from an earlier console run can resume against it;
    only with `ANDOR_SHOP=1`, and not when `ANDOR_SHOP_URL` names one served elsewhere."""
    if os.environ.get("ANDOR_SHOP", "0") != "1" or os.environ.get("ANDOR_SHOP_URL"):
        return None
    from demo.shop import start_shop  # the demo is an application beside the console, loaded only when asked

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


def _release(ctx: Console) -> None:
    """When the cache lets the console go (`st.cache_resource.clear()`): its runners pause their sessions,
    its change feed stops listening and the shop stops, as at exit. A client left open kept listening to
    a database that later went away, and said so every second."""
    ctx.client.close()
    if ctx.shop is not None:
        ctx.shop.stop()


@st.cache_resource(show_spinner=False, on_release=_release)
def console() -> Console:
    try:
        client = SessionClient.connect()
    except StoreUnavailable:
        raise  # `database_trouble` says it in one sentence where the page would be, and the next run retries
    except SessionsError as error:
        st.error(str(error))
        st.stop()
        raise  # outside a script run, where `st.stop` does nothing
    shop = _shop()
    # Runners must pause their sessions while the interpreter can still run them (`ui.lifecycle`).
    before_threads_stop(client.stop_runners)
    if shop is not None:
        at_exit(shop.stop)
    at_exit(client.close)
    elsewhere = os.environ.get("ANDOR_SHOP_URL", "").rstrip("/") or None
    return Console(client, shop, elsewhere)
