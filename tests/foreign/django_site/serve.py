"""Start the gallery's Django admin: `python -m django_site.serve` from tests/foreign, in the foreign venv.

The launcher (bench/foreign.py) passes $FOREIGN_DIR, a temporary directory for the SQLite database and the
storage state, and $FOREIGN_FD, a socket it has bound to 127.0.0.1 and listens on. This migrates, seeds
2,000 orders, makes the superuser `admin` (password `admin`) and a session for it, writes that session's
cookies to $FOREIGN_DIR/storage-state.json (Playwright's storage-state format), then serves on the socket
with Django's development server, static files included (as `runserver --insecure` does).

Migrating and seeding take about half a second, so each start makes its database anew.
"""

import datetime as dt
import json
import os
import random
import socket
from decimal import Decimal
from pathlib import Path

import django
from lifeline import hold

CITIES = ("Lisbon", "Oslo", "Porto", "Lyon", "Graz", "Turku", "Ghent", "Malmo", "Bergen", "Leeds", "Cork", "Brno")
FIRST = ("Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kaia", "Luca")
LAST = ("Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hansen", "Ivanova", "Jensen")
GOODS = ("Kettle", "Lamp", "Mug", "Notebook", "Pen", "Backpack", "Scarf", "Teapot", "Candle", "Blanket")
ADJECTIVES = ("Blue", "Oak", "Steel", "Linen", "Amber", "Slate")
NOTES = ("", "", "Leave at the door.", "Call before delivery.", "Gift: no invoice in the box.", "Fragile.")
ORDERS = 2000


def main() -> None:
    hold()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "django_site.settings")
    django.setup()
    from django.conf import settings

    _migrate_and_seed()
    _write_storage_state(Path(settings.DATABASES["default"]["NAME"]).parent / "storage-state.json")
    _serve(int(os.environ["FOREIGN_FD"]))


def _migrate_and_seed() -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import transaction

    from django_site.shop.models import Customer, Order, Product

    call_command("migrate", verbosity=0, interactive=False)
    rng = random.Random(2024)
    with transaction.atomic():
        User.objects.create_superuser("admin", "admin@example.com", "admin")
        customers = Customer.objects.bulk_create(
            Customer(
                name=f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                email=f"customer{n}@example.com",
                city=rng.choice(CITIES),
                vip=rng.random() < 0.1,
            )
            for n in range(1, 251)
        )
        products = Product.objects.bulk_create(
            Product(sku=f"SKU-{n:04d}", name=f"{adjective} {good}", price=Decimal(rng.randrange(300, 15000)) / 100)
            for n, (adjective, good) in enumerate(((a, g) for a in ADJECTIVES for g in GOODS), start=1)
        )
        start = dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)
        orders = []
        for n in range(ORDERS):
            placed = start + dt.timedelta(minutes=rng.randrange(0, 2 * 365 * 24 * 60))
            status = rng.choice(Order.Status.values)
            orders.append(
                Order(
                    number=f"SO-{10001 + n}",
                    customer=rng.choice(customers),
                    status=status,
                    placed=placed,
                    ship_by=placed + dt.timedelta(days=rng.randrange(1, 8)) if status != "cancelled" else None,
                    total=Decimal(rng.randrange(500, 90000)) / 100,
                    gift=rng.random() < 0.15,
                    note=rng.choice(NOTES),
                )
            )
        Order.objects.bulk_create(orders)
        Through = Order.products.through
        Through.objects.bulk_create(
            Through(order_id=order.pk, product_id=product.pk)
            for order in orders
            for product in rng.sample(products, rng.randrange(1, 4))
        )


def _write_storage_state(path: Path) -> None:
    """A logged-in session for `admin` and a CSRF cookie, as Playwright's `storage_state` takes them."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.utils.crypto import get_random_string

    user = User.objects.get(username="admin")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    csrf = get_random_string(32)

    def cookie(name: str, value: str, http_only: bool) -> dict[str, object]:
        return {
            "name": name,
            "value": value,
            "domain": "127.0.0.1",
            "path": "/",
            "expires": -1,
            "httpOnly": http_only,
            "secure": False,
            "sameSite": "Lax",
        }

    state = {
        "cookies": [
            cookie(settings.SESSION_COOKIE_NAME, session.session_key or "", True),
            cookie(settings.CSRF_COOKIE_NAME, csrf, False),
        ],
        "origins": [],
    }
    path.write_text(json.dumps(state, indent=1))


def _serve(fd: int) -> None:
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class Server(ThreadedWSGIServer):
        """Django's development server on the launcher's socket, already bound and listening."""

        def server_bind(self) -> None:
            self.server_address = self.socket.getsockname()
            self.server_name, self.server_port = self.server_address[:2]
            self.setup_environ()

        def server_activate(self) -> None:
            pass

    server = Server(("127.0.0.1", 0), WSGIRequestHandler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=fd)
    server.server_bind()
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    server.serve_forever()


if __name__ == "__main__":
    main()
