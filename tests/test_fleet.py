"""`make fleet` (`python -m sessions.worker.fleet`): PostgreSQL, three workers and the console come up, and one
Ctrl-C (SIGINT) takes every one of them down and removes the temporary directory."""

from __future__ import annotations

import re
import signal
import time
import urllib.request
from pathlib import Path

import pytest
from cli_helpers import start_fleet

from sessions.store.pgserver import MissingPostgres, find_binaries
from ui.server import free_port

WORKERS = 3


def _alive(pid: int) -> bool:
    """Running, not merely a zombie: a daemon like the postmaster is reaped by init in its own time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_the_fleet_starts_and_one_ctrl_c_stops_all_of_it() -> None:
    try:
        find_binaries()
    except MissingPostgres as missing:
        pytest.skip(str(missing))
    port, shop_port = free_port(), free_port()
    fleet, lines, reader = start_fleet("--workers", str(WORKERS), port=port, shop_port=shop_port)
    try:
        deadline = time.monotonic() + 120
        while not any("— Ctrl-C stops them all" in line for line in lines):
            assert fleet.poll() is None, f"the fleet exited while starting: {lines}"
            assert time.monotonic() < deadline, f"the fleet never said it was up: {lines}"
            time.sleep(0.2)
        root = Path(next(m[1] for line in lines if (m := re.search(r"temporary files in (\S+)\)", line))))
        assert f"console at http://127.0.0.1:{port}" in "".join(lines)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as health:
            assert health.status == 200, "the console answers its health check"
        # Before any page has opened the console: the workers' sessions need the shop from the start.
        with urllib.request.urlopen(f"http://127.0.0.1:{shop_port}/", timeout=10) as shop:
            assert shop.status == 200, "the demo shop answers as soon as the fleet is up"
        children = _children(fleet.pid)
        assert len(children) == WORKERS + 2, f"three workers, the demo shop and the console: {children}"
        postmaster = int((root / "postgres" / "data" / "postmaster.pid").read_text().split()[0])
        assert _alive(postmaster)

        fleet.send_signal(signal.SIGINT)
        assert fleet.wait(timeout=90) == 0, f"the fleet stops cleanly: {lines}"
    finally:
        if fleet.poll() is None:
            fleet.kill()
    reader.join(timeout=10)
    assert lines[-1].strip() == "fleet: stopped", lines
    assert [pid for pid in children if _alive(pid)] == [], "every worker, the shop and the console are gone"
    assert not _alive(postmaster), "the PostgreSQL server is gone"
    assert not root.exists(), f"{root} is removed"
