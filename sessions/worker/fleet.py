"""`make fleet`: a whole fleet on this machine, for trying it or demonstrating it with one command.

    python -m sessions.worker.fleet [--workers 3] [--port 8501] [--address 127.0.0.1] [--db URL] [--shop-port 8766]

A PostgreSQL server in a temporary directory (with `--db`, that database instead), the demo shop,
the workers and the console as their client (`ANDOR_RUNNER=workers`). Ctrl-C (or SIGTERM) stops the
console, then the workers, then the server, and removes the directory; if any part exits by itself,
the rest are stopped the same way: a fleet with a part missing would look alive while doing nothing.
The database URL reaches the children in their environment (`ANDOR_DB`), never on their command
lines, which `ps` shows to every user of the machine (docs/architecture.md, "sessions/worker/fleet.py").
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from sessions.errors import SessionsError
from sessions.store.pgserver import PostgresServer, PostgresServerError
from sessions.store.sql import open_store, without_password

__all__ = ["FleetError", "build_parser", "main"]


class FleetError(SessionsError):
    """A part of the fleet exited, or the console did not answer, while the fleet was starting."""


ROOT = Path(__file__).resolve().parents[2]
STOP_SECONDS = 30.0
"""How long a child gets to stop after SIGTERM before it is killed: a worker finishes its step first."""
READY_SECONDS = 90.0
"""How long the console may take to answer its health check after it starts."""


class _Stop(Exception):
    """SIGINT or SIGTERM arrived: stop the fleet."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    root = Path(tempfile.mkdtemp(prefix="andor-fleet-"))
    server: PostgresServer | None = None
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        if args.db:
            url = args.db
        else:
            root.chmod(0o755)  # the server's own directory below belongs to the user it runs as
            server = PostgresServer(root / "postgres")  # kept before it starts: a Ctrl-C meanwhile still stops it
            url = server.start().url
        open_store(url).close()  # the schema, once, before several workers would race to make it
        print(f"fleet: database {without_password(url)} (temporary files in {root})", flush=True)
        shop = f"http://127.0.0.1:{args.shop_port}"
        children.append(("demo shop", _spawn(_shop_command(args), root / "shop.log")))
        _wait_ready(shop, children, "/")
        database = {"ANDOR_DB": url}
        for number in range(args.workers):
            command = [sys.executable, "-m", "sessions", "worker"]
            children.append((f"worker {number + 1}", _spawn(command, root / f"worker-{number + 1}.log", database)))
        environment = {**database, "ANDOR_RUNNER": "workers", "ANDOR_SHOP_URL": shop}
        console = _spawn(_console_command(args), root / "console.log", environment)
        children.append(("console", console))
        shown = f"http://{'127.0.0.1' if args.address in ('0.0.0.0', '::') else args.address}:{args.port}"
        _wait_ready(shown, children)
        print(f"fleet: {args.workers} workers and the console at {shown} — Ctrl-C stops them all", flush=True)
        ended = _watch(children)
        print(f"fleet: {ended} exited by itself (its log is in {root}); stopping the rest", file=sys.stderr)
        return 1
    except _Stop:
        return 0
    except (PostgresServerError, FleetError) as error:
        print(f"fleet: {error}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _shut_down(children, server)
        shutil.rmtree(root, ignore_errors=True)
        print("fleet: stopped", flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m sessions.worker.fleet` (docs/cli.md is checked against it)."""
    parser = argparse.ArgumentParser(prog="python -m sessions.worker.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3, help="worker processes to start (default 3)")
    parser.add_argument("--port", type=int, default=8501, help="the console's port (default 8501)")
    parser.add_argument(
        "--address",
        default="127.0.0.1",
        help="where the console listens (default 127.0.0.1; any other needs a sign-in, see the README)",
    )
    parser.add_argument("--db", help="use this PostgreSQL database instead of starting a temporary server")
    parser.add_argument(
        "--shop-port", type=int, default=8766, help="the demo shop's port (default 8766, apart from `make run`'s 8765)"
    )
    return parser


def _console_command(args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.address",
        args.address,
        "--server.port",
        str(args.port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def _shop_command(args: argparse.Namespace) -> list[str]:
    """The demo shop in a process of its own, up before the workers take their first session: the
    console starts its own shop only when a page first opens, too late for sessions submitted before."""
    return [sys.executable, "-m", "demo.shop", "--port", str(args.shop_port)]


def _spawn(command: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A child in a session of its own, its output in `log` (the console's and each worker's stay apart)."""
    with log.open("ab") as out:  # the child keeps its own copy
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_ready(url: str, children: list[tuple[str, subprocess.Popen[bytes]]], path: str = "/_stcore/health") -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if (ended := _ended(children)) is not None:
            raise FleetError(f"{ended} exited while the fleet was starting")
        try:
            with urllib.request.urlopen(f"{url}{path}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise FleetError(f"{url} did not answer within {READY_SECONDS:g} s")


def _ended(children: list[tuple[str, subprocess.Popen[bytes]]]) -> str | None:
    return next((name for name, child in children if child.poll() is not None), None)


def _watch(children: list[tuple[str, subprocess.Popen[bytes]]]) -> str:
    """Wait until a child exits (or a signal stops the fleet); returns its name."""
    while (ended := _ended(children)) is None:
        time.sleep(0.5)
    return ended


def _shut_down(children: list[tuple[str, subprocess.Popen[bytes]]], server: PostgresServer | None) -> None:
    """The console first (no new commands), then the workers together, then the database they used."""
    console = [child for name, child in children if name == "console"]
    workers = [child for name, child in children if name != "console"]
    for group in (console, workers):
        for child in group:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in group:
            try:
                child.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    if server is not None:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
