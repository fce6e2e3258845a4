"""The bundled demo shop over real HTTP, and the demo tasks' answers checked against its data.

Expected answers are computed from catalog.json with the shop's own search/filter/sort functions,
then looked for in the pages the server actually returns.
"""

from __future__ import annotations

import json
import re
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
from demo.tasks import DemoTask, TaskKind, check_answer, load_tasks

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def shop() -> Iterator[ShopServer]:
    with start_shop() as server:
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
        with (opener or urllib.request.build_opener()).open(request, timeout=5) as response:
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


SOLVERS: dict[str, Callable[[ShopServer, Catalog, DemoTask], tuple[list[str], str]]] = {
    "cheapest-espresso": _cheapest_espresso,
    "over-ear-under-100": _over_ear_under_100,
    "top-rated-webcam": _top_rated_webcam,
    "wireless-photo-printers": _wireless_photo_printers,
    "add-backpack-to-cart": _add_backpack,
    "checkout-french-press": _checkout_french_press,
    "keyboard-brand-backpack": _keyboard_brand_backpack,
}


def test_every_task_kind_is_covered_and_every_task_has_a_solver() -> None:
    tasks = load_tasks()
    assert {t.kind for t in tasks} == set(TaskKind)
    assert {t.id for t in tasks} == set(SOLVERS)
    wrong = [t for t in tasks if t.kind is TaskKind.WRONG_DECOMPOSITION]
    assert all(t.correction is not None and t.correction.goals for t in wrong)
    assert all(t.start_path == "/" for t in tasks)


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
