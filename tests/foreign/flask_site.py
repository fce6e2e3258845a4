"""The gallery's Flask-Admin site: an issue tracker's tickets over SQLAlchemy and SQLite, in the foreign venv.

Run by bench/foreign.py as `python flask_site.py` with $FOREIGN_DIR (a temporary directory for the database)
and $FOREIGN_FD (a socket the launcher has bound to 127.0.0.1 and listens on). The ticket list has 300 rows,
50 to a page, sortable columns, filters, a search box, row icons (view, edit, delete), an action menu and an
inline-editable status; the create, edit and details forms open in modal dialogs.
"""

import datetime as dt
import enum
import logging
import os
import random
from pathlib import Path
from typing import ClassVar

from flask import Flask, redirect
from flask_admin import Admin
from flask_admin.actions import action
from flask_admin.contrib.sqla import ModelView
from flask_admin.theme import Bootstrap4Theme
from flask_sqlalchemy import SQLAlchemy
from lifeline import hold
from sqlalchemy import ForeignKey
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

TICKETS = 300
PEOPLE = ("Ada Lovelace", "Alan Turing", "Barbara Liskov", "Donald Knuth", "Edsger Dijkstra", "Frances Allen")
PEOPLE += ("Grace Hopper", "John Backus", "Ken Thompson", "Leslie Lamport", "Margaret Hamilton", "Niklaus Wirth")
VERBS = ("Fix", "Refactor", "Document", "Test", "Speed up", "Remove", "Migrate", "Review")
THINGS = ("login form", "CSV export", "search index", "invoice PDF", "cache layer", "upload dialog", "date picker")
THINGS += ("settings page", "audit log", "API rate limit", "password reset", "dark mode", "sidebar menu")


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)


class Status(enum.Enum):
    open = "open"
    in_progress = "in progress"
    blocked = "blocked"
    closed = "closed"


class Person(db.Model):
    __tablename__ = "person"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    email: Mapped[str]
    tickets: Mapped[list["Ticket"]] = relationship(back_populates="assignee")

    def __str__(self) -> str:
        return self.name


class Ticket(db.Model):
    __tablename__ = "ticket"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str]
    status: Mapped[Status]
    priority: Mapped[int]
    assignee_id: Mapped[int | None] = mapped_column(ForeignKey("person.id"))
    assignee: Mapped[Person | None] = relationship(back_populates="tickets")
    created: Mapped[dt.datetime]
    due: Mapped[dt.date | None]
    urgent: Mapped[bool] = mapped_column(default=False)
    description: Mapped[str] = mapped_column(default="")

    def __str__(self) -> str:
        return f"#{self.id} {self.title}"


class TicketView(ModelView):
    can_view_details = True
    create_modal = True
    edit_modal = True
    details_modal = True
    page_size = 50
    column_list = ("id", "title", "status", "priority", "assignee", "created", "due", "urgent")
    column_sortable_list = ("id", "title", "status", "priority", ("assignee", "assignee.name"), "created", "due")
    column_default_sort = "id"
    column_filters = ("status", "priority", "assignee.name", "created", "due", "urgent")
    named_filter_urls = True
    column_searchable_list = ("title", "description")
    column_editable_list = ("status", "urgent")
    form_choices: ClassVar[dict[str, list[tuple[str, str]]]] = {
        "priority": [("1", "1 (highest)"), ("2", "2"), ("3", "3"), ("4", "4 (lowest)")]
    }
    form_widget_args: ClassVar[dict[str, dict[str, int]]] = {"description": {"rows": 6}}

    @action("close", "Close", "Close the selected tickets?")
    def action_close(self, ids: list[str]) -> None:
        Ticket.query.filter(Ticket.id.in_([int(i) for i in ids])).update({"status": Status.closed})
        db.session.commit()


class PersonView(ModelView):
    can_view_details = True
    column_list = ("id", "name", "email")
    column_searchable_list = ("name", "email")


def create_app(database: Path) -> Flask:
    app = Flask(__name__)
    app.config["SECRET_KEY"] = "foreign-gallery-not-a-secret"
    app.config["SQLALCHEMY_DATABASE_URI"] = f"sqlite:///{database}"
    db.init_app(app)
    admin = Admin(app, name="Tracker", theme=Bootstrap4Theme(swatch="default"))
    admin.add_view(TicketView(Ticket, db, name="Tickets"))
    admin.add_view(PersonView(Person, db, name="People"))

    @app.route("/")
    def index() -> Response:
        return redirect("/admin/")

    with app.app_context():
        db.create_all()
        _seed()
    return app


def _seed() -> None:
    rng = random.Random(300)
    people = [Person(name=name, email=f"{name.split()[0].lower()}@example.com") for name in PEOPLE]
    db.session.add_all(people)
    start = dt.datetime(2025, 1, 6, 9)
    for n in range(TICKETS):
        created = start + dt.timedelta(hours=rng.randrange(0, 365 * 24))
        db.session.add(
            Ticket(
                title=f"{rng.choice(VERBS)} the {rng.choice(THINGS)}",
                status=rng.choice(list(Status)),
                priority=rng.randrange(1, 5),
                assignee=rng.choice(people) if n % 7 else None,
                created=created,
                due=(created + dt.timedelta(days=rng.randrange(3, 60))).date() if n % 3 else None,
                urgent=rng.random() < 0.1,
                description=f"Reported by {rng.choice(PEOPLE)}. Steps to reproduce are in the thread.",
            )
        )
    db.session.commit()


def main() -> None:
    hold()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_app(Path(os.environ["FOREIGN_DIR"]) / "tracker.sqlite")
    make_server("127.0.0.1", 0, app, threaded=True, fd=int(os.environ["FOREIGN_FD"])).serve_forever()


if __name__ == "__main__":
    main()
