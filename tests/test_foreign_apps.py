"""The foreign-application gallery (bench/foreign.py): each app starts from the foreign venv, its task pages
answer (logged in where the app needs it) and load nothing from another host, and leaving the block ends
every process the app started. Each app starts once for the module; no browser is needed.

Without the foreign venv these fail with ForeignAppsMissing, which says to run `make foreign`: `make test`
installs it, so a missing venv is a broken setup, not a reason to skip.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest

from bench import foreign
from bench.foreign import APPS, ForeignApp, ForeignAppsMissing, cookie_header, start_app

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def running(pid: int) -> bool:
    """Whether the process is there and not a zombie waiting for its parent (or init) to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class Gallery:
    """The four apps, started once; `stop()` ends them all (the last test checks what it leaves)."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self.apps: dict[str, ForeignApp] = {}
        try:
            for name in APPS:
                self.apps[name] = self._stack.enter_context(start_app(name))
        except BaseException:
            self._stack.close()
            raise

    def stop(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def gallery() -> Iterator[Gallery]:
    running = Gallery()
    yield running
    running.stop()


def fetch(app: ForeignApp, path: str) -> tuple[int, str]:
    request = urllib.request.Request(app.url + path, headers=cookie_header(app.storage_state))
    try:
        with LOOPBACK.open(request, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


class Resources(HTMLParser):
    """The URLs a page loads as it renders: scripts, stylesheets, icons, images and frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("script", "img", "iframe") and found.get("src"):
            self.urls.append(found["src"] or "")
        if tag == "link" and found.get("href") and found.get("rel") not in ("canonical", "alternate", None):
            self.urls.append(found["href"] or "")


@pytest.mark.parametrize("name", APPS)
def test_task_pages_answer_and_load_only_from_the_app(gallery: Gallery, name: str) -> None:
    app = gallery.apps[name]
    assert app.url.startswith("http://127.0.0.1:")
    assert 3 <= len(app.pages) <= 6
    for page in app.pages:
        status, body = fetch(app, page.path)
        assert status == 200, f"{name} {page.path}: {status}"
        parser = Resources()
        parser.feed(body)
        foreign_hosts = [url for url in parser.urls if not urljoin(app.url + page.path, url).startswith(app.url)]
        assert not foreign_hosts, f"{name} {page.path} loads from another host: {foreign_hosts}"


def test_django_admin_is_logged_in_by_the_storage_state(gallery: Gallery) -> None:
    app = gallery.apps["django-admin"]
    assert app.storage_state is not None
    state = json.loads(app.storage_state.read_text())
    assert {cookie["name"] for cookie in state["cookies"]} == {"sessionid", "csrftoken"}
    assert {cookie["domain"] for cookie in state["cookies"]} == {"127.0.0.1"}
    status, body = fetch(app, "/admin/shop/order/?o=-5&p=2")
    assert status == 200 and "2000 orders" in body and "Mark selected orders as shipped" in body
    anonymous = LOOPBACK.open(app.url + "/admin/shop/order/", timeout=30)  # redirected to the login form
    assert anonymous.geturl().startswith(app.url + "/admin/login/")


def test_the_other_apps_need_no_login(gallery: Gallery) -> None:
    assert [name for name, app in gallery.apps.items() if app.storage_state is not None] == ["django-admin"]


def test_datasette_pages_follow_its_next_tokens(gallery: Gallery) -> None:
    later = next(page for page in gallery.apps["datasette"].pages if "_next=" in page.path)
    status, body = fetch(gallery.apps["datasette"], later.path.replace("packages?", "packages.json?"))
    assert status == 200 and len(json.loads(body)["rows"]) == 50


def test_a_missing_venv_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(foreign, "VENV", tmp_path / "venv")
    with pytest.raises(ForeignAppsMissing, match="run `make foreign`"):
        foreign.foreign_python()
    with pytest.raises(ForeignAppsMissing), start_app("datasette"):
        pass


def test_an_app_that_dies_at_start_says_so_with_its_last_output(monkeypatch: pytest.MonkeyPatch) -> None:
    dying = foreign._App(lambda _: ["-c", "print('no database here'); raise SystemExit(3)"], "/", lambda _: ())
    monkeypatch.setitem(foreign._APPS, "datasette", dying)
    exited = r"(?s)datasette exited with status 3 while waiting for .*no database here"
    with pytest.raises(RuntimeError, match=exited), start_app("datasette"):
        pass


def test_an_app_ends_when_its_launcher_is_killed() -> None:
    """The app runs in a session of its own, so a launcher killed outright cannot stop it: its lifeline (the
    stdin pipe, tests/foreign/lifeline.py) closes instead, and the app stops itself."""
    script = (
        "from bench.foreign import start_app\n"
        "with start_app('flask-admin') as app:\n"
        "    print(app.pid, flush=True)\n"
        "    input()\n"
    )
    launcher = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert launcher.stdout is not None
        app_pid = int(launcher.stdout.readline())
        environ = Path(f"/proc/{app_pid}/environ").read_bytes().split(b"\0")
        workdir = Path(next(item for item in environ if item.startswith(b"FOREIGN_DIR=")).decode().partition("=")[2])
    finally:
        launcher.kill()
        launcher.wait()
    try:
        deadline = time.monotonic() + 10
        while running(app_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(app_pid)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # the killed launcher could not


def test_an_unknown_app_is_refused() -> None:
    with pytest.raises(ValueError, match="django-admin, datasette"), start_app("wordpress"):
        pass


def test_leaving_the_block_ends_every_process(gallery: Gallery) -> None:
    """Last in the file: it stops the module's apps. JupyterLab's kernel runs in a session of its own, outside
    the app's process group, so one is started first to see that it ends too."""
    jupyter = gallery.apps["jupyterlab"]
    kernel = urllib.request.Request(jupyter.url + "/api/kernels", data=b'{"name": "python3"}', method="POST")
    with LOOPBACK.open(kernel, timeout=60) as answer:
        assert answer.status == 201
    processes = {name: {app.pid, *foreign._descendants(app.pid)} for name, app in gallery.apps.items()}
    assert len(processes["jupyterlab"]) >= 2, "the kernel's process"
    gallery.stop()
    for name, app in gallery.apps.items():
        left = [pid for pid in processes[name] if running(pid)]
        assert not left, f"{name} left {left}"
        with pytest.raises(ProcessLookupError):
            os.killpg(app.pid, 0)
        port = int(app.url.rsplit(":", 1)[1])
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    django_state = gallery.apps["django-admin"].storage_state
    assert django_state is not None and not django_state.parent.exists()
