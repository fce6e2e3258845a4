"""Other people's web applications on loopback, for measuring the browser agent: `python -m bench.foreign`.

The gallery (tests/pages/) and the demo shop are pages written here, so an agent measured on them is measured
on this project's idea of a page. These four are real applications from PyPI: Django's admin, Datasette,
Flask-Admin and JupyterLab, installed by `make foreign` into their own venv (var/foreign/venv, from
tests/foreign/requirements.txt) so none of their dependencies meet the project's. `start_app(name)` runs one
as a subprocess of that venv on 127.0.0.1, with fresh data in a temporary directory, and yields its URL, the
pages an agent meets there, and a Playwright storage state where the app needs a login. Nothing they serve
comes from another host.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "APPS",
    "FOREIGN",
    "START_SECONDS",
    "VENV",
    "ForeignApp",
    "ForeignAppsMissing",
    "TaskPage",
    "cookie_header",
    "foreign_python",
    "start_app",
]

_ROOT = Path(__file__).resolve().parent.parent
FOREIGN = _ROOT / "tests" / "foreign"
VENV = _ROOT / "var" / "foreign" / "venv"
APPS: tuple[str, ...] = ("django-admin", "datasette", "flask-admin", "jupyterlab")
START_SECONDS = 60.0
"""How long an app may take to answer its first page: JupyterLab takes a few seconds on an idle machine of
two cores, several times that next to a busy test suite."""
_STOP_SECONDS = 10.0
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""urllib without the environment's proxies: the apps are on 127.0.0.1."""


@dataclass(frozen=True, slots=True)
class TaskPage:
    """A page an agent meets in an app: its path below the app's URL, and one line on what it does there."""

    path: str
    what: str
    ready: str = ""
    """A page-script condition true once the app has drawn what the task needs (JupyterLab draws in stages,
    its file list and notebook after the page itself); empty when the page is whole once loaded."""


@dataclass(frozen=True, slots=True)
class ForeignApp:
    """A running app: its base URL (no trailing slash), its task pages, the storage state that logs a browser
    in (Playwright's JSON; None where the app needs no login) and its process id (also its process group)."""

    name: str
    url: str
    pages: tuple[TaskPage, ...]
    storage_state: Path | None
    pid: int


class ForeignAppsMissing(Exception):
    """The foreign venv is not installed."""


def foreign_python() -> Path:
    """The foreign venv's interpreter, once `make foreign` has finished installing it."""
    python = VENV / "bin" / "python"
    if not python.exists() or not any(VENV.glob(".installed-*")):
        raise ForeignAppsMissing(
            f"The foreign apps (Django, Datasette, Flask-Admin, JupyterLab) are not installed in {VENV}: "
            "run `make foreign`."
        )
    return python


@contextmanager
def start_app(name: str, *, start_seconds: float = START_SECONDS) -> Iterator[ForeignApp]:
    """Start app `name` (one of APPS) on 127.0.0.1 and yield it once its first page answers; on leaving,
    stop its process group (and any process it started in a session of its own, as JupyterLab's kernels)
    and remove its temporary directory."""
    if name not in _APPS:
        raise ValueError(f"no foreign app {name!r}; the apps are {', '.join(APPS)}")
    python = foreign_python()
    workdir = Path(tempfile.mkdtemp(prefix=f"foreign-{name}-"))
    listener: socket.socket | None = None
    process: subprocess.Popen[bytes] | None = None
    try:
        app = _APPS[name]
        if app.takes_socket:
            listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        env = _environment(workdir, listener)
        argv = [str(python), *app.argv(workdir)]
        with (workdir / "output.log").open("wb") as log:
            process = subprocess.Popen(
                argv,
                cwd=FOREIGN,
                env=env,
                stdin=subprocess.PIPE,  # its lifeline (tests/foreign/lifeline.py): it ends when this process does
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=() if listener is None else (listener.fileno(),),
            )
        if listener is not None:
            url = f"http://127.0.0.1:{listener.getsockname()[1]}"
            listener.close()  # the app has its own copy; connections wait in its backlog until it serves
        else:
            url = _jupyter_url(name, process, workdir, time.monotonic() + start_seconds)
        _wait_for(name, process, workdir, url + app.ready_path, time.monotonic() + start_seconds)
        state = workdir / "storage-state.json"
        yield ForeignApp(
            name=name,
            url=url,
            pages=app.pages(url),
            storage_state=state if state.exists() else None,
            pid=process.pid,
        )
    finally:
        if listener is not None:
            listener.close()
        if process is not None:
            _stop(process)
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class _App:
    argv: Callable[[Path], list[str]]
    """The interpreter's arguments, given the app's temporary directory."""
    ready_path: str
    """A page that answers 200 without a login once the app serves."""
    pages: Callable[[str], tuple[TaskPage, ...]]
    takes_socket: bool = True
    """The app serves on a socket the launcher binds ($FOREIGN_FD); JupyterLab picks its own port instead."""


def _environment(workdir: Path, listener: socket.socket | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env |= {
        "PYTHONPATH": str(FOREIGN),
        "FOREIGN_DIR": str(workdir),
        "DJANGO_SETTINGS_MODULE": "django_site.settings",
        # JupyterLab: its configuration, data, settings and runtime files in the temporary directory, not ~.
        "JUPYTER_CONFIG_DIR": str(workdir / "jupyter" / "config"),
        "JUPYTER_DATA_DIR": str(workdir / "jupyter" / "data"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "jupyter" / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(workdir / "jupyter" / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(workdir / "jupyter" / "workspaces"),
        "IPYTHONDIR": str(workdir / "jupyter" / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    if listener is not None:
        env["FOREIGN_FD"] = str(listener.fileno())
    return env


def _django_pages(url: str) -> tuple[TaskPage, ...]:
    return (
        TaskPage("/admin/", "the admin's index: open the Shop app's orders, customers or products"),
        TaskPage(
            "/admin/shop/order/?status__exact=shipped&o=-5&p=2",
            "the orders change list, shipped only, sorted by total (highest first), page 2 of 100 rows a page: "
            "read a row, change the sort or a filter, tick rows and run an action",
        ),
        TaskPage(
            "/admin/shop/order/?placed__year=2025&placed__month=3&q=Berg",
            "orders of March 2025 (the date hierarchy) searched for a customer's name: clear the search, go up a level",
        ),
        TaskPage(
            "/admin/shop/order/add/",
            "the add-order form: pick a customer with the raw-id lookup (the magnifier icon opens a popup), move "
            "products across the two-pane picker, set dates with the calendar and clock icons, choose a status, save",
        ),
        TaskPage(
            "/admin/shop/order/17/change/",
            "an order's change form: change its status and total, open the collapsed Notes, save and continue",
        ),
        TaskPage("/admin/shop/order/17/delete/", "the delete confirmation for an order: confirm, or go back"),
    )


def _datasette_pages(url: str) -> tuple[TaskPage, ...]:
    sorted_table = "/index/packages?_sort_desc=downloads"
    later = sorted_table
    for _ in range(2):  # Datasette pages with a token for the next page, not a page number: follow Next twice
        with _LOOPBACK.open(f"{url}{later.replace('packages?', 'packages.json?')}", timeout=30) as answer:
            token = json.load(answer)["next"]
        later = f"{sorted_table}&_next={urllib.parse.quote(str(token))}"
    query = "select license_id, count(*) as packages, sum(downloads) as downloads from packages group by license_id"
    return (
        TaskPage("/index", "the database page: its tables, and the SQL editor (CodeMirror) to write and run a query"),
        TaskPage(
            f"{sorted_table}&_facet=license_id",
            "2,000 packages sorted by downloads with a license facet: filter by a license, add a column filter, "
            "search the full text, change the sort",
        ),
        TaskPage(later, "the same table on page 3 (50 rows a page, Next twice): read a row, page on"),
        TaskPage("/index/packages/42", "a row page: one package's fields and the link to its license"),
        TaskPage(
            f"/index?{urllib.parse.urlencode({'sql': query})}",
            "a query's results under the SQL editor: edit the query and run it again",
        ),
    )


def _flask_pages(url: str) -> tuple[TaskPage, ...]:
    return (
        TaskPage(
            "/admin/ticket/",
            "300 tickets, 50 a page: row icons to view, edit and delete, an inline-editable status, filters, a search "
            "box, the With selected action menu; Create opens a form in a dialog",
        ),
        TaskPage(
            "/admin/ticket/?sort=3&desc=1&page=2",
            "the tickets sorted by priority (descending), page 3: open a row's details dialog (the eye icon)",
        ),
        TaskPage(
            "/admin/ticket/?flt0_status_equals=open&search=form",
            "open tickets searched for 'form': add a filter (Add Filter menu), remove one, clear the search",
        ),
        TaskPage(
            "/admin/ticket/new/?url=/admin/ticket/",
            "the create form: a title, a status and priority select, an assignee (Select2), date pickers, a checkbox",
        ),
        TaskPage("/admin/ticket/edit/?id=7&url=/admin/ticket/", "a ticket's edit form: change fields and save"),
    )


_LAB_DRAWN = "!!document.querySelector('.jp-DirListing-item') && !document.querySelector('.jp-Spinner')"
_NOTEBOOK_DRAWN = (
    "!!document.querySelector('.jp-Notebook .jp-Cell .cm-content') && !document.querySelector('.jp-Spinner')"
)


def _jupyter_pages(url: str) -> tuple[TaskPage, ...]:
    return (
        TaskPage(
            "/lab/tree/demo.ipynb",
            "the notebook in the lab: run its cells (the toolbar's run icon or Shift+Enter), edit a code cell, read "
            "the output",
            f"{_LAB_DRAWN} && {_NOTEBOOK_DRAWN}",
        ),
        TaskPage(
            "/lab",
            "the lab's file browser and menus: open orders.csv, make a new file (File menu), rename it (context menu)",
            _LAB_DRAWN,
        ),
        TaskPage(
            "/lab/tree/orders.csv",
            "a CSV file in the lab's grid viewer: read a cell, sort by reading it",
            f"{_LAB_DRAWN} && !!document.querySelector('.jp-CSVViewer')",
        ),
        TaskPage(
            "/doc/tree/demo.ipynb", "the notebook alone (single-document mode): edit and run a cell", _NOTEBOOK_DRAWN
        ),
    )


_JUPYTER_FLAGS = (
    "--no-browser",
    "--ServerApp.ip=127.0.0.1",
    "--ServerApp.port=0",
    "--ServerApp.port_retries=0",
    "--ServerApp.allow_root=True",  # the tests run as root in CI
    "--IdentityProvider.token=",
    "--ServerApp.password=",
    "--ServerApp.disable_check_xsrf=True",
    # Nothing from the internet: no news feed, no update check, no extension listing from PyPI.
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    "--LabApp.extension_manager=readonly",
    "--LanguageServerManager.autodetect=False",
)


def _jupyter_argv(workdir: Path) -> list[str]:
    notebooks = workdir / "notebooks"
    shutil.copytree(FOREIGN / "jupyter", notebooks)
    # The lab asks in a toast whether to fetch Jupyter's news unless a setting answers: never.
    notification = workdir / "jupyter" / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    notification.joinpath("notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
    return [str(FOREIGN / "jupyter_site.py"), *_JUPYTER_FLAGS, f"--ServerApp.root_dir={notebooks}"]


_APPS: dict[str, _App] = {
    "django-admin": _App(lambda _: ["-m", "django_site.serve"], "/admin/login/", _django_pages),
    "datasette": _App(lambda _: [str(FOREIGN / "datasette_site.py")], "/-/versions.json", _datasette_pages),
    "flask-admin": _App(lambda _: [str(FOREIGN / "flask_site.py")], "/admin/", _flask_pages),
    "jupyterlab": _App(_jupyter_argv, "/api/status", _jupyter_pages, takes_socket=False),
}


def _jupyter_url(name: str, process: subprocess.Popen[bytes], workdir: Path, deadline: float) -> str:
    """JupyterLab binds a port of its own choosing and writes it to its runtime directory's server file."""
    server_file = workdir / "jupyter" / "runtime" / f"jpserver-{process.pid}.json"
    while True:
        with suppress(FileNotFoundError, json.JSONDecodeError, KeyError):
            return f"http://127.0.0.1:{json.loads(server_file.read_text())['port']}"
        _check_alive(name, process, workdir, f"its server file {server_file.name}")
        if time.monotonic() > deadline:
            raise _failure(name, workdir, f"did not write its server file {server_file.name} in time")
        time.sleep(0.1)


def _wait_for(name: str, process: subprocess.Popen[bytes], workdir: Path, url: str, deadline: float) -> None:
    while True:
        _check_alive(name, process, workdir, url)
        try:
            # An app on the launcher's socket keeps the connection in its backlog until it serves, and one that
            # exits closes the socket, so this waits as long as the deadline allows.
            with _LOOPBACK.open(url, timeout=max(0.5, deadline - time.monotonic())) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass  # not serving yet
        if time.monotonic() > deadline:
            raise _failure(name, workdir, f"did not answer {url} with 200 in time")
        time.sleep(0.1)


def _check_alive(name: str, process: subprocess.Popen[bytes], workdir: Path, waited_for: str) -> None:
    if process.poll() is not None:
        raise _failure(name, workdir, f"exited with status {process.returncode} while waiting for {waited_for}")


def _failure(name: str, workdir: Path, what: str) -> RuntimeError:
    try:
        lines = (workdir / "output.log").read_text(errors="replace").splitlines()[-20:]
    except OSError:
        lines = []
    tail = "\n".join(f"  {line}" for line in lines) or "  (nothing)"
    return RuntimeError(f"The foreign app {name} {what}; its last output:\n{tail}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the app's process group (servers shut down their children, JupyterLab its kernels), SIGKILL
    after _STOP_SECONDS, then SIGKILL to any process it started that outlived it in a session of its own."""
    started = _descendants(process.pid)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever of the group is left
    for pid, start in started.items():
        if _start_time(pid) == start:  # the same process, not a new one that reuses its id
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    if process.stdin is not None:
        process.stdin.close()


def _descendants(root: int) -> dict[int, str]:
    """The processes below `root`, each with its start time (/proc/PID/stat's 22nd field)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError, IndexError, ValueError):
                parents.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        start = _start_time(pid)
        if start is not None:
            found[pid] = start
            todo.extend(parents.get(pid, []))
    return found


def _start_time(pid: int) -> str | None:
    try:
        return _stat(pid)[19]
    except (OSError, IndexError):
        return None


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name (which may hold spaces): state, ppid, pgrp, …"""
    return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()


def cookie_header(storage_state: Path | None) -> dict[str, str]:
    """The storage state's cookies as a Cookie header, for fetching a task page without a browser."""
    if storage_state is None:
        return {}
    cookies = json.loads(storage_state.read_text())["cookies"]
    return {"Cookie": "; ".join(f"{cookie['name']}={cookie['value']}" for cookie in cookies)}


def _fetch(app: ForeignApp, page: TaskPage) -> int:
    request = urllib.request.Request(app.url + page.path, headers=cookie_header(app.storage_state))
    try:
        with _LOOPBACK.open(request, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.foreign", description=__doc__.splitlines()[0])
    parser.add_argument("apps", nargs="*", metavar="app", help=f"{', '.join(APPS)} (default: all)")
    parser.add_argument("--serve", action="store_true", help="keep the (first) app running until Ctrl-C")
    options = parser.parse_args(argv)
    names = options.apps or list(APPS)
    if unknown := sorted(set(names) - set(APPS)):
        parser.error(f"no foreign app {', '.join(unknown)}; the apps are {', '.join(APPS)}")
    if options.serve:
        with start_app(names[0]) as app:
            print(f"{app.name} on {app.url} (storage state: {app.storage_state})")
            for page in app.pages:
                print(f"  {app.url}{page.path}\n      {page.what}")
            with suppress(KeyboardInterrupt):
                signal.pause()
        return 0
    print(f"{'app':<14}{'start s':>8}{'pages':>7}{'stop s':>8}")
    failed = 0
    for name in names:
        begun = time.monotonic()
        with start_app(name) as app:
            started = time.monotonic() - begun
            statuses = [_fetch(app, page) for page in app.pages]
            stopping = time.monotonic()
        ok = sum(status == 200 for status in statuses)
        failed += ok < len(statuses)
        print(f"{name:<14}{started:>8.2f}{f'{ok}/{len(statuses)}':>7}{time.monotonic() - stopping:>8.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
