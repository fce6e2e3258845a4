"""The gallery's Datasette: a made-up package index in SQLite, served by Datasette from the foreign venv.

Run by bench/foreign.py as `python datasette_site.py` with $FOREIGN_DIR (a temporary directory for the
database) and $FOREIGN_FD (a socket the launcher has bound to 127.0.0.1 and listens on). The database, made
anew at each start, has `packages` (2,000 rows, full-text search on name and summary) and `licenses` (a
foreign key from packages, so Datasette shows its labels and offers a facet). The database page has
Datasette's SQL editor (CodeMirror); table pages sort, facet, filter and page (50 rows a page).
"""

import datetime as dt
import os
import random
import socket
import sqlite3
from pathlib import Path

import uvicorn
from datasette.app import Datasette
from lifeline import hold

PACKAGES = 2000
LICENSES = (
    ("MIT", "MIT License", 1),
    ("Apache-2.0", "Apache License 2.0", 1),
    ("BSD-3-Clause", "BSD 3-Clause License", 1),
    ("BSD-2-Clause", "BSD 2-Clause License", 1),
    ("GPL-3.0", "GNU General Public License v3.0", 1),
    ("LGPL-2.1", "GNU Lesser General Public License v2.1", 1),
    ("MPL-2.0", "Mozilla Public License 2.0", 1),
    ("ISC", "ISC License", 1),
    ("Unlicense", "The Unlicense", 1),
    ("Proprietary", "Proprietary", 0),
)
PREFIXES = ("py", "fast", "tiny", "async", "super", "open", "micro", "easy", "deep", "auto", "hyper", "smart")
STEMS = ("json", "http", "csv", "yaml", "cache", "queue", "graph", "image", "parse", "crypto", "test", "log", "geo")
SUFFIXES = ("", "lib", "kit", "tools", "x", "er", "ify", "-utils", "-core", "-lite")
TOPICS = ("parsing", "networking", "testing", "data science", "web apps", "command lines", "images", "security")
MAINTAINERS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory")


def make_database(path: Path) -> None:
    rng = random.Random(2000)
    names: set[str] = set()
    while len(names) < PACKAGES:
        names.add(f"{rng.choice(PREFIXES)}{rng.choice(STEMS)}{rng.choice(SUFFIXES)}{rng.choice(('', '', '2', '3'))}")
    day0 = dt.date(2015, 1, 1)
    rows = [
        (
            n,
            name,
            f"{rng.randrange(0, 5)}.{rng.randrange(0, 20)}.{rng.randrange(0, 10)}",
            f"A {rng.choice(('small', 'fast', 'friendly', 'typed', 'pure-Python'))} library for {rng.choice(TOPICS)}",
            rng.choices(range(1, len(LICENSES) + 1), weights=(40, 20, 12, 4, 8, 3, 3, 4, 2, 4))[0],
            int(rng.paretovariate(1.2) * 1000),
            rng.randrange(0, 25000),
            (day0 + dt.timedelta(days=rng.randrange(0, 11 * 365))).isoformat(),
            rng.choice((">=3.8", ">=3.9", ">=3.10", ">=3.11", ">=3.12", None)),
            rng.choice(MAINTAINERS),
        )
        for n, name in enumerate(sorted(names, key=lambda _: rng.random()), start=1)
    ]
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE licenses (id INTEGER PRIMARY KEY, spdx TEXT NOT NULL, name TEXT NOT NULL,
                                   osi_approved INTEGER NOT NULL);
            CREATE TABLE packages (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, version TEXT NOT NULL,
                                   summary TEXT NOT NULL, license_id INTEGER REFERENCES licenses(id),
                                   downloads INTEGER NOT NULL, stars INTEGER NOT NULL, released TEXT NOT NULL,
                                   python_requires TEXT, maintainer TEXT NOT NULL);
            CREATE VIRTUAL TABLE packages_fts USING fts5(name, summary, content=packages, content_rowid=id);
            """
        )
        db.executemany("INSERT INTO licenses VALUES (?, ?, ?, ?)", [(n, *row) for n, row in enumerate(LICENSES, 1)])
        db.executemany("INSERT INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.execute("INSERT INTO packages_fts (rowid, name, summary) SELECT id, name, summary FROM packages")
    db.close()


def main() -> None:
    hold()
    database = Path(os.environ["FOREIGN_DIR"]) / "index.db"
    make_database(database)
    metadata = {
        "title": "Package index",
        "databases": {"index": {"tables": {"packages": {"label_column": "name", "sort_desc": "downloads"}}}},
    }
    ds = Datasette([str(database)], metadata=metadata, settings={"default_page_size": 50})
    config = uvicorn.Config(ds.app(), lifespan="on", log_level="warning")
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=int(os.environ["FOREIGN_FD"]))])


if __name__ == "__main__":
    main()
