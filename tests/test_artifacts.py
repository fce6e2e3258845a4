"""The artifact store: the browser writes into the session's directory of whatever store a runner or a
worker is given, and the HTML report reads screenshots through the store, not from the disk."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from planner.events import Kind
from planner.state import Recorder, SessionState
from sessions.client.creation import create_session
from sessions.client.report import html_report, write_report
from sessions.store.artifacts import ArtifactStore, LocalArtifacts, artifact_store
from sessions.store.sql import SqlStore
from sessions.worker.processes import Worker
from sessions.worker.runner import Runner


class Objects:
    """A stand-in for object storage: files kept by key (session id, name) in memory, a cache
    directory for the browser, and a count of the reads it answered."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.objects: dict[tuple[str, str], bytes] = {}
        self.reads: list[str] = []

    def session_dir(self, session_id: str) -> Path:
        return self.cache / session_id

    def _key(self, path: str) -> tuple[str, str]:
        parts = Path(path).parts
        return parts[-2], parts[-1]

    def read(self, path: str) -> bytes:
        self.reads.append(path)
        return self.objects[self._key(path)]

    def exists(self, path: str) -> bool:
        return self._key(path) in self.objects


def _jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (800, 500), "teal").save(buffer, format="JPEG")
    return buffer.getvalue()


def test_a_runner_and_a_worker_give_the_browser_the_sessions_directory_of_their_store(tmp_path: Path) -> None:
    store = SqlStore("sqlite://")
    session_id = create_session(store, "buy a kettle", "demo", start_url="http://shop.test/")
    objects: ArtifactStore = Objects(tmp_path / "cache")  # it is one, as far as a runner can tell
    runner = Runner(store, session_id, artifacts=objects)
    env = runner.backend.env
    try:
        assert env.screenshot_dir == tmp_path / "cache" / session_id  # type: ignore[attr-defined]
        assert env.storage_path == tmp_path / "cache" / session_id / "browser-state.json"  # type: ignore[attr-defined]
    finally:
        runner.backend.close()
    assert Worker(store, artifacts=objects).artifacts is objects
    assert Worker(store, artifacts=tmp_path / "shared").artifacts == LocalArtifacts(tmp_path / "shared")
    store.close()


def test_a_local_store_records_paths_that_name_its_files_from_any_directory() -> None:
    local = artifact_store(Path("var/artifacts"))
    assert isinstance(local, LocalArtifacts)
    assert local.session_dir("s1").is_absolute() and local.session_dir("s1") == Path.cwd() / "var/artifacts/s1"
    assert artifact_store(None) is None


def test_the_html_report_reads_its_screenshots_through_the_store(tmp_path: Path) -> None:
    objects = Objects(tmp_path / "cache")
    shot = str(tmp_path / "elsewhere" / "s1" / "0001.jpg")  # as a worker on another machine recorded it
    assert not Path(shot).exists()
    objects.objects[("s1", "0001.jpg")] = _jpeg()
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_CREATED, task="buy a kettle", start_url="http://shop.test/")
    recorder.record(Kind.NODE_EXPANDED, "0", type="ACTION", action="click [3]")
    recorder.record(Kind.ACTION_EXECUTED, "0", action="click [3]", ok=True, url="http://shop.test/", screenshot=shot)
    events = recorder.take()

    assert "data:image/jpeg;base64," in html_report("s1", state, events, objects)
    assert objects.reads == [shot]
    assert "data:image/jpeg;base64," not in html_report("s1", state, events), "no such file here"

    store = SqlStore("sqlite://")
    store.create_session("s1", state.task, "demo", events, status=state.status.value)
    out = write_report(store, "s1", tmp_path / "report.html", objects)
    assert "data:image/jpeg;base64," in out.read_text()
    store.close()
