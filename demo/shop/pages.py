"""Server-rendered HTML for every page of the shop.

Pages are semantic HTML with a visible label on every control, so that an accessibility snapshot
reads like the page. They are dressed like a real small shop: an inlined stylesheet
(static/shop.css), an SVG icon sprite (static/icons.svg), meta and Open Graph tags, schema.org
JSON-LD, breadcrumbs, product cards with star ratings and illustrations. Everything decorative is
kept out of the accessibility tree (`aria-hidden="true"` on every SVG) and carries no text, because
Playwright's AI-mode snapshot still shows visible text under aria-hidden. So the snapshot an agent
reads is that of a bare page plus the "Breadcrumb" navigation and a short footer.

Link and button texts are unique on each page: an agent that clicks "Printers" or "Add to cart"
must hit exactly one element. That is why the category step of a product page's breadcrumb is text,
not a link (the "Categories" menu already has that link, and the unlisted Webcams category must
stay unreachable by a link). Every piece of data, including the catalog's own text, goes through
`_e` (html.escape) before it is placed in markup, or through `_json_ld` (JSON with <, > and &
escaped) inside the non-executable JSON-LD blocks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from html import escape
from pathlib import Path
from urllib.parse import quote, urlencode

from demo.shop.catalog import Category, Filters, Listing, Product, Sort, format_price
from demo.shop.store import MAX_QUANTITY, CartLine, Order

__all__ = [
    "RATING_CHOICES",
    "SiteHeader",
    "account_page",
    "cart_page",
    "category_page",
    "category_url",
    "checkout_page",
    "consent_dialog",
    "deals_page",
    "error_page",
    "home_page",
    "login_page",
    "order_page",
    "product_page",
    "product_url",
    "search_page",
]

SITE_NAME = "Demo Shop"
SITE_TAGLINE = "Printers, headphones, coffee makers, backpacks and keyboards from brands you know."
THEME_COLOR = "#11212d"

RATING_CHOICES: tuple[tuple[str, str], ...] = (
    ("", "Any rating"),
    ("3.0", "3.0 and up"),
    ("3.5", "3.5 and up"),
    ("4.0", "4.0 and up"),
    ("4.5", "4.5 and up"),
)
"""The "Minimum rating" options, as (query value, visible text)."""

_STATIC = Path(__file__).with_name("static")


def _minify_css(css: str) -> str:
    """Comments and layout whitespace out; enough for this hand-written sheet, not a general minifier."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    out = ""
    for line in (line.strip() for line in css.splitlines()):
        if line:
            out += (" " if out and out[-1] not in "{};," else "") + line
    out = re.sub(r"\s*([{};,])\s*", r"\1", out)
    return re.sub(r":\s+", ":", out).replace(";}", "}")


def _minify_svg(svg: str) -> str:
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.DOTALL)
    return "".join(line.strip() for line in svg.splitlines())


_STYLE = _minify_css((_STATIC / "shop.css").read_text(encoding="utf-8"))
_SPRITE_OPEN, _, _sprite_rest = _minify_svg((_STATIC / "icons.svg").read_text(encoding="utf-8")).partition(">")
_SYMBOLS = {m[1]: m[0] for m in re.finditer(r'<symbol id="([\w-]+)".*?</symbol>', _sprite_rest)}
"""The sprite's symbols by id, in file order; a page carries only those it uses."""
_USE = re.compile(r'<use href="#([\w-]+)">')


def _sprite(markup: str) -> str:
    """The icon sprite with the symbols `markup` references (critical-path trimming, like a build step)."""
    used = set(_USE.findall(markup))
    return _SPRITE_OPEN + ">" + "".join(s for name, s in _SYMBOLS.items() if name in used) + "</svg>"


_ART = frozenset({"printers", "headphones", "coffee-makers", "backpacks", "keyboards", "webcams"})
"""Categories with their own illustration in the sprite (`art-<slug>`); others use `art-generic`."""

_TINTS = frozenset(
    {
        "black", "white", "gray", "silver", "stainless-steel", "charcoal", "red", "blue", "navy",
        "green", "olive", "orange", "yellow", "copper", "walnut", "clear",
    }
)  # fmt: skip
"""Product colours with a CSS class `tint-<name>` in shop.css; the illustration takes that colour."""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _json_ld(data: Mapping[str, object]) -> str:
    """A schema.org block. JSON, not HTML, so it is escaped the JSON way: no <, > or & survives."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f'<script type="application/ld+json">{text}</script>'


def _url(path: str, params: Mapping[str, str | None]) -> str:
    """A same-site URL with empty parameters left out, so links stay short and stable."""
    query = urlencode({k: v for k, v in params.items() if v})
    return f"{path}?{query}" if query else path


def product_url(product: Product) -> str:
    return "/product/" + quote(product.id)


def category_url(category: Category) -> str:
    return "/category/" + quote(category.slug)


def _rating_text(product: Product) -> str:
    return f"Rating: {product.rating:.1f} out of 5 ({product.review_count:,} reviews)"


def _money(value: Decimal) -> str:
    """A price as schema.org wants it: digits and a dot, no symbol, no thousands separator."""
    return f"{value:.2f}"


# -- decoration (all of it aria-hidden)


def _icon(name: str, cls: str = "icon") -> str:
    return f'<svg class="{cls}" aria-hidden="true" focusable="false"><use href="#i-{name}"></use></svg>'


def _stars(rating: Decimal | int) -> str:
    """Five stars for a rating rounded to the nearest half; the rating itself is always also text."""
    halves = int((Decimal(rating) * 2).to_integral_value(rounding=ROUND_HALF_UP))
    kinds = ["star"] * (halves // 2) + ["star-half"] * (halves % 2)
    kinds += ["star-empty"] * (5 - len(kinds))
    svgs = "".join(
        f'<svg class="star {kind}" viewBox="0 0 24 24" aria-hidden="true" focusable="false">'
        f'<use href="#i-{"star-half" if kind == "star-half" else "star"}"></use></svg>'
        for kind in kinds
    )
    return f'<span class="stars" aria-hidden="true">{svgs}</span>'


def _art_id(category_slug: str) -> str:
    return f"art-{category_slug}" if category_slug in _ART else "art-generic"


def _tint(product: Product) -> str:
    colour = product.attributes.get("Color", "").strip().lower().replace(" ", "-")
    return colour if colour in _TINTS else "default"


def _art(product: Product, wrapper: str) -> str:
    """The product's illustration (in its colour) on a tile tinted by category, standing in for a photo."""
    slug = _e(product.category)
    return (
        f'<div class="tile {wrapper} bg-{slug}" aria-hidden="true">'
        f'<svg class="art tint-{_tint(product)}" viewBox="0 0 64 64" aria-hidden="true" focusable="false">'
        f'<use href="#{_art_id(product.category)}"></use></svg></div>'
    )


# -- page frame


@dataclass(frozen=True, slots=True)
class SiteHeader:
    """What the header shows on every page: the menu (listed categories only) and the cart size."""

    categories: tuple[Category, ...]
    cart_count: int
    query: str = ""


@dataclass(frozen=True, slots=True)
class _Meta:
    """What goes into <head> besides the title: description, Open Graph tags and JSON-LD blocks."""

    description: str = SITE_TAGLINE
    og_type: str = "website"
    canonical: str | None = None
    noindex: bool = False
    json_ld: tuple[Mapping[str, object], ...] = ()
    extra: tuple[tuple[str, str], ...] = ()  # (property, content) pairs, e.g. product:price:amount


def _head_meta(title: str, meta: _Meta) -> str:
    tags = [
        f'<meta name="description" content="{_e(meta.description)}">',
        f'<meta name="theme-color" content="{THEME_COLOR}">',
        '<meta name="color-scheme" content="light">',
        '<meta name="format-detection" content="telephone=no">',
    ]
    if meta.noindex:
        tags.append('<meta name="robots" content="noindex, follow">')
    if meta.canonical:
        tags.append(f'<link rel="canonical" href="{_e(meta.canonical)}">')
    og = [
        ("og:site_name", SITE_NAME),
        ("og:type", meta.og_type),
        ("og:title", title),
        ("og:description", meta.description),
        ("og:locale", "en_US"),
        *meta.extra,
    ]
    tags += [f'<meta property="{_e(k)}" content="{_e(v)}">' for k, v in og]
    tags += [
        '<meta name="twitter:card" content="summary">',
        f'<meta name="twitter:title" content="{_e(title)}">',
        f'<meta name="twitter:description" content="{_e(meta.description)}">',
    ]
    tags += [_json_ld(block) for block in meta.json_ld]
    return "\n".join(tags)


def _breadcrumb(trail: Sequence[tuple[str, str | None]]) -> str:
    """Breadcrumb navigation: (text, href) steps, href None for plain text; the last step is the page."""
    items = []
    for i, (text, href) in enumerate(trail):
        if i == len(trail) - 1:
            items.append(f'<li aria-current="page">{_e(text)}</li>')
        elif href is None:
            items.append(f"<li>{_e(text)}</li>")
        else:
            items.append(f'<li><a href="{_e(href)}">{_e(text)}</a></li>')
    return f'<nav class="breadcrumb" aria-label="Breadcrumb"><ol>{"".join(items)}</ol></nav>'


def _breadcrumb_ld(trail: Sequence[tuple[str, str | None]]) -> dict[str, object]:
    elements: list[dict[str, object]] = []
    for position, (text, href) in enumerate(trail, start=1):
        element: dict[str, object] = {"@type": "ListItem", "position": position, "name": text}
        if href is not None:
            element["item"] = href
        elements.append(element)
    return {"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": elements}


def _layout(
    header: SiteHeader,
    title: str,
    main: str,
    meta: _Meta | None = None,
    *,
    active: str | None = None,
    overlay: str = "",
) -> str:
    """The page frame. `active` is the slug of the category being browsed, highlighted in the menu.

    An `overlay` (a modal dialog) covers the page and makes the rest of it `inert`: like a real
    modal, nothing under it can be clicked or focused, and assistive technology sees only the dialog.
    """
    meta = meta or _Meta()
    inert = " inert" if overlay else ""
    current = ' class="active"'
    menu = "".join(
        f'<li><a href="{_e(category_url(c))}"{current if c.slug == active else ""}>{_e(c.name)}</a></li>'
        for c in header.categories
        if c.listed
    )
    body = f"""<header class="site-header"{inert}>
<div class="container header-main">
<p class="site-title"><a href="/"><span class="logo-mark" aria-hidden="true">{_icon("logo")}</span>{SITE_NAME}</a></p>
<form class="search" role="search" action="/search" method="get">
<label for="q">Search products</label>
<div class="search-field">{_icon("search")}
<input id="q" type="search" name="q" value="{_e(header.query)}">
</div>
<button type="submit">Search</button>
</form>
<p class="header-cart"><a href="/cart">{_icon("cart")}Cart ({header.cart_count})</a></p>
</div>
<nav class="category-nav" aria-label="Categories"><div class="container"><ul>{menu}</ul></div></nav>
</header>
<main class="container page"{inert}>
{main}
</main>
<footer class="site-footer"{inert}>
<div class="container footer-inner">
<p>{SITE_NAME} is an offline practice store. Nothing is sold or shipped.</p>
<p>Prices are in US dollars.</p>
<p class="footer-links"><a href="/search">All products</a> <a href="/deals">Deals</a> <a href="/account">Your account</a></p>
</div>
</footer>{overlay}"""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} | {SITE_NAME}</title>
{_head_meta(title, meta)}
<style>{_STYLE}</style>
</head>
<body>
{_sprite(body)}
{body}
</body>
</html>
"""


# -- listings


def _sale_badge(p: Product) -> str:
    """ "Sale" says only that the price was cut, not that it is low: a sale item can cost more than its rivals."""
    if p.was_price is None:
        return ""
    return f'<p class="sale-badge">Sale: was {_e(format_price(p.was_price))}</p>\n'


def _stock_line(p: Product) -> str:
    return "" if p.in_stock else '<p class="stock-out">Out of stock</p>\n'


def _product_card(p: Product) -> str:
    return f"""<li class="card"><article>
{_art(p, "card-media")}
<div class="card-body">
<h3><a href="{_e(product_url(p))}">{_e(p.name)}</a></h3>
<p class="card-brand">by {_e(p.brand)}</p>
<p class="card-price">Price: <span class="amount">{_e(format_price(p.shown_price))}</span></p>
{_sale_badge(p)}<p class="rating">{_stars(p.rating)}{_e(_rating_text(p))}</p>
{_stock_line(p)}</div>
</article></li>
"""


def _product_items(products: Iterable[Product]) -> str:
    return f'<ol class="results">\n{"".join(_product_card(p) for p in products)}</ol>'


def _item_list_ld(name: str, listing: Listing) -> dict[str, object]:
    return {
        "@context": "https://schema.org",
        "@type": "ItemList",
        "name": name,
        "numberOfItems": listing.total,
        "itemListOrder": "https://schema.org/ItemListUnordered",
        "itemListElement": [
            {"@type": "ListItem", "position": listing.first_index + i, "url": product_url(p), "name": p.name}
            for i, p in enumerate(listing.items)
        ],
    }


_CURRENT = ' aria-current="true"'


def _sort_param(order: Sort) -> str | None:
    """The default order is left out of URLs."""
    return None if order is Sort.FEATURED else order.value


def _listing(path: str, params: Mapping[str, str | None], order: Sort, listing: Listing, empty: str) -> str:
    """Sort links, the result list and pagination, all keeping the other query parameters."""
    sort_links = "".join(
        f'<li><a href="{_e(_url(path, {**params, "sort": _sort_param(s)}))}"{_CURRENT if s is order else ""}>'
        f"{_e(s.label)}</a></li>"
        for s in Sort
    )
    sort_nav = f'<nav class="sort" aria-label="Sort"><span>Sort by:</span><ul>{sort_links}</ul></nav>'
    sort_value = _sort_param(order)
    if not listing.items:
        return f"""<div class="toolbar">{sort_nav}</div>
<div class="panel empty-state">{_icon("search")}
<p>{_e(empty)}</p>
</div>"""
    pager = []
    if listing.page > 1:
        href = _url(path, {**params, "sort": sort_value, "page": str(listing.page - 1) if listing.page > 2 else None})
        pager.append(f'<li><a href="{_e(href)}" rel="prev">Previous page</a></li>')
    pager.append(f"<li>Page {listing.page} of {listing.pages}</li>")
    if listing.page < listing.pages:
        href = _url(path, {**params, "sort": sort_value, "page": str(listing.page + 1)})
        pager.append(f'<li><a href="{_e(href)}" rel="next">Next page</a></li>')
    noun = "product" if listing.total == 1 else "products"
    return f"""<div class="toolbar">{sort_nav}
<p class="result-count">Showing {listing.first_index} to {listing.last_index} of {listing.total} {noun}</p>
</div>
{_product_items(listing.items)}
<nav class="pagination" aria-label="Pagination"><ul>{"".join(pager)}</ul></nav>"""


def home_page(header: SiteHeader, featured: list[Product]) -> str:
    hero_art = "".join(_art(p, "hero-tile") for p in featured[:3])
    main = f"""<section class="hero">
<div>
<h1>Welcome to {SITE_NAME}</h1>
<p>Browse a category from the menu above, or search for a product.</p>
</div>
<div class="hero-art" aria-hidden="true">{hero_art}</div>
</section>
<section aria-labelledby="featured-heading">
<div class="section-head"><h2 id="featured-heading">Featured products</h2></div>
{_product_items(featured)}
</section>"""
    website = {
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": SITE_NAME,
        "url": "/",
        "potentialAction": {
            "@type": "SearchAction",
            "target": {"@type": "EntryPoint", "urlTemplate": "/search?q={search_term_string}"},
            "query-input": "required name=search_term_string",
        },
    }
    organization = {
        "@context": "https://schema.org",
        "@type": "OnlineStore",
        "name": SITE_NAME,
        "url": "/",
        "description": SITE_TAGLINE,
        "currenciesAccepted": "USD",
    }
    meta = _Meta(canonical="/", json_ld=(website, organization))
    return _layout(header, "Home", main, meta)


def search_page(header: SiteHeader, query: str, order: Sort, listing: Listing) -> str:
    heading = f"Results for \u201c{query}\u201d" if query.strip() else "All products"
    body = _listing("/search", {"q": query}, order, listing, f"No products match \u201c{query}\u201d.")
    trail = [("Home", "/"), ("Search results" if query.strip() else "All products", None)]
    main = f"""<div class="page-head">
{_breadcrumb(trail)}
<h1>{_e(heading)}</h1>
</div>
{body}"""
    description = f"{heading} at {SITE_NAME}: compare prices, ratings and specifications."
    return _layout(header, heading, main, _Meta(description=description, noindex=True))


def _price_value(value: Decimal | None) -> str:
    return "" if value is None else f"{value:.2f}"


def category_page(header: SiteHeader, category: Category, filters: Filters, order: Sort, listing: Listing) -> str:
    path = category_url(category)
    min_rating = "" if filters.min_rating is None else f"{filters.min_rating:.1f}"
    options = "".join(
        f'<option value="{_e(value)}"{" selected" if value == min_rating else ""}>{_e(text)}</option>'
        for value, text in RATING_CHOICES
    )
    sort_field = "" if order is Sort.FEATURED else f'<input type="hidden" name="sort" value="{_e(order.value)}">'
    clear = f'<p class="clear-filters"><a href="{_e(path)}">Clear filters</a></p>' if filters.active else ""
    params = {
        "min_price": _price_value(filters.min_price),
        "max_price": _price_value(filters.max_price),
        "min_rating": min_rating,
    }
    body = _listing(path, params, order, listing, "No products match these filters.")
    trail = [("Home", "/"), (category.name, None)]
    main = f"""<div class="page-head">
{_breadcrumb(trail)}
<h1>{_e(category.name)}</h1>
</div>
<div class="listing-layout">
<div class="sidebar">
<form class="filters panel" action="{_e(path)}" method="get" aria-label="Filters">
<div class="price-range">
<div class="field"><label for="min_price">Min price</label>
<input id="min_price" name="min_price" type="number" min="0" step="0.01" value="{_e(params["min_price"])}"></div>
<div class="field"><label for="max_price">Max price</label>
<input id="max_price" name="max_price" type="number" min="0" step="0.01" value="{_e(params["max_price"])}"></div>
</div>
<div class="field"><label for="min_rating">Minimum rating</label>
<select id="min_rating" name="min_rating">{options}</select></div>
{sort_field}<div><button type="submit">Apply filters</button></div>
</form>
{clear}
</div>
<div class="listing-main">
{body}
</div>
</div>"""
    description = f"Shop {category.name.lower()} at {SITE_NAME}: compare prices, ratings and specifications."
    canonical = _url(path, {"page": str(listing.page) if listing.page > 1 else None})
    meta = _Meta(
        description=description,
        canonical=canonical,
        noindex=filters.active or order is not Sort.FEATURED,
        json_ld=(_breadcrumb_ld([("Home", "/"), (category.name, path)]), _item_list_ld(category.name, listing)),
    )
    return _layout(header, category.name, main, meta, active=category.slug)


# -- product


def _product_ld(product: Product, category: Category) -> dict[str, object]:
    url = product_url(product)
    return {
        "@context": "https://schema.org",
        "@type": "Product",
        "@id": url + "#product",
        "url": url,
        "sku": product.id,
        "name": product.name,
        "description": product.description,
        "category": category.name,
        "brand": {"@type": "Brand", "name": product.brand},
        "additionalProperty": [
            {"@type": "PropertyValue", "name": k, "value": v} for k, v in product.attributes.items()
        ],
        "aggregateRating": {
            "@type": "AggregateRating",
            "ratingValue": f"{product.rating:.1f}",
            "bestRating": "5",
            "worstRating": "1",
            "reviewCount": product.review_count,
        },
        "offers": {
            "@type": "Offer",
            "url": url,
            "price": _money(product.price),
            "priceCurrency": "USD",
            "availability": "https://schema.org/" + ("InStock" if product.in_stock else "OutOfStock"),
            "itemCondition": "https://schema.org/NewCondition",
            "seller": {"@type": "Organization", "name": SITE_NAME},
        },
        "review": [
            {
                "@type": "Review",
                "author": {"@type": "Person", "name": r.author},
                "reviewRating": {"@type": "Rating", "ratingValue": r.stars, "bestRating": 5, "worstRating": 1},
                "reviewBody": r.text,
            }
            for r in product.reviews
        ],
    }


def _buy_box(product: Product) -> str:
    """Quantity and Add to cart; an out-of-stock product has neither, only a line that says so."""
    if not product.in_stock:
        return '<div class="buy-box panel"><p class="stock-out">Out of stock: this product cannot be ordered.</p></div>'
    return f"""<div class="buy-box panel">
<form action="/cart/add" method="post">
<input type="hidden" name="product_id" value="{_e(product.id)}">
<div class="qty"><label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" min="1" max="{MAX_QUANTITY}" value="1"></div>
<button type="submit">Add to cart</button>
</form>
</div>"""


def product_page(header: SiteHeader, product: Product, category: Category, back_href: str) -> str:
    rows = [("Brand", product.brand), ("Category", category.name), *product.attributes.items()]
    specs = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_e(v)}</td></tr>' for k, v in rows)
    reviews = "".join(
        f"""<li><article class="review panel">
<div class="review-head"><span class="avatar">{_icon("user")}</span><h3>{_e(r.author)}</h3></div>
<p class="review-stars">{_stars(r.stars)}{r.stars} out of 5 stars</p>
<p>{_e(r.text)}</p>
</article></li>
"""
        for r in product.reviews
    )
    # The category step is text: a link would repeat the menu's link (or add one to the unlisted Webcams).
    trail = [("Home", "/"), (category.name, None), (product.name, None)]
    main = f"""<div class="crumb-row">
{_breadcrumb(trail)}
<p class="back-link"><a href="{_e(back_href)}">Back to results</a></p>
</div>
<article class="product">
{_art(product, "product-media")}
<div class="product-summary">
<h1>{_e(product.name)}</h1>
<p class="product-brand">by {_e(product.brand)}</p>
<p class="product-price">Price: <span class="amount">{_e(format_price(product.price))}</span></p>
{_sale_badge(product)}<p class="rating">{_stars(product.rating)}{_e(_rating_text(product))}</p>
{_buy_box(product)}
<section class="specs" aria-labelledby="specs-heading">
<h2 id="specs-heading">Specifications</h2>
<table><tbody>{specs}</tbody></table>
</section>
</div>
<section class="product-description" aria-labelledby="description-heading">
<h2 id="description-heading">Description</h2>
<p>{_e(product.description)}</p>
</section>
<section class="product-reviews" aria-labelledby="reviews-heading">
<h2 id="reviews-heading">Customer reviews</h2>
<ul class="reviews">{reviews}</ul>
</section>
</article>"""
    meta = _Meta(
        description=product.description,
        og_type="product",
        canonical=product_url(product),
        json_ld=(
            _product_ld(product, category),
            _breadcrumb_ld([("Home", "/"), (category.name, category_url(category)), (product.name, None)]),
        ),
        extra=(
            ("product:brand", product.brand),
            ("product:price:amount", _money(product.price)),
            ("product:price:currency", "USD"),
            ("product:availability", "in stock" if product.in_stock else "out of stock"),
            ("product:retailer_item_id", product.id),
        ),
    )
    return _layout(header, product.name, main, meta, active=category.slug)


# -- cart, checkout, order


def _total(lines: Iterable[CartLine]) -> Decimal:
    return sum((line.subtotal for line in lines), Decimal(0))


_CART_COLUMNS = "".join(f'<th scope="col">{c}</th>' for c in ("Product", "Price", "Quantity", "Subtotal", "Action"))

_PRIVATE = _Meta(description=f"Your shopping cart at {SITE_NAME}.", noindex=True)


def _empty_cart() -> str:
    return f"""<div class="panel empty-state">{_icon("bag")}
<p>Your cart is empty.</p>
<p class="continue-link"><a href="/">Continue shopping</a></p>
</div>"""


def cart_page(header: SiteHeader, lines: list[CartLine], added: Product | None) -> str:
    status = f'<p role="status">{_icon("check")}Added {_e(added.name)} to your cart.</p>\n' if added else ""
    if not lines:
        main = f"<h1>Your cart</h1>\n{status}{_empty_cart()}"
        return _layout(header, "Cart", main, _PRIVATE)
    rows = "".join(
        f"""<tr><td><div class="line-item">{_art(line.product, "thumb")}
<a href="{_e(product_url(line.product))}">{_e(line.product.name)}</a></div></td>
<td>{_e(format_price(line.product.price))}</td><td>{line.quantity}</td><td>{_e(format_price(line.subtotal))}</td>
<td><form action="/cart/remove" method="post"><input type="hidden" name="product_id" value="{_e(line.product.id)}">
<button type="submit" aria-label="Remove {_e(line.product.name)}">Remove</button></form></td></tr>
"""
        for line in lines
    )
    main = f"""<h1>Your cart</h1>
{status}<div class="cart-layout">
<div class="panel cart-items">
<table class="cart-table">
<thead><tr>{_CART_COLUMNS}</tr></thead>
<tbody>
{rows}</tbody>
</table>
</div>
<div class="panel cart-summary">
<p class="cart-total">Total: <span class="amount">{_e(format_price(_total(lines)))}</span></p>
<p class="checkout-cta"><a href="/checkout">Proceed to checkout</a></p>
<p class="continue-link"><a href="/">Continue shopping</a></p>
</div>
</div>"""
    return _layout(header, "Cart", main, _PRIVATE)


def _summary(lines: Iterable[CartLine]) -> str:
    items = "".join(
        f"<li>{_e(line.product.name)} \u00d7 {line.quantity}: {_e(format_price(line.subtotal))}</li>" for line in lines
    )
    return f'<ul class="summary-lines">{items}</ul>'


def checkout_page(
    header: SiteHeader, lines: list[CartLine], *, error: str | None = None, name: str = "", address: str = ""
) -> str:
    """The checkout form. On a failed attempt the name and address are kept; the password never is."""
    meta = _Meta(description=f"Checkout at {SITE_NAME}.", noindex=True)
    if not lines:
        return _layout(header, "Checkout", f"<h1>Checkout</h1>\n{_empty_cart()}", meta)
    alert = f'<p role="alert">{_icon("alert")}{_e(error)}</p>\n' if error else ""
    main = f"""<h1>Checkout</h1>
<div class="checkout-layout">
<section class="panel order-summary" aria-labelledby="summary-heading">
<h2 id="summary-heading">Order summary</h2>
{_summary(lines)}
<p class="summary-total">Total: {_e(format_price(_total(lines)))}</p>
</section>
<div class="checkout-main">
{alert}<form class="panel checkout-form" action="/checkout/place" method="post">
<p class="field"><label for="name">Full name</label>
<input id="name" name="name" type="text" autocomplete="name" value="{_e(name)}"></p>
<p class="field"><label for="address">Shipping address</label>
<textarea id="address" name="address" rows="3" autocomplete="street-address">{_e(address)}</textarea></p>
<p class="field"><label for="password">Account password</label>
<input id="password" name="password" type="password" autocomplete="current-password"></p>
<p><button type="submit">Place order</button></p>
</form>
</div>
</div>"""
    return _layout(header, "Checkout", main, meta)


def order_page(header: SiteHeader, order: Order) -> str:
    main = f"""<div class="panel message-card">
<span class="badge" aria-hidden="true">{_icon("check")}</span>
<h1>Order placed</h1>
<p>Thank you, {_e(order.name)}. Your order number is {_e(order.number)}.</p>
{_summary(order.lines)}
<p>Total charged: {_e(format_price(order.total))}</p>
<p>Shipping to: {_e(order.address)}</p>
<p class="continue-link"><a href="/">Continue shopping</a></p>
</div>"""
    meta = _Meta(description=f"Order confirmation from {SITE_NAME}.", noindex=True)
    return _layout(header, "Order placed", main, meta)


def error_page(header: SiteHeader, title: str, message: str, link: tuple[str, str] | None = None) -> str:
    """An error page with one way out: `link` as (href, text), by default the home page."""
    href, text = link or ("/", "Go to the home page")
    main = f"""<div class="panel message-card is-error">
<span class="badge" aria-hidden="true">{_icon("alert")}</span>
<h1>{_e(title)}</h1>
<p>{_e(message)}</p>
<p class="error-link"><a href="{_e(href)}">{_e(text)}</a></p>
</div>"""
    return _layout(header, title, main, _Meta(description=message, noindex=True))


# -- deals, consent, account


def consent_dialog(next_path: str) -> str:
    """The cookie consent modal: two buttons, each a form that records the choice and comes back."""
    buttons = "".join(
        f"""<form action="/consent" method="post"><input type="hidden" name="next" value="{_e(next_path)}">
<input type="hidden" name="choice" value="{value}"><button type="submit">{text}</button></form>"""
        for value, text in (("all", "Accept all cookies"), ("necessary", "Only necessary cookies"))
    )
    return f"""
<div class="modal-backdrop">
<section class="modal panel" role="dialog" aria-modal="true" aria-labelledby="consent-heading">
<h2 id="consent-heading">We value your privacy</h2>
<p>We use cookies to remember your choices and to measure our deals. Choose which cookies we may use.</p>
<div class="modal-actions">{buttons}</div>
</section>
</div>"""


def deals_page(header: SiteHeader, order: Sort, listing: Listing, *, ask_consent: bool) -> str:
    """The products on sale with their was-prices; until the visitor chooses, only the consent modal
    over an inert page that withholds the list."""
    body = _listing("/deals", {}, order, listing, "There are no deals today.")
    trail = [("Home", "/"), ("Deals", None)]
    main = f"""<div class="page-head">
{_breadcrumb(trail)}
<h1>Deals</h1>
<p>Products with a reduced price. A reduced price is not always the lowest one: compare before you buy.</p>
</div>
{body}"""
    meta = _Meta(description=f"Deals at {SITE_NAME}.", noindex=order is not Sort.FEATURED)
    if not ask_consent:
        return _layout(header, "Deals", main, meta)
    # A consent wall: the deals are withheld, not just covered, until the visitor chooses.
    withheld = f"""<div class="page-head">
{_breadcrumb(trail)}
<h1>Deals</h1>
<p>The deals appear once you have chosen your cookie settings.</p>
</div>"""
    overlay = consent_dialog("/deals" + ("" if order is Sort.FEATURED else f"?sort={order.value}"))
    return _layout(header, "Deals", withheld, meta, overlay=overlay)


def login_page(header: SiteHeader, next_path: str, *, error: str | None = None, email: str = "") -> str:
    """The sign-in form in front of the account pages; on a failed attempt the email is kept, never the password."""
    alert = f'<p role="alert">{_icon("alert")}{_e(error)}</p>\n' if error else ""
    main = f"""<div class="panel message-card">
<h1>Sign in</h1>
<p>Sign in to see your account.</p>
{alert}<form class="checkout-form" action="/login" method="post">
<input type="hidden" name="next" value="{_e(next_path)}">
<p class="field"><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" value="{_e(email)}"></p>
<p class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password"></p>
<p><button type="submit">Sign in</button></p>
</form>
</div>"""
    return _layout(header, "Sign in", main, _Meta(description=f"Sign in to {SITE_NAME}.", noindex=True))


def account_page(header: SiteHeader, name: str, email: str, saved: list[Product]) -> str:
    main = f"""<div class="page-head">
<h1>Your account</h1>
<p>Signed in as {_e(name)} ({_e(email)}).</p>
</div>
<section aria-labelledby="saved-heading">
<div class="section-head"><h2 id="saved-heading">Saved items</h2></div>
{_product_items(saved)}
</section>"""
    return _layout(header, "Your account", main, _Meta(description=f"Your account at {SITE_NAME}.", noindex=True))
