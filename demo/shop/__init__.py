"""A small, deterministic web shop served on localhost, the offline stage for agent tests and demos.

`start_shop()` serves it from a daemon thread, so a test or demo can run it next to the browser::

    with start_shop() as shop:
        page.goto(shop.url)
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

from demo.shop.catalog import Catalog, default_catalog
from demo.shop.server import ShopHTTPServer, resolve_slow_seconds

__all__ = ["ShopServer", "start_shop"]


class ShopServer:
    """A running shop. Carts live as long as this object: a new server starts with every cart empty."""

    def __init__(self, httpd: ShopHTTPServer) -> None:
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="demo-shop", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """Base URL without a trailing slash, e.g. ``http://127.0.0.1:8765``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        """Stop serving and release the port. Calling it twice is harmless."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start_shop(
    port: int = 0,
    host: str = "127.0.0.1",
    *,
    catalog: Catalog | None = None,
    log_requests: bool = False,
    slow_seconds: float | None = None,
) -> ShopServer:
    """Serve the shop in a background thread; port 0 picks a free port (read it back from `.url`).

    `slow_seconds` is how long the slow pages take (default: $DEMO_SHOP_SLOW_SECONDS, else 2.0 s).
    """
    httpd = ShopHTTPServer(
        (host, port),
        catalog or default_catalog(),
        log_requests=log_requests,
        slow_seconds=resolve_slow_seconds(slow_seconds),
    )
    return ShopServer(httpd)
