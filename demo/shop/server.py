"""The HTTP side of the shop: routing, query and form parsing, the cart cookie, response headers.

Each route returns a `Response`; only `ShopHandler._dispatch` writes to the socket, so every
response gets the same headers (HTML content type, `Cache-Control: no-store`, a script-free
Content-Security-Policy) whatever the route.
"""

from __future__ import annotations

import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

from demo.shop import pages
from demo.shop.catalog import Catalog, Filters, Sort, apply_filters, paginate, search, sort_products
from demo.shop.store import MAX_QUANTITY, Store

__all__ = [
    "BROKEN_PRICE_FILTER_CATEGORY",
    "CART_COOKIE",
    "CONSENT_COOKIE",
    "IGNORED_FILTER",
    "SESSION_COOKIE",
    "SLOW_PATHS",
    "SLOW_SECONDS",
    "Response",
    "ShopHTTPServer",
    "ShopHandler",
    "resolve_slow_seconds",
]

BROKEN_PRICE_FILTER_CATEGORY = "headphones"
"""The category whose price filter always fails with a 500, so an agent has to find another way."""

IGNORED_FILTER = ("backpacks", "max_price")
"""(category, parameter): a filter value the category accepts, shows in its form, and silently ignores."""

SLOW_PATHS = frozenset({"/deals"})
"""Pages that answer only after `slow_seconds`, like a real shop's slow, personalised pages."""

SLOW_SECONDS = 2.0
"""The slow pages' default delay; `DEMO_SHOP_SLOW_SECONDS` or `start_shop(slow_seconds=...)` change it."""

CART_COOKIE = "demo_cart"
CONSENT_COOKIE = "demo_consent"
SESSION_COOKIE = "demo_session"
MAX_BODY_BYTES = 16 * 1024
MAX_PRICE = Decimal(100000)

_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
}


@dataclass(slots=True)
class Response:
    status: HTTPStatus
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class BadRequest(Exception):
    """A query or form value the shop cannot use; the message is shown to the visitor as is."""


def _first(params: dict[str, list[str]], name: str) -> str:
    return params.get(name, [""])[0].strip()


def _page_number(raw: str) -> int:
    if not raw:
        return 1
    if not raw.isdigit():
        raise BadRequest("Page must be a whole number.")
    return int(raw)


def _sort(raw: str) -> Sort:
    try:
        return Sort(raw) if raw else Sort.FEATURED
    except ValueError:
        raise BadRequest(f"Unknown sort order. Use one of: {', '.join(s.value for s in Sort)}.") from None


def resolve_slow_seconds(value: float | None = None) -> float:
    """The delay of the slow pages: `value`, else $DEMO_SHOP_SLOW_SECONDS, else SLOW_SECONDS (tests set it short)."""
    if value is None:
        raw = os.environ.get("DEMO_SHOP_SLOW_SECONDS", "")
        try:
            value = float(raw) if raw else SLOW_SECONDS
        except ValueError:
            raise ValueError(f"DEMO_SHOP_SLOW_SECONDS must be a number of seconds, not {raw!r}") from None
    if not 0 <= value <= 60:
        raise ValueError(f"the slow pages' delay must be from 0 to 60 seconds, not {value}")
    return value


def _local_path(raw: str, fallback: str) -> str:
    """A same-site path to return to after a form (never another site: `//evil` and `http:` are refused)."""
    return raw if re.fullmatch(r"/(?![/\\])[^\s]*", raw) else fallback


def _decimal(raw: str, label: str, low: Decimal, high: Decimal) -> Decimal | None:
    if not raw:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or not low <= value <= high:
        raise BadRequest(f"{label} must be a number from {low} to {high}.")
    return value


class ShopHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that carries the catalog and the in-memory carts for its handlers."""

    daemon_threads = True
    server_address: tuple[str, int]
    """The address it is bound to: an IPv4 socket's, a host that is a string."""

    def __init__(
        self,
        address: tuple[str, int],
        catalog: Catalog,
        *,
        log_requests: bool = False,
        slow_seconds: float = SLOW_SECONDS,
    ) -> None:
        super().__init__(address, ShopHandler)
        self.catalog = catalog
        self.store = Store(catalog)
        self.log_requests = log_requests
        self.slow_seconds = slow_seconds


class ShopHandler(BaseHTTPRequestHandler):
    server: ShopHTTPServer
    server_version = "DemoShop/1.0"

    def do_GET(self) -> None:
        self._dispatch(_GET_ROUTES, _POST_ROUTES, "POST")

    def do_POST(self) -> None:
        self._dispatch(_POST_ROUTES, _GET_ROUTES, "GET")

    def log_message(self, format: str, *args: object) -> None:
        if self.server.log_requests:
            super().log_message(format, *args)

    # -- plumbing

    def _dispatch(self, routes: _Routes, other: _Routes, other_method: str) -> None:
        path = urlsplit(self.path).path
        if path in SLOW_PATHS:
            time.sleep(self.server.slow_seconds)
        try:
            response = self._route(path, routes, other, other_method)
        except BadRequest as exc:
            response = self._error(HTTPStatus.BAD_REQUEST, "Bad request", str(exc))
        except Exception:  # noqa: BLE001 - a bug must still answer with a page, not a dropped connection
            traceback.print_exc(file=sys.stderr)
            response = self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR, "Something went wrong", "An unexpected error occurred."
            )
        body = response.body.encode("utf-8")
        self.send_response(response.status)
        headers = {**_HEADERS, **response.headers}
        if body:
            headers["Content-Type"] = "text/html; charset=utf-8"
        headers["Content-Length"] = str(len(body))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _route(self, path: str, routes: _Routes, other: _Routes, other_method: str) -> Response:
        for pattern, handler in routes:
            if match := pattern.fullmatch(path):
                return handler(self, *(unquote(g) for g in match.groups()))
        if any(pattern.fullmatch(path) for pattern, _ in other):
            response = self._error(
                HTTPStatus.METHOD_NOT_ALLOWED, "Method not allowed", f"Use {other_method} for this page."
            )
            response.headers["Allow"] = other_method
            return response
        return self._not_found("Page not found", "There is no page at this address.")

    def _query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query, keep_blank_values=True)

    def _form(self) -> dict[str, list[str]]:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise BadRequest("Content-Length must be a number.") from None
        if not 0 <= length <= MAX_BODY_BYTES:
            raise BadRequest("The form is too large.")
        return parse_qs(self.rfile.read(length).decode("utf-8", errors="replace"), keep_blank_values=True)

    def _cookie(self, name: str) -> str | None:
        try:
            morsel = SimpleCookie(self.headers.get("Cookie", "")).get(name)
        except CookieError:
            return None
        return morsel.value if morsel is not None else None

    def _cart_id(self) -> str | None:
        return self._cookie(CART_COOKIE)

    def _header(self, query: str = "") -> pages.SiteHeader:
        count = sum(line.quantity for line in self.server.store.lines(self._cart_id()))
        return pages.SiteHeader(tuple(self.server.catalog.categories), count, query)

    def _page(self, html: str, status: HTTPStatus = HTTPStatus.OK) -> Response:
        return Response(status, html)

    def _error(self, status: HTTPStatus, title: str, message: str, link: tuple[str, str] | None = None) -> Response:
        return Response(status, pages.error_page(self._header(), title, message, link))

    def _not_found(self, title: str, message: str) -> Response:
        return self._error(HTTPStatus.NOT_FOUND, title, message)

    def _redirect(self, location: str, extra: dict[str, str] | None = None) -> Response:
        return Response(HTTPStatus.SEE_OTHER, headers={"Location": location, **(extra or {})})

    # -- GET routes

    def _home(self) -> Response:
        catalog = self.server.catalog
        featured = [p for pid in catalog.featured if (p := catalog.product(pid))]
        return self._page(pages.home_page(self._header(), featured))

    def _search(self) -> Response:
        params = self._query()
        query, order = _first(params, "q"), _sort(_first(params, "sort"))
        products = sort_products(search(self.server.catalog, query), order)
        listing = paginate(products, _page_number(_first(params, "page")))
        return self._page(pages.search_page(self._header(query), query, order, listing))

    def _category(self, slug: str) -> Response:
        category = self.server.catalog.category(slug)
        if category is None:
            return self._not_found("Category not found", "There is no such category.")
        params = self._query()
        if slug == BROKEN_PRICE_FILTER_CATEGORY and (_first(params, "min_price") or _first(params, "max_price")):
            return self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The price filter is temporarily unavailable.",
                (pages.category_url(category), f"Back to {category.name}"),
            )
        filters = Filters(
            min_price=_decimal(_first(params, "min_price"), "Min price", Decimal(0), MAX_PRICE),
            max_price=_decimal(_first(params, "max_price"), "Max price", Decimal(0), MAX_PRICE),
            min_rating=_decimal(_first(params, "min_rating"), "Minimum rating", Decimal(0), Decimal(5)),
        )
        applied = filters
        if slug == IGNORED_FILTER[0]:  # the form still shows the value; the results ignore it
            applied = replace(filters, **{IGNORED_FILTER[1]: None})
        order = _sort(_first(params, "sort"))
        products = sort_products(apply_filters(self.server.catalog.in_category(slug), applied), order)
        listing = paginate(products, _page_number(_first(params, "page")))
        return self._page(pages.category_page(self._header(), category, filters, order, listing))

    def _product(self, product_id: str) -> Response:
        catalog = self.server.catalog
        product = catalog.product(product_id)
        if product is None:
            return self._not_found("Product not found", "There is no such product.")
        category = catalog.category(product.category)
        assert category is not None  # the catalog validates that every product's category exists
        back = self._back_href(pages.category_url(category))
        return self._page(pages.product_page(self._header(), product, category, back))

    def _back_href(self, fallback: str) -> str:
        """The listing the visitor came from, if the Referer is one of this shop's listings."""
        referer = urlsplit(self.headers.get("Referer", ""))
        if referer.netloc != self.headers.get("Host") or not re.fullmatch(r"/|/search|/category/[^/]+", referer.path):
            return fallback
        return referer.path + (f"?{referer.query}" if referer.query else "")

    def _deals(self) -> Response:
        params = self._query()
        order = _sort(_first(params, "sort"))
        listing = paginate(sort_products(self.server.catalog.on_sale(), order), _page_number(_first(params, "page")))
        ask = self._cookie(CONSENT_COOKIE) is None
        return self._page(pages.deals_page(self._header(), order, listing, ask_consent=ask))

    def _account(self) -> Response:
        account = self.server.catalog.account
        if account is None:
            return self._not_found("Page not found", "This shop has no customer accounts.")
        if not self.server.store.signed_in(self._cookie(SESSION_COOKIE)):
            return self._redirect("/login?next=" + quote("/account"))
        saved = [p for pid in account.saved if (p := self.server.catalog.product(pid))]
        return self._page(pages.account_page(self._header(), account.name, account.email, saved))

    def _login(self) -> Response:
        next_path = _local_path(_first(self._query(), "next"), "/account")
        return self._page(pages.login_page(self._header(), next_path))

    def _cart(self) -> Response:
        added = self.server.catalog.product(_first(self._query(), "added"))
        return self._page(pages.cart_page(self._header(), self.server.store.lines(self._cart_id()), added))

    def _checkout(self) -> Response:
        return self._page(pages.checkout_page(self._header(), self.server.store.lines(self._cart_id())))

    # -- POST routes

    def _cart_add(self) -> Response:
        form = self._form()
        product = self.server.catalog.product(_first(form, "product_id"))
        if product is None:
            raise BadRequest("That product does not exist.")
        if not product.in_stock:
            raise BadRequest(f"{product.name} is out of stock.")
        raw_quantity = _first(form, "quantity") or "1"
        if not raw_quantity.isdigit() or not 1 <= int(raw_quantity) <= MAX_QUANTITY:
            raise BadRequest(f"Quantity must be a whole number from 1 to {MAX_QUANTITY}.")
        store, cart_id, cookie = self.server.store, self._cart_id(), {}
        if cart_id is None or not store.has_cart(cart_id):
            cart_id = store.new_cart()
            cookie = {"Set-Cookie": f"{CART_COOKIE}={cart_id}; Path=/; HttpOnly; SameSite=Lax"}
        store.add(cart_id, product.id, int(raw_quantity))
        return self._redirect(f"/cart?added={product.id}", cookie)

    def _cart_remove(self) -> Response:
        self.server.store.remove(self._cart_id(), _first(self._form(), "product_id"))
        return self._redirect("/cart")

    def _consent(self) -> Response:
        form = self._form()
        choice = _first(form, "choice")
        if choice not in ("all", "necessary"):
            raise BadRequest("Choose which cookies to accept.")
        cookie = {"Set-Cookie": f"{CONSENT_COOKIE}={choice}; Path=/; SameSite=Lax"}
        return self._redirect(_local_path(_first(form, "next"), "/"), cookie)

    def _login_post(self) -> Response:
        form = self._form()
        email, password = _first(form, "email"), _first(form, "password")
        next_path = _local_path(_first(form, "next"), "/account")
        account = self.server.catalog.account
        if account is None or email.casefold() != account.email.casefold() or password != account.password:
            html = pages.login_page(
                self._header(), next_path, error="The email or password is not right.", email=email[:200]
            )
            return self._page(html, HTTPStatus.UNAUTHORIZED)
        session_id = self.server.store.sign_in()
        cookie = {"Set-Cookie": f"{SESSION_COOKIE}={session_id}; Path=/; HttpOnly; SameSite=Lax"}
        return self._redirect(next_path, cookie)

    def _checkout_place(self) -> Response:
        form = self._form()
        name, address, password = _first(form, "name"), _first(form, "address"), _first(form, "password")
        cart_id, store = self._cart_id(), self.server.store
        lines = store.lines(cart_id)
        if cart_id is None or not lines:
            return self._redirect("/cart")
        fields = (("Full name", name), ("Shipping address", address), ("Account password", password))
        blank = [label for label, value in fields if not value]
        error = f"Please fill in: {', '.join(blank)}." if blank else None
        if not error and (len(name) > 200 or len(address) > 500):
            error = "The name or address is too long."
        if error:
            html = pages.checkout_page(self._header(), lines, error=error, name=name, address=address)
            return self._page(html, HTTPStatus.BAD_REQUEST)
        order = store.place_order(cart_id, name, address)
        if order is None:  # emptied by a concurrent request since `lines` was read
            return self._redirect("/cart")
        return self._page(pages.order_page(self._header(), order))


_Routes = list[tuple[re.Pattern[str], Callable[..., Response]]]

_GET_ROUTES: _Routes = [
    (re.compile(r"/"), ShopHandler._home),
    (re.compile(r"/search"), ShopHandler._search),
    (re.compile(r"/category/([^/]+)"), ShopHandler._category),
    (re.compile(r"/product/([^/]+)"), ShopHandler._product),
    (re.compile(r"/cart"), ShopHandler._cart),
    (re.compile(r"/checkout"), ShopHandler._checkout),
    (re.compile(r"/deals"), ShopHandler._deals),
    (re.compile(r"/account"), ShopHandler._account),
    (re.compile(r"/login"), ShopHandler._login),
]

_POST_ROUTES: _Routes = [
    (re.compile(r"/cart/add"), ShopHandler._cart_add),
    (re.compile(r"/cart/remove"), ShopHandler._cart_remove),
    (re.compile(r"/checkout/place"), ShopHandler._checkout_place),
    (re.compile(r"/consent"), ShopHandler._consent),
    (re.compile(r"/login"), ShopHandler._login_post),
]
