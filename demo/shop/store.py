"""Per-client carts, placed orders and sign-ins, held in memory and lost on restart.

Cart ids and order numbers come from counters rather than random tokens so that two runs of the
same demo produce the same pages. The shop only listens on localhost, so guessable ids are fine.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from decimal import Decimal
from itertools import count

from demo.shop.catalog import Catalog, Product

__all__ = ["MAX_QUANTITY", "CartLine", "Order", "Store"]

MAX_QUANTITY = 10
"""Largest quantity of one product a cart line may hold."""


@dataclass(frozen=True, slots=True)
class CartLine:
    product: Product
    quantity: int

    @property
    def subtotal(self) -> Decimal:
        return self.product.price * self.quantity


@dataclass(frozen=True, slots=True)
class Order:
    number: str
    name: str
    address: str
    lines: tuple[CartLine, ...]

    @property
    def total(self) -> Decimal:
        return sum((line.subtotal for line in self.lines), Decimal(0))


class Store:
    """Carts keyed by the cart cookie. All methods are safe to call from several handler threads."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._lock = threading.Lock()
        self._carts: dict[str, dict[str, int]] = {}
        self._cart_ids = count(1)
        self._order_numbers = count(1001)
        self._sessions: set[str] = set()
        self._session_ids = count(1)

    def has_cart(self, cart_id: str | None) -> bool:
        with self._lock:
            return cart_id is not None and cart_id in self._carts

    def new_cart(self) -> str:
        with self._lock:
            cart_id = f"cart-{next(self._cart_ids)}"
            self._carts[cart_id] = {}
            return cart_id

    def lines(self, cart_id: str | None) -> list[CartLine]:
        """The cart's lines in the order products were first added; unknown ids read as empty."""
        with self._lock:
            items = dict(self._carts.get(cart_id or "", {}))
        return self._to_lines(items)

    def add(self, cart_id: str, product_id: str, quantity: int) -> None:
        """Add to a line, capping it at MAX_QUANTITY. The caller checks that cart and product exist."""
        with self._lock:
            cart = self._carts[cart_id]
            cart[product_id] = min(cart.get(product_id, 0) + quantity, MAX_QUANTITY)

    def remove(self, cart_id: str | None, product_id: str) -> None:
        with self._lock:
            self._carts.get(cart_id or "", {}).pop(product_id, None)

    def place_order(self, cart_id: str, name: str, address: str) -> Order | None:
        """Turn the cart into an order and empty it; None if the cart is empty.

        The account password is checked for presence by the caller and never reaches the store.
        """
        with self._lock:
            items = self._carts.get(cart_id)
            if not items:
                return None
            self._carts[cart_id] = {}
            number = f"DS-{next(self._order_numbers)}"
        return Order(number=number, name=name, address=address, lines=tuple(self._to_lines(items)))

    def sign_in(self) -> str:
        """A new signed-in session for the demo account (the caller has checked the password)."""
        with self._lock:
            session_id = f"session-{next(self._session_ids)}"
            self._sessions.add(session_id)
            return session_id

    def signed_in(self, session_id: str | None) -> bool:
        with self._lock:
            return session_id is not None and session_id in self._sessions

    def _to_lines(self, items: dict[str, int]) -> list[CartLine]:
        return [CartLine(product, qty) for pid, qty in items.items() if (product := self._catalog.product(pid))]
