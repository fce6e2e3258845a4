"""Where a session's browser state lives: `browser-state.json` in the session's artifacts directory,
mode 0600 from its first byte in a 0700 directory, in no export, and gone with the session
(`python -m sessions delete`, which refuses a session a live runner holds or a fork still needs).

Only the first test drives Chromium; the rest write the file through the browser's own code path
(`planner.browser.storage.write_state`) and read what every export makes of it.
"""

from __future__ import annotations

import base64
import io
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

from planner.browser.chromium import find_chromium
from planner.browser.storage import write_state
from planner.events import Kind
from planner.state import Recorder, SessionState
from sessions.cli import main
from sessions.client.creation import create_session, fork_session
from sessions.client.deletion import delete_session
from sessions.client.report import FORMATS, write_report
from sessions.store import SessionInUse, SessionNotFound
from sessions.store.artifacts import LocalArtifacts
from sessions.store.sql import SqlStore

COOKIE = "andor-probe-5e1f0c7b9d2a"
"""A cookie's value no page, model or export would write by chance."""
STATE = "browser-state.json"
START = "http://shop.test/"

_needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which a file made with the default mode is readable by everyone (0644)."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


# -- (a) the file the browser writes ------------------------------------------------------------------


class _CookiePage(BaseHTTPRequestHandler):
    """`/` sets the cookie and links to `/next`; `/next` is a plain page."""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        title = "Next" if self.path.startswith("/next") else "Probe"
        body = f'<html><head><title>{title}</title></head><body><a href="/next">Next</a></body></html>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if title == "Probe":
            self.send_header("Set-Cookie", f"probe={COOKIE}; Path=/; HttpOnly")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def cookie_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CookiePage)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _click_next(folder: Path, site: str) -> None:
    """One browser action on the cookie page, with `folder` as the session's artifacts directory."""
    from planner.browser.environment import BrowserEnvironment

    with BrowserEnvironment(f"{site}/", folder, storage_path=folder / STATE) as env:
        page = env.observe()
        found = re.search(r'\[(\d+)\] link "Next"', page.text)
        assert found, page.text
        result = env.execute(f"click [{found.group(1)}]")
        assert result.ok, result.error


@pytest.mark.browser
@_needs_chromium
def test_after_an_action_the_state_file_is_the_users_only(tmp_path: Path, cookie_site: str, umask_022: None) -> None:
    fresh = tmp_path / "artifacts" / "s1"
    _click_next(fresh, cookie_site)
    state = fresh / STATE
    assert COOKIE in state.read_text(), "the action's cookie was not kept"
    assert _mode(state) == 0o600, f"browser-state.json is {_mode(state):o}, readable by others"
    assert _mode(fresh) == 0o700, f"the session's directory is {_mode(fresh):o}"
    assert sorted(p.name for p in fresh.iterdir() if not p.name.endswith(".jpg")) == [STATE], "a temporary file left"

    older = tmp_path / "artifacts" / "s2"  # as an older version left them: a 0755 directory, a 0644 file
    older.mkdir(mode=0o755)
    (older / STATE).write_text('{"cookies": [], "origins": []}')
    (older / STATE).chmod(0o644)
    _click_next(older, cookie_site)
    assert _mode(older / STATE) == 0o600 and _mode(older) == 0o700


def test_the_state_file_is_written_0600_from_its_first_byte(
    tmp_path: Path, umask_022: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No moment where the state is on disk under a mode others can read: every file that ever holds it
    is 0600 while it does (the temporary one as it is written, the kept one after the move)."""
    from planner.browser import storage

    seen: list[tuple[str, int]] = []
    replace = os.replace

    def watched(source: str, target: Path) -> None:
        seen.append((Path(source).name, _mode(Path(source))))
        replace(source, target)

    monkeypatch.setattr(storage.os, "replace", watched)
    path = tmp_path / "s1" / STATE
    write_state(path, _state())
    write_state(path, _state())  # over an existing file
    assert [mode for _, mode in seen] == [0o600, 0o600] and all(name != STATE for name, _ in seen)
    assert _mode(path) == 0o600 and COOKIE in path.read_text()
    assert [p.name for p in path.parent.iterdir()] == [STATE]


# -- (b) no export holds it ---------------------------------------------------------------------------


def _state() -> dict[str, object]:
    cookie = {"name": "probe", "value": COOKIE, "domain": "shop.test", "path": "/", "expires": -1}
    return {"cookies": [cookie], "origins": [{"origin": START, "localStorage": [{"name": "k", "value": COOKIE}]}]}


def _jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 200), "teal").save(buffer, format="JPEG")
    return buffer.getvalue()


def _session_with_state(store: SqlStore, artifacts: LocalArtifacts, session_id: str = "s1") -> Path:
    """A session whose browser left a screenshot and its state in its directory, and whose log names the
    state file as a screenshot too (as a broken or hostile writer could); returns the directory."""
    folder = artifacts.session_dir(session_id)
    folder.mkdir(parents=True)
    (folder / "0001.jpg").write_bytes(_jpeg())
    write_state(folder / STATE, _state())
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_CREATED, task="buy a kettle", start_url=START, model="demo")
    recorder.record(Kind.NODE_EXPANDED, "0", type="ACTION", action="click [3]")
    shot, named = str(folder / "0001.jpg"), str(folder / STATE)
    recorder.record(Kind.ACTION_EXECUTED, "0", action="click [3]", ok=True, url=START, screenshot=shot)
    recorder.record(Kind.ACTION_EXECUTED, "0", action="click [4]", ok=True, url=START, screenshot=named)
    store.create_session(session_id, state.task, "demo", recorder.take(), status=state.status.value)
    return folder


def _leaks(content: bytes | str) -> bool:
    """Whether the cookie's value is in `content`, as text or inside any base64 data URL."""
    blob = content.encode() if isinstance(content, str) else content
    if COOKIE.encode() in blob:
        return True
    for encoded in re.findall(rb"data:[^;,\"']*;base64,([A-Za-z0-9+/=]+)", blob):
        if COOKIE.encode() in base64.b64decode(encoded + b"=" * (-len(encoded) % 4)):
            return True
    return False


def test_no_export_holds_the_browser_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.state import replay
    from ui.views.export import _FILES  # the console's downloads, built as its export view builds them

    db = str(tmp_path / "sessions.db")
    artifacts = LocalArtifacts(tmp_path / "artifacts")  # where the CLI looks, next to the database
    store = SqlStore(f"sqlite:///{db}")
    folder = _session_with_state(store, artifacts)
    assert COOKIE in (folder / STATE).read_text()
    exported: dict[str, bytes | str] = {}

    for extension in FORMATS:  # the report, every format, read through the artifact store
        written = write_report(store, "s1", tmp_path / f"report{extension}", artifacts)
        exported[f"report{extension}"] = written.read_bytes()
    assert "data:image/jpeg;base64," in str(exported["report.html"]), "the report did not read the screenshots"

    events = store.load("s1")
    for label, extension, _, build in _FILES:  # the console's export view
        if extension != "svg" or "report.svg" in exported:
            exported[f"console {label}"] = build("s1", replay(events), events)

    monkeypatch.chdir(tmp_path)  # the console's HTML report reads recorded paths from here
    for argv in (["export", "s1"], ["show", "s1"], *(["report", "s1", "--out", f"cli{ext}"] for ext in FORMATS)):
        assert main([*argv, "--db", db]) == 0, capsys.readouterr().err
        exported[" ".join(argv)] = capsys.readouterr().out
        if argv[0] == "report":
            exported[argv[-1]] = (tmp_path / argv[-1]).read_bytes()

    assert len(exported) >= 2 * len(FORMATS) + 5
    leaked = [name for name, content in exported.items() if _leaks(content)]
    assert not leaked, f"the browser state's cookie is in {leaked}"
    store.close()


# -- (c) deleting a session ---------------------------------------------------------------------------


def test_the_store_deletes_a_session_whole(store: SqlStore) -> None:
    kept = create_session(store, "keep me", "demo", start_url=START, session_id="kept")
    gone = create_session(store, "delete me", "demo", start_url=START, session_id="gone")
    for session_id in (kept, gone):
        store.enqueue(session_id, f"cmd-{session_id}", {"kind": "pause"})
        store.mark_attention("ana", f"{session_id}:error:paused", "seen", 1.0)
    store.mark_attention("ana", "gone_x:error:paused", "seen", 1.0)  # a LIKE wildcard in the id is not one

    store.delete_session(gone)

    with pytest.raises(SessionNotFound, match="no session 'gone'"):
        store.session(gone)
    with pytest.raises(SessionNotFound):
        store.load(gone)
    assert store.pending(gone) == [] and [s.id for s in store.sessions()] == [kept]
    assert store.attention_marks("ana", ["gone:error:paused", "kept:error:paused", "gone_x:error:paused"]) == {
        "kept:error:paused": "seen",
        "gone_x:error:paused": "seen",
    }
    assert [c.command_id for c in store.pending(kept)] == ["cmd-kept"] and len(store.load(kept)) == 1
    with pytest.raises(SessionNotFound, match="no session 'gone'"):
        store.delete_session(gone)
    create_session(store, "a new one", "demo", start_url=START, session_id="gone")  # the id is free again
    assert store.load("gone")[0].seq == 1


def test_the_store_refuses_a_session_a_live_runner_holds(store: SqlStore) -> None:
    session_id = create_session(store, "busy", "demo", start_url=START)
    now = time.time()
    assert store.claim(session_id, "worker-1", now, 15.0, pid=os.getpid()) is not None
    with pytest.raises(SessionInUse, match=f"session {session_id} is held by a live runner; stop it first"):
        store.delete_session(session_id)
    assert store.session(session_id).id == session_id and store.load(session_id)
    if store.url.startswith("sqlite"):  # SQLite judges at the caller's `now` (PostgreSQL by its own clock)
        store.delete_session(session_id, now=now + 60)  # its heartbeat is stale by then: nobody holds it
        with pytest.raises(SessionNotFound):
            store.session(session_id)


def test_a_parent_is_kept_while_a_fork_needs_its_screenshots(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite:///{tmp_path / 's.db'}")
    artifacts = LocalArtifacts(tmp_path / "artifacts")
    _session_with_state(store, artifacts, "parent")
    child = fork_session(store, "parent", 3)
    with pytest.raises(SessionInUse) as refused:
        delete_session(store, "parent", artifacts)
    assert str(refused.value) == (
        f"session parent cannot be deleted while its fork {child} exists (its log shows this session's "
        f"screenshots); delete it first: python -m sessions delete {child}"
    )
    assert (artifacts.session_dir("parent") / "0001.jpg").is_file(), "a refused delete removed files"
    shot = next(e.payload for e in store.load(child) if e.kind is Kind.ACTION_EXECUTED).screenshot  # type: ignore[union-attr]
    assert shot is not None and Path(shot).is_file(), "the fork shows the parent's screenshot"

    assert delete_session(store, child, artifacts) == 0  # it took no screenshot of its own
    assert delete_session(store, "parent", artifacts) == 2
    assert not artifacts.session_dir("parent").exists()

    # A fork whose parent is gone all the same (a fork made while its parent was being deleted) opens.
    orphan = _session_with_state(store, artifacts, "orphan")
    events = store.load("orphan")
    store.create_session("stray", "t", "demo", events, status="paused", parent_id="parent", forked_at=3)
    assert store.load("stray")[-1].seq == len(events) and store.session("stray").parent_id == "parent"
    assert main(["export", "stray", "--db", str(tmp_path / "s.db")]) == 0
    assert orphan.is_dir()
    store.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def with_state(tmp_path: Path) -> Iterator[tuple[str, SqlStore, Path]]:
    db = str(tmp_path / "sessions.db")
    store = SqlStore(f"sqlite:///{db}")
    folder = _session_with_state(store, LocalArtifacts(tmp_path / "artifacts"))
    (folder / "downloads").mkdir()
    (folder / "downloads" / "report.csv").write_text("a,b\n")
    yield db, store, folder
    store.close()


def test_delete_removes_the_rows_and_every_file(
    with_state: tuple[str, SqlStore, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db, store, folder = with_state
    store.enqueue("s1", "c1", {"kind": "pause"})
    code, out, err = _cli(capsys, "delete", "s1", "--db", db, "--yes")
    assert (code, err) == (0, ""), err
    assert out.strip().splitlines()[-1] == '{"session_id": "s1", "deleted": true, "files": 3}'
    assert not folder.exists() and folder.parent.is_dir(), "the session's directory (and only it) is gone"
    with pytest.raises(SessionNotFound):
        store.session("s1")
    assert store.pending("s1") == []


def test_delete_asks_first(
    with_state: tuple[str, SqlStore, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _, folder = with_state
    code, _, err = _cli(capsys, "delete", "s1", "--db", db)  # no terminal to ask at
    assert code == 2 and err == "error: session s1 was not deleted; give --yes to delete it without asking\n"

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for answer, deleted in (("n\n", False), ("\n", False), ("y\n", True)):
        monkeypatch.setattr("sys.stdin", Terminal(answer))
        code, _, err = _cli(capsys, "delete", "s1", "--db", db)
        assert "delete session s1 (buy a kettle), its log, screenshots and browser state?" in err
        assert (code == 0) is deleted and folder.exists() is not deleted


def test_delete_refuses_what_it_cannot_delete(
    with_state: tuple[str, SqlStore, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db, store, folder = with_state
    code, out, err = _cli(capsys, "delete", "nope", "--db", db, "--yes")
    not_found = _cli(capsys, "show", "nope", "--db", db)
    assert (code, out) == (not_found[0], "") == (2, "")
    assert err == not_found[2] == "error: no session 'nope'; `python -m sessions list` shows the sessions\n"

    store.claim("s1", "worker-1", time.time(), 15.0, pid=os.getpid())
    code, out, err = _cli(capsys, "delete", "s1", "--db", db, "--yes")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: session s1 is held by a live runner; stop it first (python -m sessions command")
    assert (folder / STATE).is_file() and store.session("s1").id == "s1"


def test_a_session_id_that_names_no_folder_of_its_own_is_refused_and_never_removed(tmp_path: Path) -> None:
    store = SqlStore("sqlite://")
    for bad in (".", ".."):
        with pytest.raises(Exception, match="not '.' or '..' alone"):
            create_session(store, "t", "demo", start_url=START, session_id=bad)
    artifacts = LocalArtifacts(tmp_path / "root" / "artifacts")
    (artifacts.root / "s1").mkdir(parents=True)
    for odd in (".", "..", "s1/..", "../root", ""):
        assert artifacts.remove(odd) == 0
    assert (artifacts.root / "s1").is_dir()


def test_files_that_cannot_be_removed_are_named_in_one_sentence(tmp_path: Path) -> None:
    from sessions.client.deletion import FilesLeft

    class Stuck(LocalArtifacts):
        def remove(self, session_id: str) -> int:
            raise PermissionError(13, "Permission denied", str(self.session_dir(session_id) / STATE))

    store = SqlStore("sqlite://")
    artifacts = Stuck(tmp_path / "artifacts")
    _session_with_state(store, artifacts)
    with pytest.raises(FilesLeft) as left:
        delete_session(store, "s1", artifacts)
    folder = artifacts.session_dir("s1")
    assert str(left.value) == (
        f"session s1 was deleted, but its files in {folder} could not all be removed (permission denied); "
        "remove that directory by hand"
    )
    with pytest.raises(SessionNotFound):
        store.session("s1")
