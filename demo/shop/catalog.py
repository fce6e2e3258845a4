"""The shop's data and the pure functions that search, filter, sort and page it.

Everything here is free of I/O after loading, so tests can compute the expected answer to a demo
task with exactly the code that renders the pages the agent sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "CATALOG_PATH",
    "PER_PAGE",
    "Account",
    "Catalog",
    "Category",
    "Filters",
    "Listing",
    "Product",
    "Review",
    "Sort",
    "apply_filters",
    "default_catalog",
    "format_price",
    "load_catalog",
    "paginate",
    "search",
    "sort_products",
]

CATALOG_PATH = Path(__file__).with_name("catalog.json")
PER_PAGE = 8

_Text = Annotated[str, Field(min_length=1, max_length=500)]
_Slug = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=80)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Review(_Frozen):
    author: _Text
    stars: int = Field(ge=1, le=5)
    text: _Text


class Category(_Frozen):
    """`listed` is False for a category that exists but has no menu link (reached by search only)."""

    slug: _Slug
    name: _Text
    listed: bool = True


class Product(_Frozen):
    """A product. `price` is what the product page shows and the cart charges; three fields make
    the web's usual trouble: `was_price` puts a "Sale" badge on the cards (whatever the price is
    compared with other products), `listing_price` is a stale price that listings show instead of
    `price`, and `in_stock` False removes the Add to cart button."""

    id: _Slug
    name: _Text
    brand: _Text
    category: _Slug
    price: Decimal = Field(ge=0, decimal_places=2)
    was_price: Decimal | None = Field(default=None, ge=0, decimal_places=2)
    listing_price: Decimal | None = Field(default=None, ge=0, decimal_places=2)
    in_stock: bool = True
    rating: Decimal = Field(ge=1, le=5, decimal_places=1)
    review_count: int = Field(ge=0)
    attributes: dict[_Text, _Text]
    description: _Text
    reviews: list[Review] = Field(min_length=2, max_length=3)

    @property
    def shown_price(self) -> Decimal:
        """The price a listing card shows: the stale `listing_price` when there is one."""
        return self.listing_price if self.listing_price is not None else self.price

    @model_validator(mode="after")
    def _sale_is_a_reduction(self) -> Self:
        if self.was_price is not None and self.was_price <= self.price:
            raise ValueError(f"{self.id}: a was-price must be higher than the price")
        return self


class Account(_Frozen):
    """The one demo customer account, behind the shop's sign-in page, with its saved items."""

    email: _Text
    password: _Text
    name: _Text
    saved: list[_Slug]


class Catalog(_Frozen):
    """The whole shop. Products keep file order, which is also the "Featured" sort order."""

    categories: list[Category] = Field(min_length=1)
    featured: list[_Slug]
    products: list[Product] = Field(min_length=1)
    account: Account | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        slugs = [c.slug for c in self.categories]
        ids = [p.id for p in self.products]
        for what, values in (("category slugs", slugs), ("product ids", ids), ("featured ids", self.featured)):
            if len(set(values)) != len(values):
                raise ValueError(f"{what} must be unique")
        names = [p.name.casefold() for p in self.products]
        if len(set(names)) != len(names):
            raise ValueError("product names must be unique: an agent picks a product by its link text")
        if stray := [p.id for p in self.products if p.category not in slugs]:
            raise ValueError(f"products in unknown categories: {stray}")
        if missing := [i for i in self.featured if i not in ids]:
            raise ValueError(f"featured ids that are not products: {missing}")
        if self.account and (missing := [i for i in self.account.saved if i not in ids]):
            raise ValueError(f"saved ids that are not products: {missing}")
        return self

    def product(self, product_id: str) -> Product | None:
        return next((p for p in self.products if p.id == product_id), None)

    def category(self, slug: str) -> Category | None:
        return next((c for c in self.categories if c.slug == slug), None)

    def in_category(self, slug: str) -> list[Product]:
        return [p for p in self.products if p.category == slug]

    def on_sale(self) -> list[Product]:
        """The Deals page's products: those with a was-price, in catalog order."""
        return [p for p in self.products if p.was_price is not None]


def load_catalog(path: Path = CATALOG_PATH) -> Catalog:
    """Read and validate a catalog file; a broken file fails at start-up, not on some page."""
    return Catalog.model_validate_json(path.read_text(encoding="utf-8"))


@cache
def default_catalog() -> Catalog:
    """The bundled catalog, parsed once: it is immutable, so every server can share it."""
    return load_catalog()


class Sort(StrEnum):
    """Listing orders, by their query-string value. Every order ends on the name, so ties are stable."""

    FEATURED = "featured"
    PRICE_ASC = "price_asc"
    PRICE_DESC = "price_desc"
    RATING = "rating"
    REVIEWS = "reviews"

    @property
    def label(self) -> str:
        return _SORT_LABELS[self]


_SORT_LABELS = {
    Sort.FEATURED: "Featured",
    Sort.PRICE_ASC: "Price: low to high",
    Sort.PRICE_DESC: "Price: high to low",
    Sort.RATING: "Highest rated",
    Sort.REVIEWS: "Most reviewed",
}


@dataclass(frozen=True, slots=True)
class Filters:
    """Inclusive bounds; None means no bound."""

    min_price: Decimal | None = None
    max_price: Decimal | None = None
    min_rating: Decimal | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.min_price, self.max_price, self.min_rating))


@dataclass(frozen=True, slots=True)
class Listing:
    """One page of a result list, with what the pagination links need."""

    items: list[Product]
    page: int
    pages: int
    total: int

    @property
    def first_index(self) -> int:
        """1-based position of the first item shown, 0 when nothing is shown."""
        return (self.page - 1) * PER_PAGE + 1 if self.items else 0

    @property
    def last_index(self) -> int:
        return self.first_index + len(self.items) - 1 if self.items else 0


def _terms(query: str) -> list[str]:
    """Lower-cased words, with one plural "s" dropped so "printers" also finds "printer"."""
    words = query.casefold().split()
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


def search(catalog: Catalog, query: str) -> list[Product]:
    """Products whose name, brand, category name or description contain every word of the query.

    Attribute values are left out on purpose: "Wireless: No" must not match "wireless". An empty
    query matches every product, in catalog order.
    """
    terms = _terms(query)
    names = {c.slug: c.name for c in catalog.categories}
    found = []
    for product in catalog.products:
        haystack = " ".join((product.name, product.brand, names[product.category], product.description)).casefold()
        if all(term in haystack for term in terms):
            found.append(product)
    return found


def apply_filters(products: list[Product], filters: Filters) -> list[Product]:
    return [
        p
        for p in products
        if (filters.min_price is None or p.price >= filters.min_price)
        and (filters.max_price is None or p.price <= filters.max_price)
        and (filters.min_rating is None or p.rating >= filters.min_rating)
    ]


def sort_products(products: list[Product], order: Sort) -> list[Product]:
    if order is Sort.FEATURED:
        return list(products)
    if order is Sort.PRICE_ASC:
        return sorted(products, key=lambda p: (p.price, p.name))
    if order is Sort.PRICE_DESC:
        return sorted(products, key=lambda p: (-p.price, p.name))
    if order is Sort.RATING:
        return sorted(products, key=lambda p: (-p.rating, -p.review_count, p.name))
    return sorted(products, key=lambda p: (-p.review_count, p.name))


def paginate(products: list[Product], page: int) -> Listing:
    """Cut out page `page` (1-based), clamped into range so a stale "Next page" link still shows results."""
    pages = max(1, -(-len(products) // PER_PAGE))
    page = min(max(page, 1), pages)
    start = (page - 1) * PER_PAGE
    return Listing(items=products[start : start + PER_PAGE], page=page, pages=pages, total=len(products))


def format_price(price: Decimal) -> str:
    """The one price format used on every page and in the task criteria, e.g. "$1,299.00"."""
    return f"${price:,.2f}"
