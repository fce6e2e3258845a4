"""The bundled demo shop over real HTTP, and the demo tasks' answers checked against its data.

Expected answers are computed from catalog.json with the shop's own search/filter/sort functions,
then looked for in the pages the server actually returns.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from decimal import Decimal
from html.parser import HTMLParser
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest

from demo.shop import ShopServer, pages, start_shop
from demo.shop.catalog import (
    PER_PAGE,
    Catalog,
    Filters,
    Product,
    Sort,
    apply_filters,
    default_catalog,
    paginate,
    search,
    sort_products,
)
from demo.shop.server import resolve_slow_seconds
from demo.tasks import CORRECTED_KINDS, Correction, DemoTask, TaskKind, Trouble, check_answer, load_tasks
from planner.commands import parse_command

XSS = "<img src=x onerror=alert(1)>"


SLOW = 0.3
"""The slow pages' delay in these tests: short, but long enough to tell apart from a normal page."""


@pytest.fixture(scope="module")
def shop() -> Iterator[ShopServer]:
    with start_shop(slow_seconds=SLOW) as server:
        yield server


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


class Fetched:
    def __init__(self, status: int, url: str, headers: dict[str, str], body: str) -> None:
        self.status, self.url, self.headers, self.body = status, url, headers, body

    @property
    def text(self) -> str:
        return visible_text(self.body)

    def product_ids(self) -> list[str]:
        """Product links of the result list, in page order."""
        return re.findall(r'<h3><a href="/product/([^"]+)">', self.body)

    def controls(self) -> list[str]:
        return markup(self.body).controls


def fetch(
    url: str,
    data: dict[str, str] | None = None,
    *,
    opener: urllib.request.OpenerDirector | None = None,
    headers: dict[str, str] | None = None,
) -> Fetched:
    """GET (or POST a form) and return the page whatever its status; redirects are followed."""
    body = urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=60) as response:
            return Fetched(response.status, response.url, dict(response.headers), response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        with error:
            return Fetched(error.code, url, dict(error.headers), error.read().decode("utf-8"))


def browser() -> urllib.request.OpenerDirector:
    """An opener with its own cookie jar: one shopper with one cart."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("style", "script", "title")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("style", "script", "title")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


class _Markup(HTMLParser):
    """What an accessibility tree and a crawler make of a page: control names, hidden text, JSON-LD."""

    _VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.controls: list[str] = []  # accessible names of links and buttons, in page order
        self.hidden_text: list[str] = []  # text under aria-hidden: AI-mode snapshots still show it
        self.svgs = 0
        self.exposed_svgs = 0  # SVGs without aria-hidden="true"
        self.json_ld: list[object] = []
        self._open: list[tuple[str, bool]] = []  # (tag, aria-hidden here or above)
        self._control: list[str] | None = None
        self._label: str | None = None
        self._raw: list[str] | None = None  # inside <style> or <script>

    def _hidden(self) -> bool:
        return bool(self._open) and self._open[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "svg":
            self.svgs += 1
            self.exposed_svgs += attr.get("aria-hidden") != "true"
        if tag in ("a", "button"):
            self._control, self._label = [], attr.get("aria-label")
        if tag in ("style", "script"):
            self._raw = [] if attr.get("type", "application/ld+json") == "application/ld+json" else None
        if tag not in self._VOID:
            self._open.append((tag, self._hidden() or attr.get("aria-hidden") == "true"))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # only inside SVG symbols: no text, no controls

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass
        if tag in ("a", "button") and self._control is not None:
            self.controls.append(self._label or " ".join("".join(self._control).split()))
            self._control = None
        if tag == "script" and self._raw is not None:
            self.json_ld.append(json.loads("".join(self._raw)))
        if tag in ("style", "script"):
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._raw.append(data)
        elif self._hidden() and data.strip():
            self.hidden_text.append(data)
        elif self._control is not None:
            self._control.append(data)


def markup(html: str) -> _Markup:
    parser = _Markup()
    parser.feed(html)
    parser.close()
    return parser


def ld_blocks(html: str) -> dict[str, dict]:
    """The page's JSON-LD blocks (each must parse as JSON) by their @type."""
    return {block["@type"]: block for block in markup(html).json_ld}  # type: ignore[index]


def by_name(catalog: Catalog, name: str) -> Product:
    (product,) = [p for p in catalog.products if p.name == name]
    return product


def money(product: Product) -> str:
    return f"{product.price:.2f}"


# -- pages


def test_home_page_has_search_form_menu_and_featured_products(shop: ShopServer, catalog: Catalog) -> None:
    page = fetch(shop.url + "/")
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.headers["Cache-Control"] == "no-store"
    assert "<title>Home | Demo Shop</title>" in page.body
    assert '<label for="q">Search products</label>' in page.body
    assert '<input id="q" type="search" name="q" value="">' in page.body
    assert '<button type="submit">Search</button>' in page.body
    for category in catalog.categories:
        link = f'<a href="/category/{category.slug}">{category.name}</a>'
        assert (link in page.body) is category.listed
    assert page.product_ids() == catalog.featured


def test_search_returns_matching_products_in_the_chosen_order(shop: ShopServer, catalog: Catalog) -> None:
    page = fetch(shop.url + "/search?q=espresso&sort=price_asc")
    expected = sort_products(search(catalog, "espresso"), Sort.PRICE_ASC)
    assert len(expected) == 4
    assert page.product_ids() == [p.id for p in expected]
    cheapest = expected[0]
    assert f"{cheapest.name} by {cheapest.brand} Price: ${money(cheapest)}" in page.text
    assert f"Rating: {cheapest.rating:.1f} out of 5 ({cheapest.review_count} reviews)" in page.text
    assert 'aria-current="true">Price: low to high</a>' in page.body
    featured = fetch(shop.url + "/search?q=espresso")
    assert featured.product_ids() == [p.id for p in search(catalog, "espresso")] != page.product_ids()


def test_search_ignores_attribute_values_and_plural_s(catalog: Catalog) -> None:
    wireless = {p.id for p in search(catalog, "wireless")}
    assert {p.id for p in catalog.products if p.attributes.get("Wireless") == "No"}.isdisjoint(wireless)
    assert [p.id for p in search(catalog, "printers")] == [p.id for p in catalog.in_category("printers")]
    assert search(catalog, "") == catalog.products


def test_search_paginates_eight_per_page(shop: ShopServer, catalog: Catalog) -> None:
    expected = [p.id for p in search(catalog, "wireless")]
    assert PER_PAGE < len(expected) <= 2 * PER_PAGE
    first = fetch(shop.url + "/search?q=wireless")
    second = fetch(shop.url + "/search?q=wireless&page=2")
    assert first.product_ids() == expected[:PER_PAGE]
    assert second.product_ids() == expected[PER_PAGE:]
    assert '<a href="/search?q=wireless&amp;page=2" rel="next">Next page</a>' in first.body
    assert "Previous page" not in first.text and "Page 1 of 2" in first.text
    assert '<a href="/search?q=wireless" rel="prev">Previous page</a>' in second.body
    assert "Next page" not in second.text
    assert f"Showing 9 to {len(expected)} of {len(expected)} products" in second.text
    assert fetch(shop.url + "/search?q=wireless&page=99").product_ids() == expected[PER_PAGE:]
    assert fetch(shop.url + "/search?q=wireless&page=two").status == 400


def test_search_without_results(shop: ShopServer) -> None:
    page = fetch(shop.url + "/search?q=submarine")
    assert page.status == 200
    assert "No products match \u201csubmarine\u201d." in page.text
    assert page.product_ids() == []


def test_category_filter_form_filters_and_sorts(shop: ShopServer, catalog: Catalog) -> None:
    page = fetch(shop.url + "/category/printers?min_price=80&max_price=150&min_rating=4.0&sort=price_asc")
    filters = Filters(Decimal(80), Decimal(150), Decimal("4.0"))
    expected = sort_products(apply_filters(catalog.in_category("printers"), filters), Sort.PRICE_ASC)
    assert 2 <= len(expected) < len(catalog.in_category("printers"))
    assert page.status == 200
    assert page.product_ids() == [p.id for p in expected]
    assert '<label for="min_price">Min price</label>' in page.body
    assert 'name="max_price" type="number" min="0" step="0.01" value="150.00"' in page.body
    assert '<label for="min_rating">Minimum rating</label>' in page.body
    assert '<option value="4.0" selected>4.0 and up</option>' in page.body
    assert '<input type="hidden" name="sort" value="price_asc">' in page.body
    assert '<button type="submit">Apply filters</button>' in page.body
    assert '<a href="/category/printers">Clear filters</a>' in page.body
    by_reviews = fetch(shop.url + "/category/printers?min_price=80&max_price=150&min_rating=4.0&sort=reviews")
    assert by_reviews.product_ids() == [p.id for p in sort_products(expected, Sort.REVIEWS)]
    assert fetch(shop.url + "/category/printers?min_price=999").text.count("No products match these filters.") == 1
    assert fetch(shop.url + "/category/printers?max_price=cheap").status == 400
    assert fetch(shop.url + "/category/printers?sort=random").status == 400


def test_category_pages_with_the_sort_kept_in_pagination_links(shop: ShopServer, catalog: Catalog) -> None:
    printers = sort_products(catalog.in_category("printers"), Sort.RATING)
    assert len(printers) > PER_PAGE
    first = fetch(shop.url + "/category/printers?sort=rating")
    assert first.product_ids() == [p.id for p in printers[:PER_PAGE]]
    assert '<a href="/category/printers?sort=rating&amp;page=2" rel="next">Next page</a>' in first.body
    second = fetch(shop.url + "/category/printers?sort=rating&page=2")
    assert second.product_ids() == [p.id for p in printers[PER_PAGE:]]


def test_headphones_price_filter_is_broken_but_rating_sort_and_search_work(shop: ShopServer, catalog: Catalog) -> None:
    for query in ("max_price=100", "min_price=10", "min_price=20&max_price=100&sort=price_asc"):
        broken = fetch(shop.url + "/category/headphones?" + query)
        assert broken.status == 500
        assert broken.headers["Cache-Control"] == "no-store"
        assert "<title>Something went wrong | Demo Shop</title>" in broken.body
        assert "Something went wrong The price filter is temporarily unavailable." in broken.text
    headphones = catalog.in_category("headphones")
    rated = fetch(shop.url + "/category/headphones?min_price=&max_price=&min_rating=4.5")
    assert rated.status == 200
    expected = apply_filters(headphones, Filters(min_rating=Decimal("4.5")))
    assert rated.product_ids() == [p.id for p in expected] and 0 < len(expected) < len(headphones)
    by_price = fetch(shop.url + "/category/headphones?sort=price_asc")
    assert by_price.product_ids() == [p.id for p in paginate(sort_products(headphones, Sort.PRICE_ASC), 1).items]
    assert fetch(shop.url + "/search?q=over-ear+headphones").status == 200
    assert fetch(shop.url + "/category/keyboards?max_price=100").status == 200


def test_product_page_has_specs_table_add_to_cart_and_back_link(shop: ShopServer, catalog: Catalog) -> None:
    product = catalog.product("lumen-photojet-p5")
    assert product is not None
    page = fetch(shop.url + "/product/lumen-photojet-p5")
    assert page.status == 200
    assert f"<h1>{product.name}</h1>" in page.body
    rows = dict(re.findall(r'<tr><th scope="row">([^<]+)</th><td>([^<]+)</td></tr>', page.body))
    assert rows == {"Brand": "Lumen", "Category": "Printers", **product.attributes}
    assert f"Price: ${money(product)} Rating: 4.5 out of 5 ({product.review_count} reviews)" in page.text
    assert product.description in page.text
    assert all(review.text in page.text for review in product.reviews)
    assert '<form action="/cart/add" method="post">' in page.body
    assert '<button type="submit">Add to cart</button>' in page.body
    assert '<a href="/category/printers">Back to results</a>' in page.body
    came_from = {"Referer": f"{shop.url}/search?q=photo&page=2"}
    back = fetch(shop.url + "/product/lumen-photojet-p5", headers=came_from)
    assert '<a href="/search?q=photo&amp;page=2">Back to results</a>' in back.body
    foreign = fetch(shop.url + "/product/lumen-photojet-p5", headers={"Referer": "http://evil.test/search?q=x"})
    assert '<a href="/category/printers">Back to results</a>' in foreign.body


def test_cart_and_checkout_flow_with_a_cookie(shop: ShopServer, catalog: Catalog) -> None:
    shopper = browser()
    assert "Your cart is empty." in fetch(shop.url + "/cart", opener=shopper).text
    backpack = by_name(catalog, "Acme Commuter 20L")
    added = fetch(shop.url + "/cart/add", {"product_id": backpack.id, "quantity": "2"}, opener=shopper)
    assert added.status == 200 and added.url.endswith(f"/cart?added={backpack.id}")
    assert f"Added {backpack.name} to your cart." in added.text
    total = format(backpack.price * 2, ".2f")
    assert f"Total: ${total}" in added.text and "Cart (2)" in added.text
    assert '<a href="/checkout">Proceed to checkout</a>' in added.body
    assert "Your cart is empty." in fetch(shop.url + "/cart").text  # another client, another cart

    checkout = fetch(shop.url + "/checkout", opener=shopper)
    for label in ("Full name", "Shipping address", "Account password"):
        assert f">{label}</label>" in checkout.body
    assert '<input id="password" name="password" type="password"' in checkout.body
    assert '<button type="submit">Place order</button>' in checkout.body

    form = {"name": "Jane Doe", "address": "1 Main Street, Springfield", "password": ""}
    refused = fetch(shop.url + "/checkout/place", form, opener=shopper)
    assert refused.status == 400 and "Please fill in: Account password." in refused.text
    assert 'value="Jane Doe"' in refused.body

    placed = fetch(shop.url + "/checkout/place", {**form, "password": "s3cret-pw"}, opener=shopper)
    assert placed.status == 200
    assert "<h1>Order placed</h1>" in placed.body
    assert re.search(r"Your order number is DS-\d+\.", placed.text)
    assert f"Total charged: ${total}" in placed.text and "s3cret-pw" not in placed.body
    assert "Your cart is empty." in fetch(shop.url + "/cart", opener=shopper).text

    again = fetch(shop.url + "/cart/add", {"product_id": backpack.id}, opener=shopper)
    remove = re.search(r'<button type="submit" aria-label="Remove ([^"]+)">Remove</button>', again.body)
    assert remove is not None and remove.group(1) == backpack.name
    removed = fetch(shop.url + "/cart/remove", {"product_id": backpack.id}, opener=shopper)
    assert "Your cart is empty." in removed.text


def test_link_and_button_names_are_unique_on_every_page(shop: ShopServer) -> None:
    shopper = browser()
    fetch(shop.url + "/cart/add", {"product_id": "acme-basicprint"}, opener=shopper)
    fetch(shop.url + "/cart/add", {"product_id": "vantage-meetcam"}, opener=shopper)
    paths = [
        "/",
        "/search?q=",
        "/search?q=wireless&page=2",
        "/category/headphones?min_rating=4.0",
        "/category/headphones?max_price=50",
        "/product/vantage-meetcam",
        "/cart",
        "/checkout",
    ]
    for path in paths:
        names = markup(fetch(shop.url + path, opener=shopper).body).controls
        assert len(names) == len(set(names)) > 3, path
        assert all(names) and "Webcams" not in names, path
        assert {"Demo Shop", "Search", "Cart (2)", "Printers", "All products"} <= set(names), path


def test_cart_rejects_unknown_products_and_bad_quantities(shop: ShopServer) -> None:
    assert fetch(shop.url + "/cart/add", {"product_id": "no-such-thing"}).status == 400
    assert fetch(shop.url + "/cart/add", {"product_id": "acme-basicprint", "quantity": "0"}).status == 400
    assert fetch(shop.url + "/cart/add", {"product_id": "acme-basicprint", "quantity": "11"}).status == 400
    assert fetch(shop.url + "/cart/add").status == 405
    assert fetch(shop.url + "/search", {"q": "x"}).status == 405


def test_query_and_catalog_text_are_escaped(shop: ShopServer, catalog: Catalog) -> None:
    page = fetch(shop.url + "/search?" + urlencode({"q": XSS}))
    assert page.status == 200
    assert XSS not in page.body and "&lt;img src=x onerror=alert(1)&gt;" in page.body
    assert "No products match" in page.text
    assert "script-src" not in page.headers["Content-Security-Policy"]  # default-src 'none' forbids scripts

    evil = catalog.products[0].model_copy(update={"name": XSS, "brand": XSS, "description": XSS})
    header = pages.SiteHeader(tuple(catalog.categories), 0, XSS)
    category = catalog.categories[0]
    html = "".join(
        (
            pages.product_page(header, evil, category, '"><script>x</script>'),
            pages.home_page(header, [evil]),
            pages.error_page(header, XSS, XSS, (XSS, XSS)),
        )
    )
    assert "<img" not in html and "<script>" not in html
    assert visible_text(html).count(XSS) >= 5
    data = ld_blocks(pages.product_page(header, evil, category, "/"))["Product"]
    assert data["name"] == data["brand"]["name"] == data["description"] == XSS  # type: ignore[index]


def test_product_page_carries_schema_org_data_and_meta_tags(shop: ShopServer, catalog: Catalog) -> None:
    product = catalog.product("lumen-photojet-p5")
    assert product is not None
    body = fetch(shop.url + "/product/lumen-photojet-p5").body
    blocks = ld_blocks(body)
    data = blocks["Product"]
    assert (data["name"], data["sku"], data["brand"]["name"]) == (product.name, product.id, product.brand)
    assert data["offers"]["price"] == money(product) and data["offers"]["priceCurrency"] == "USD"
    assert data["aggregateRating"]["ratingValue"] == f"{product.rating:.1f}"
    assert data["aggregateRating"]["reviewCount"] == product.review_count
    assert {p["name"]: p["value"] for p in data["additionalProperty"]} == product.attributes
    assert [r["reviewBody"] for r in data["review"]] == [r.text for r in product.reviews]
    trail = blocks["BreadcrumbList"]["itemListElement"]
    assert [step["name"] for step in trail] == ["Home", "Printers", product.name]
    assert f'<meta name="description" content="{product.description}">' in body
    assert '<meta property="og:type" content="product">' in body
    assert f'<meta property="product:price:amount" content="{money(product)}">' in body
    assert '<nav class="breadcrumb" aria-label="Breadcrumb">' in body
    assert "Home Printers Lumen PhotoJet P5 Back to results" in visible_text(body)


def test_listings_carry_item_lists_and_the_home_page_a_site_search(shop: ShopServer) -> None:
    page = fetch(shop.url + "/category/printers?sort=rating")
    items = ld_blocks(page.body)["ItemList"]
    assert [item["url"] for item in items["itemListElement"]] == [f"/product/{i}" for i in page.product_ids()]
    assert items["numberOfItems"] == 9
    assert '<meta name="robots" content="noindex, follow">' in page.body  # a sorted copy of the listing
    site = ld_blocks(fetch(shop.url + "/").body)["WebSite"]
    assert site["potentialAction"]["target"]["urlTemplate"] == "/search?q={search_term_string}"


def test_pages_weigh_like_a_real_shop_without_growing_the_accessibility_tree(shop: ShopServer) -> None:
    """Styles, icons and structured data make realistic page weights; none of it is read by an agent."""
    shopper = browser()
    fetch(shop.url + "/cart/add", {"product_id": "acme-basicprint"}, opener=shopper)
    for path in ("/", "/category/printers", "/search?q=wireless", "/product/lumen-photojet-p5"):
        body = fetch(shop.url + path).body
        assert 20_000 <= len(body.encode()) <= 50_000, (path, len(body.encode()))
    for path in ("/", "/category/headphones?max_price=1", "/product/acme-basicprint", "/cart", "/checkout"):
        page = markup(fetch(shop.url + path, opener=shopper).body)
        assert page.svgs > 0 and page.exposed_svgs == 0, path
        assert page.hidden_text == [], path


def test_unknown_pages_are_404(shop: ShopServer) -> None:
    for path in ("/nope", "/product/nope", "/category/nope", "/product/", "/search/"):
        page = fetch(shop.url + path)
        assert page.status == 404, path
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        assert page.headers["Cache-Control"] == "no-store"
    assert "Page not found" in fetch(shop.url + "/nope").text


def test_unlisted_webcams_category_is_reachable_by_url_and_search(shop: ShopServer, catalog: Catalog) -> None:
    webcams = catalog.category("webcams")
    assert webcams is not None and not webcams.listed
    page = fetch(shop.url + "/category/webcams")
    assert page.status == 200 and page.product_ids() == [p.id for p in catalog.in_category("webcams")]
    assert [p.id for p in search(catalog, "webcam")] == page.product_ids()


def test_stopped_shop_releases_its_port() -> None:
    server = start_shop()
    url = server.url
    assert fetch(url + "/").status == 200
    server.stop()
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/", timeout=2)


# -- the web's usual trouble (demo/README.md, "Trouble on purpose")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def no_redirects() -> urllib.request.OpenerDirector:
    """An opener that shows a redirect (status, Location, Set-Cookie) instead of following it."""
    return urllib.request.build_opener(_NoRedirect())


def test_a_sale_badge_marks_a_cut_price_not_a_low_one(shop: ShopServer, catalog: Catalog) -> None:
    lumen = sort_products(search(catalog, "lumen printers"), Sort.PRICE_ASC)
    assert [p.name for p in lumen] == ["Lumen PhotoJet P5", "Lumen PhotoJet P7 Pro"]
    cheap, on_sale = lumen
    assert cheap.was_price is None and on_sale.was_price is not None and on_sale.price > cheap.price
    listing = fetch(shop.url + "/search?q=lumen+printers")
    assert f"{on_sale.name} by Lumen Price: $179.99 Sale: was $219.99 Rating" in listing.text
    assert f"{cheap.name} by Lumen Price: $129.99 Rating" in listing.text
    assert "Price: $179.99 Sale: was $219.99" in fetch(shop.url + "/product/lumen-photojet-p7-pro").text
    deals = fetch(shop.url + "/deals", headers={"Cookie": "demo_consent=all"})
    assert deals.product_ids() == [p.id for p in catalog.on_sale()] and len(catalog.on_sale()) == 4


def test_an_out_of_stock_product_cannot_be_added_to_the_cart(shop: ShopServer, catalog: Catalog) -> None:
    product = by_name(catalog, "Vantage Slim Wireless")
    assert not product.in_stock and [p.name for p in catalog.products if not p.in_stock] == [product.name]
    page = fetch(shop.url + f"/product/{product.id}")
    assert page.status == 200 and "Out of stock: this product cannot be ordered." in page.text
    assert "Add to cart" not in page.controls() and 'name="quantity"' not in page.body
    assert ld_blocks(page.body)["Product"]["offers"]["availability"] == "https://schema.org/OutOfStock"
    assert f"{product.name} by Vantage Price: $49.00 Rating: 4.1 out of 5 (905 reviews) Out of stock" in (
        fetch(shop.url + "/search?q=wireless+keyboard").text
    )
    refused = fetch(shop.url + "/cart/add", {"product_id": product.id}, opener=browser())
    assert refused.status == 400 and "Vantage Slim Wireless is out of stock." in refused.text
    in_stock = fetch(shop.url + "/product/vantage-mech-60")
    assert "Add to cart" in in_stock.controls() and "Out of stock" not in in_stock.text


def test_a_listing_can_show_a_stale_price_that_the_product_page_and_cart_correct(
    shop: ShopServer, catalog: Catalog
) -> None:
    product = by_name(catalog, "Keystone Office Full-Size")
    assert product.listing_price is not None and product.shown_price != product.price
    listing = fetch(shop.url + "/search?q=keystone&sort=price_asc")
    assert (
        listing.product_ids()[0] == product.id and "Keystone Office Full-Size by Keystone Price: $34.99" in listing.text
    )
    assert "Price: $39.99" in fetch(shop.url + f"/product/{product.id}").text
    cart = fetch(shop.url + "/cart/add", {"product_id": product.id}, opener=browser())
    assert "Total: $39.99" in cart.text


def test_the_backpacks_max_price_filter_is_silently_ignored(shop: ShopServer, catalog: Catalog) -> None:
    backpacks = catalog.in_category("backpacks")
    page = fetch(shop.url + "/category/backpacks?max_price=60&sort=rating")
    assert page.status == 200
    assert page.product_ids() == [p.id for p in sort_products(backpacks, Sort.RATING)]
    assert 'name="max_price" type="number" min="0" step="0.01" value="60.00"' in page.body
    assert "Clear filters" in page.controls() and f"Showing 1 to 8 of {len(backpacks)} products" in page.text
    rated = fetch(shop.url + "/category/backpacks?min_price=50&min_rating=4.5")
    assert rated.product_ids() == [p.id for p in apply_filters(backpacks, Filters(Decimal(50), None, Decimal("4.5")))]
    keyboards = fetch(shop.url + "/category/keyboards?max_price=60")
    assert keyboards.product_ids() == [
        p.id for p in apply_filters(catalog.in_category("keyboards"), Filters(max_price=Decimal(60)))
    ]


def test_deals_sit_behind_a_consent_dialog_until_the_visitor_chooses(shop: ShopServer, catalog: Catalog) -> None:
    first = fetch(shop.url + "/deals?sort=price_asc")
    assert first.status == 200 and first.product_ids() == []
    assert '<section class="modal panel" role="dialog" aria-modal="true"' in first.body
    assert first.body.count(" inert>") == 3  # header, main and footer: only the dialog can be used
    assert "The deals appear once you have chosen your cookie settings." in first.text
    assert first.controls()[-2:] == ["Accept all cookies", "Only necessary cookies"]
    assert '<input type="hidden" name="next" value="/deals?sort=price_asc">' in first.body
    chosen = fetch(shop.url + "/consent", {"choice": "all", "next": "/deals?sort=price_asc"}, opener=no_redirects())
    assert chosen.status == 303 and chosen.headers["Location"] == "/deals?sort=price_asc"
    cookie = chosen.headers["Set-Cookie"].partition(";")[0]
    assert cookie == "demo_consent=all"
    after = fetch(shop.url + "/deals?sort=price_asc", headers={"Cookie": cookie})
    assert after.product_ids() == [p.id for p in sort_products(catalog.on_sale(), Sort.PRICE_ASC)]
    assert "dialog" not in after.body and " inert" not in after.body
    elsewhere = fetch(shop.url + "/consent", {"choice": "necessary", "next": "//evil.test/x"}, opener=no_redirects())
    assert elsewhere.headers["Location"] == "/"
    assert fetch(shop.url + "/consent", {"choice": "maybe", "next": "/deals"}).status == 400
    assert "dialog" not in fetch(shop.url + "/").body  # only the Deals page asks


def test_the_deals_page_is_slow_and_its_delay_is_configurable(shop: ShopServer) -> None:
    started = time.monotonic()
    assert fetch(shop.url + "/deals").status == 200
    assert time.monotonic() - started >= SLOW, "the Deals page answered before its delay"
    assert resolve_slow_seconds(0.1) == 0.1
    assert resolve_slow_seconds() >= 0


def test_the_slow_pages_delay_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_SHOP_SLOW_SECONDS", "4")
    assert resolve_slow_seconds() == 4.0
    monkeypatch.setenv("DEMO_SHOP_SLOW_SECONDS", "soon")
    with pytest.raises(ValueError, match="DEMO_SHOP_SLOW_SECONDS must be a number of seconds, not 'soon'"):
        resolve_slow_seconds()
    monkeypatch.delenv("DEMO_SHOP_SLOW_SECONDS")
    assert resolve_slow_seconds() == 2.0
    with pytest.raises(ValueError, match="from 0 to 60 seconds"):
        resolve_slow_seconds(-1)


def test_the_account_page_is_behind_a_sign_in(shop: ShopServer, catalog: Catalog) -> None:
    account = catalog.account
    assert account is not None
    wall = fetch(shop.url + "/account", opener=no_redirects())
    assert wall.status == 303 and wall.headers["Location"] == "/login?next=/account"
    login = fetch(shop.url + "/login?next=/account")
    for label in ("Email", "Password"):
        assert f">{label}</label>" in login.body
    assert '<input id="password" name="password" type="password"' in login.body and "Sign in" in login.controls()
    form = {"email": account.email, "password": "wrong", "next": "/account"}
    refused = fetch(shop.url + "/login", form, opener=no_redirects())
    assert refused.status == 401 and "The email or password is not right." in refused.text
    assert f'value="{account.email}"' in refused.body and "wrong" not in refused.body
    signed = fetch(shop.url + "/login", {**form, "password": account.password}, opener=no_redirects())
    assert signed.status == 303 and signed.headers["Location"] == "/account"
    cookie = signed.headers["Set-Cookie"].partition(";")[0]
    assert cookie.startswith("demo_session=session-")
    page = fetch(shop.url + "/account", headers={"Cookie": cookie}, opener=no_redirects())
    assert page.status == 200 and f"Signed in as {account.name} ({account.email})." in page.text
    assert page.product_ids() == account.saved
    forged = fetch(shop.url + "/account", headers={"Cookie": "demo_session=session-999"}, opener=no_redirects())
    assert forged.status == 303
    outside = fetch(
        shop.url + "/login", {**form, "password": account.password, "next": "http://evil.test/"}, opener=no_redirects()
    )
    assert outside.headers["Location"] == "/account"


def test_search_has_no_synonyms(catalog: Catalog) -> None:
    assert search(catalog, "noise-cancelling headphones") == []
    assert [p.name for p in search(catalog, "noise cancelling")] == ["Northwind QuietPro 700", "Aurel Air Buds"]


def test_new_pages_keep_link_and_button_names_unique(shop: ShopServer) -> None:
    for path in ("/deals", "/login", "/product/vantage-slim-wireless", "/search?q=&page=3"):
        names = fetch(shop.url + path).controls()
        assert len(names) == len(set(names)) > 3, path
        assert {"All products", "Deals", "Your account"} <= set(names), path


# -- demo tasks


def _product_pages(shop: ShopServer, products: list[Product]) -> str:
    return " ".join(fetch(f"{shop.url}/product/{quote(p.id)}").text for p in products)


def _cheapest_espresso(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    machine = sort_products(search(catalog, "espresso"), Sort.PRICE_ASC)[0]
    assert machine.attributes["Type"] == "Espresso machine"
    return [machine.name, money(machine)], _product_pages(shop, [machine])


def _over_ear_under_100(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    by_price = sort_products(catalog.in_category("headphones"), Sort.PRICE_ASC)
    answer = next(p for p in by_price if p.attributes["Type"] == "Over-ear" and p.price < 100)
    assert by_price[0] != answer  # reading the top of the sorted list is not enough
    listing = fetch(shop.url + "/category/headphones?sort=price_asc")
    assert answer.id in listing.product_ids()
    return [answer.name, money(answer)], listing.text + _product_pages(shop, [answer])


def _top_rated_webcam(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    results = fetch(shop.url + "/search?q=webcam&sort=rating")
    top = sort_products(search(catalog, "webcam"), Sort.RATING)[0]
    assert results.product_ids()[0] == top.id == sort_products(catalog.in_category("webcams"), Sort.RATING)[0].id
    assert "Webcams" not in fetch(shop.url + "/").text  # the first plan's link really is missing
    return [top.name, money(top), f"{top.rating:.1f}"], _product_pages(shop, [top])


def _wireless_photo_printers(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    fits = [
        p
        for p in sort_products(catalog.in_category("printers"), Sort.PRICE_ASC)
        if p.attributes["Wireless"] == "Yes" and "4x6" in p.attributes["Photo printing"] and p.price < 150
    ]
    assert len(fits) == 3
    return [s for p in fits for s in (p.name, p.brand, money(p))], _product_pages(shop, fits)


def _add_backpack(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    backpack = by_name(catalog, "Acme Commuter 20L")
    assert backpack.name in task.task
    cart = fetch(shop.url + "/cart/add", {"product_id": backpack.id}, opener=browser())
    assert f"Total: ${money(backpack)}" in cart.text
    return [money(backpack)], cart.text


def _checkout_french_press(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    press = by_name(catalog, "Brew & Bean French Press")
    assert press.name in task.task
    shopper = browser()
    fetch(shop.url + "/cart/add", {"product_id": press.id}, opener=shopper)
    form = {"name": "Jane Doe", "address": "1 Main Street, Springfield", "password": "demo-pass-123"}
    order = fetch(shop.url + "/checkout/place", form, opener=shopper)
    assert "Order placed" in order.text
    return [money(press)], order.text


def _keyboard_brand_backpack(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    keyboards = catalog.in_category("keyboards")
    brand = sort_products(keyboards, Sort.RATING)[0].brand
    assert sort_products(keyboards, Sort.REVIEWS)[0].brand != brand  # the popular guess is wrong
    backpack = sort_products([p for p in catalog.in_category("backpacks") if p.brand == brand], Sort.PRICE_ASC)[0]
    rated = fetch(shop.url + "/category/keyboards?sort=rating")
    return [brand, backpack.name, money(backpack)], rated.text + _product_pages(shop, [backpack])


def _cheapest_from_65(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    by_price = sort_products(search(catalog, ""), Sort.PRICE_ASC)
    index, answer = next((i, p) for i, p in enumerate(by_price) if p.price >= 65)
    assert index // PER_PAGE == 2, "the answer opens page 3"
    page = fetch(shop.url + "/search?q=&sort=price_asc&page=3")
    assert page.product_ids()[0] == answer.id
    return [answer.name, money(answer)], page.text


def _cheapest_lumen_printer(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    printers = sort_products(search(catalog, "lumen printers"), Sort.PRICE_ASC)
    assert all(p.category == "printers" and p.brand == "Lumen" for p in printers)
    assert printers[0].was_price is None and any(p.was_price for p in printers[1:])  # the badge misleads
    return [printers[0].name, money(printers[0])], _product_pages(shop, printers[:1])


def _in_stock_wireless_keyboard(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    wireless = sort_products(
        [p for p in catalog.in_category("keyboards") if p.attributes["Wireless"] == "Yes"], Sort.PRICE_ASC
    )
    assert [p.id for p in wireless] == [
        p.id for p in sort_products(search(catalog, "wireless keyboards"), Sort.PRICE_ASC)
    ]
    assert not wireless[0].in_stock
    answer = next(p for p in wireless if p.in_stock)
    cart = fetch(shop.url + "/cart/add", {"product_id": answer.id}, opener=browser())
    return [money(answer)], cart.text


def _keystone_keyboard_price(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    cheapest = sort_products(search(catalog, "keystone keyboards"), Sort.PRICE_ASC)[0]
    assert cheapest.shown_price != cheapest.price  # the list shows a stale price
    return [cheapest.name, money(cheapest)], _product_pages(shop, [cheapest])


def _top_backpack_under_60(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    rated = sort_products(catalog.in_category("backpacks"), Sort.RATING)
    answer = next(p for p in rated if p.price < 60)
    assert rated[0].price >= 60  # what the ignored filter lets through first
    page = fetch(shop.url + "/category/backpacks?max_price=60&sort=rating")
    return [answer.name, money(answer)], page.text


def _saved_items(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    account = catalog.account
    assert account is not None and account.email in task.task
    assert task.secrets.get("ACCOUNT_PASSWORD") == account.password and "{{ACCOUNT_PASSWORD}}" in task.task
    saved = [p for pid in account.saved if (p := catalog.product(pid))]
    form = {"email": account.email, "password": account.password, "next": "/account"}
    page = fetch(shop.url + "/login", form, opener=browser())
    assert page.url.endswith("/account")
    return [s for p in saved for s in (p.name, money(p))], page.text


def _cheapest_deal(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    cheapest = sort_products(catalog.on_sale(), Sort.PRICE_ASC)[0]
    page = fetch(shop.url + "/deals?sort=price_asc", headers={"Cookie": "demo_consent=all"})
    return [cheapest.name, money(cheapest)], page.text


def _noise_cancelling_budget(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    cancelling = [p for p in catalog.in_category("headphones") if p.attributes["Noise cancelling"] == "Yes"]
    assert sorted(p.id for p in search(catalog, "noise cancelling")) == sorted(p.id for p in cancelling)
    cheapest = sort_products(cancelling, Sort.PRICE_ASC)[0]
    page = fetch(shop.url + "/search?q=noise+cancelling&sort=price_asc")
    return [cheapest.name, money(cheapest)], page.text


def _waterproof_backpacks_rgb_keyboards(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    backpacks = [
        p
        for p in catalog.in_category("backpacks")
        if p.attributes["Waterproof"] == "Yes" and p.attributes["Laptop sleeve"].startswith("Up to")
    ]
    keyboards = [
        p
        for p in catalog.in_category("keyboards")
        if p.attributes["Wireless"] == "Yes" and p.attributes["Backlight"] == "RGB"
    ]
    assert len(catalog.in_category("backpacks")) <= PER_PAGE and len(catalog.in_category("keyboards")) <= PER_PAGE
    (metro, voyager), (k75, mech) = backpacks, keyboards  # catalog order; brands are named once in the answer
    expected = [metro.name, metro.brand, money(metro), voyager.name, money(voyager)]
    expected += [k75.name, money(k75), mech.name, mech.brand, money(mech)]
    return expected, _product_pages(shop, backpacks + keyboards)


def _wireless_headphones_and_printers(shop: ShopServer, catalog: Catalog, task: DemoTask) -> tuple[list[str], str]:
    headphones, printers = catalog.in_category("headphones"), catalog.in_category("printers")
    assert len(headphones) > PER_PAGE and len(printers) > PER_PAGE, "both lists go on to page 2"
    fits = [p for p in headphones if p.attributes["Type"] == "Over-ear" and p.attributes["Wireless"] == "Yes"]
    fits += [
        p
        for p in printers
        if p.attributes["Wireless"] == "Yes"
        and "4x6" in p.attributes["Photo printing"]
        and p.attributes["Duplex"] == "Yes"
    ]
    on_page_two = [p for p in fits if p in headphones[PER_PAGE:] or p in printers[PER_PAGE:]]
    assert [p.category for p in on_page_two] == ["headphones"], "one answer is on a page 2, a headphone"
    second = fetch(shop.url + "/category/headphones?page=2")
    assert second.product_ids() == [p.id for p in headphones[PER_PAGE:]] and 'rel="next"' not in second.text
    expected, brands = [], set()
    for p in fits:  # catalog order; each brand is named once in the answer
        expected += [p.name] + ([p.brand] if p.brand not in brands else []) + [money(p)]
        brands.add(p.brand)
    return expected, second.text + _product_pages(shop, fits)


SOLVERS: dict[str, Callable[[ShopServer, Catalog, DemoTask], tuple[list[str], str]]] = {
    "cheapest-espresso": _cheapest_espresso,
    "over-ear-under-100": _over_ear_under_100,
    "top-rated-webcam": _top_rated_webcam,
    "wireless-photo-printers": _wireless_photo_printers,
    "add-backpack-to-cart": _add_backpack,
    "checkout-french-press": _checkout_french_press,
    "keyboard-brand-backpack": _keyboard_brand_backpack,
    "cheapest-from-65": _cheapest_from_65,
    "cheapest-lumen-printer": _cheapest_lumen_printer,
    "in-stock-wireless-keyboard": _in_stock_wireless_keyboard,
    "keystone-keyboard-price": _keystone_keyboard_price,
    "top-backpack-under-60": _top_backpack_under_60,
    "saved-items": _saved_items,
    "cheapest-deal": _cheapest_deal,
    "noise-cancelling-budget": _noise_cancelling_budget,
    "waterproof-backpacks-rgb-keyboards": _waterproof_backpacks_rgb_keyboards,
    "wireless-headphones-and-printers": _wireless_headphones_and_printers,
}


def test_every_task_kind_is_covered_and_every_task_has_a_solver() -> None:
    tasks = load_tasks()
    assert {t.kind for t in tasks} == set(TaskKind)
    assert {t.id for t in tasks} == set(SOLVERS)
    corrected = [t for t in tasks if t.kind in CORRECTED_KINDS]
    assert all(t.correction is not None for t in corrected) and len(corrected) >= 5
    assert all(t.start_path == "/" for t in tasks)
    assert len(tasks) >= 15 and {trouble for t in tasks for trouble in t.trouble} == set(Trouble)


def test_every_task_starts_on_a_page_that_exists(shop: ShopServer) -> None:
    for task in load_tasks():
        assert fetch(shop.url + task.start_path).status == 200, task.id


def test_corrections_are_console_commands() -> None:
    """Each recorded correction is one command the engine's own command model accepts."""
    for task in load_tasks():
        if task.correction is not None:
            command = parse_command(task.correction.command())
            assert command.kind == task.correction.kind, task.id


def test_a_correction_takes_the_fields_of_its_kind() -> None:
    assert Correction(node="0.2", kind="edit", description="x").command()["kind"] == "edit"
    for bad in ({"kind": "edit", "node": "0.2"}, {"parent": "0"}, {"parent": "0", "goals": ["x"], "node": "0.1"}):
        with pytest.raises(ValueError, match="an inject correction takes parent"):
            Correction.model_validate(bad)


@pytest.mark.parametrize("task", load_tasks(), ids=lambda t: t.id)
def test_task_criteria_match_the_catalog_and_appear_in_the_pages(
    shop: ShopServer, catalog: Catalog, task: DemoTask
) -> None:
    expected, page_text = SOLVERS[task.id](shop, catalog, task)
    assert task.criteria.must_contain == expected
    missing = [s for s in task.criteria.must_contain if s not in page_text]
    assert not missing, f"{task.id}: {missing} not on the pages"
    assert check_answer(task, page_text).passed


def test_check_answer_is_case_and_space_insensitive_and_reports_missing() -> None:
    task = next(t for t in load_tasks() if t.id == "wireless-photo-printers")
    result = check_answer(task, "inkwell   HOME 200 by Inkwell, $89.00;\nLumen PhotoJet P5 (Lumen) $129.99")
    assert not result.passed
    assert result.found == ["Inkwell Home 200", "Inkwell", "89.00", "Lumen PhotoJet P5", "Lumen", "129.99"]
    assert result.missing == ["Pixelon SnapPrint Mini", "Pixelon", "149.50"]


def test_load_tasks_rejects_duplicates_and_a_wrong_decomposition_without_correction(tmp_path: Path) -> None:
    task = (
        '{"id": "a", "title": "t", "task": "t", "start_path": "/", "kind": "plain",'
        ' "criteria": {"must_contain": ["x"]}}'
    )
    duplicates = tmp_path / "dup.json"
    duplicates.write_text(f"[{task}, {task}]")
    with pytest.raises(ValueError, match="duplicate task ids"):
        load_tasks(duplicates)
    uncorrected = tmp_path / "wrong.json"
    uncorrected.write_text("[" + task.replace('"plain"', '"wrong_decomposition"') + "]")
    with pytest.raises(ValueError, match="correction"):
        load_tasks(uncorrected)
