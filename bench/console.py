"""Console responsiveness: `python -m bench.console`.

Prints (1) the time from an engine event being committed to its appearance in the browser (goal p95
<= 1.5 s), (2) the first draw of 1,000- and 5,000-node trees in headless Chromium, as the console
draws them by default (folded to the active neighbourhood) and with every node drawn (goals <= 2 s
and <= 3 s), (3) the server time of one live refresh of a 1,000-node session (goal <= 200 ms), and
what an operator waits for: (4) from a click on Step to the new step count on screen (goal p95
<= 1 s), (5) from a click on Pause on a running session to its status line saying it is paused
(goal p95 <= 1 s) and (6) from opening a 1,000-node session's page to its tree drawn (goal <= 3 s);
and (7) what an open page of a paused session costs the console process while nothing happens (CPU
per second, goal <= 0.1 s; its memory before and after the latency rounds, which must not keep
growing); and (8) what a page watching a running demo session receives over its websocket per second, by
element (the console sends no message by reference, `.streamlit/config.toml`, so every redraw
carries its images and chart whole).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, sync_playwright

from bench.engine import balanced_script
from planner.browser.chromium import find_chromium, launch_args
from planner.browser.dry import DRY_START, DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import SessionStatus
from planner.models.scripted import ScriptedModel
from planner.protocols import ActionResult
from planner.state import replay
from sessions.backends import Backend
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner
from ui.server import start_console
from ui.tree_chart import build_chart

GOALS = {
    "latency_p95_s": 1.5,
    "draw_1k_s": 2.0,
    "draw_5k_s": 3.0,
    "refresh_ms": 200,
    "step_click_p95_s": 1.0,
    "pause_click_p95_s": 1.0,
    "load_to_tree_s": 3.0,
    "idle_cpu_s_per_s": 0.1,
}


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used so far (Linux `/proc`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def idle_cost(pid: int, seconds: float = 10.0) -> float:
    """CPU seconds per second the console spends while an open page of a paused session redraws on
    its timer and nothing changes (Streamlit's forced full GC after every run once made this ~0.7)."""
    before, started = _cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (_cpu_seconds(pid) - before) / (time.monotonic() - started)


def _grown_session(
    store: SqlStore, branching: int, depth: int, until_nodes: int | None = None, paused: bool = False
) -> tuple[str, int]:
    """A session whose scripted run grew a balanced tree to `until_nodes` nodes (to the end if None)."""
    script, task, _ = balanced_script(branching, depth)
    script_file = Path(store.url.removeprefix("sqlite:///")).with_name(f"script-{branching}-{depth}-{until_nodes}.json")
    script_file.write_text(script.model_dump_json())
    config = EngineConfig(max_steps=100_000)
    session_id = create_session(store, task, f"script:{script_file}", start_url=DRY_START, config=config, paused=paused)
    state = replay(store.load(session_id))
    engine = Engine(state, ScriptedModel(script), DryEnvironment())
    if paused:
        return session_id, len(state.tree)
    batch = []
    while (until_nodes is None or len(state.tree) < until_nodes) and (events := engine.step()):
        batch.extend(events)
        if len(batch) > 2000:
            store.append(session_id, batch, status=state.status.value, reason=state.reason, steps=state.steps)
            batch = []
    store.append(session_id, batch, status=state.status.value, reason=state.reason, steps=state.steps)
    return session_id, len(state.tree)


def event_latency(page: Page, url: str, store: SqlStore, rounds: int = 20) -> list[float]:
    session_id, _ = _grown_session(store, 3, 4, paused=True)
    page.goto(f"{url}/?session={session_id}")
    page.wait_for_selector("svg text", timeout=60_000)
    page.locator(".st-key-ctl_step button").click()  # the console starts its runner for the session
    page.wait_for_function("() => document.body.innerText.includes('paused after one step')", timeout=30_000)
    latencies = []
    for _ in range(rounds):
        last = store.session(session_id).last_seq
        queue_command(store, session_id, {"kind": "step"})
        deadline = time.time() + 10
        target = None
        while target is None and time.time() < deadline:
            for event in store.load(session_id, after=last):
                if isinstance(event.payload, SessionStatus) and event.payload.reason == "paused after one step":
                    target = event
            time.sleep(0.005)
        assert target is not None, "the console's runner did not take the step"
        page.wait_for_function(
            "n => document.body.innerText.includes('· event ' + n)", arg=str(target.seq), timeout=10_000, polling=25
        )
        latencies.append(time.time() - target.at)
    return latencies


_ARM_CLICK = """() => { window.__clicked = null; window.__clicked_at = null;
    document.addEventListener('click', () => { window.__clicked = performance.now(); window.__clicked_at = Date.now(); },
        {capture: true, once: true}); }"""
"""Note when the browser gets the next click, so a measure starts at the click, not at Playwright's call;
and its wall-clock time, to set against the time the log records what the click asked for."""
_SHOWS_STEP = r"n => new RegExp('\\bstep ' + n + ' · \\d+ nodes').test(document.body.innerText)"
"""The status line's counters ("step 3 · 40 nodes · ...") show step `n`."""
_SINCE_CLICK = r"""n => new RegExp('\\bstep ' + n + ' · \\d+ nodes').test(document.body.innerText)
    && window.__clicked !== null && Math.max(performance.now() - window.__clicked, 0.001) / 1000"""
"""Seconds since the click, once the status line shows step `n` (checked on every animation frame)."""


def step_click_latency(page: Page, url: str, store: SqlStore, rounds: int = 20) -> list[float]:
    """Seconds from a click on Step (a paused session) to the status line's new step count on screen,
    both taken in the browser.

    The first click, which also starts the session's runner, is left out. Between rounds the run is
    paused again, as an operator stepping through a plan finds it.
    """
    session_id, _ = _grown_session(store, 3, 4, paused=True)
    page.goto(f"{url}/?session={session_id}")
    page.wait_for_selector("svg text", timeout=60_000)
    step = page.locator(".st-key-ctl_step button")
    latencies = []
    for round_ in range(rounds + 1):
        steps = store.session(session_id).steps
        page.wait_for_function(_SHOWS_STEP, arg=str(steps), timeout=30_000, polling=25)
        page.wait_for_function("b => !b.disabled", arg=step.element_handle(), timeout=30_000)
        page.evaluate(_ARM_CLICK)
        step.click()
        shown = page.wait_for_function(_SINCE_CLICK, arg=str(steps + 1), timeout=30_000, polling="raf")
        if round_:
            latencies.append(float(shown.json_value()))
        deadline = time.time() + 30
        while not (store.session(session_id).status == "paused" and not store.pending(session_id)):
            assert time.time() < deadline, "the step did not end paused"
            time.sleep(0.02)
    return latencies


ACTION_SECONDS = 0.25
"""How long each browser action of the run that `pause_click_latency` pauses takes: about the demo
shop's median action (`python -m bench.browser`); its model answers at once."""
PAUSED = "paused — paused by operator"
"""The status line of a session an operator paused: its status in words (`sessions.client.verdict.standing`)
and the reason the Pause command records (`planner.commands`), as `ui.views.header` writes them."""
_STATUS_LINE = r"""[...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .map(e => e.innerText).find(t => /\bstep \d+ · \d+ nodes/.test(t)) || ''"""
"""The status line's text (the markdown block with its counters), so an answer beside a control or a
row of the inbox cannot stand in for it."""
_PAUSED_SINCE_CLICK = f"""line => ({_STATUS_LINE}).includes(line) && window.__clicked !== null
    && [Math.max(performance.now() - window.__clicked, 0.001) / 1000, window.__clicked_at / 1000]"""
"""Seconds since the click and the click's Unix time, once the status line reads `line` (checked on every
animation frame)."""


class _SlowDry(DryEnvironment):
    """The dry environment with actions that take `ACTION_SECONDS`, as a browser's do, so a run goes on
    for minutes instead of milliseconds and a pause lands in the middle of it."""

    def execute(self, action: str, **options: Any) -> ActionResult:
        time.sleep(ACTION_SECONDS)
        return super().execute(action, **options)


def _control(page: Page, verb: str) -> Locator:
    """A run control (`ui.views.header`), once the page draws it enabled."""
    button = page.locator(f".st-key-ctl_{verb} button")
    page.wait_for_function("b => !b.disabled", arg=button.element_handle(timeout=30_000), timeout=30_000)
    return button


def pause_click_latency(page: Page, url: str, store: SqlStore, rounds: int = 20) -> tuple[list[float], list[float]]:
    """Seconds from a click on Pause (a running session) to the status line saying it is paused, both taken
    in the browser; and from the click to the pause recorded in the log, the part of it that is the
    runner finishing the step under way.

    The run is a scripted model on the dry environment whose actions take `ACTION_SECONDS`, run by a
    runner of this process, as `python -m sessions run` in a shell would run it: the console's own runner
    threads run a session's stored model spec, which has no way to be slow. Between rounds Resume sets it
    running again, and the next Pause waits until the page shows it running.
    """
    session_id, _ = _grown_session(store, 4, 4, paused=True)  # 341 nodes: 256 actions, about 64 s of running
    own_store = SqlStore(store.url)  # the runner's thread and its heartbeat get a store of their own
    runner = Runner(own_store, session_id, Backend(ScriptedModel(balanced_script(4, 4)[0]), _SlowDry()))
    stopping = threading.Event()
    thread = threading.Thread(target=runner.run, kwargs={"should_stop": stopping.is_set}, name="bench-runner")
    thread.start()
    try:
        page.goto(f"{url}/?session={session_id}")
        page.wait_for_selector("svg text", timeout=60_000)
        shown, recorded = [], []
        for _ in range(rounds):
            last = store.session(session_id).last_seq
            _control(page, "resume").click()
            page.wait_for_function(f"() => ({_STATUS_LINE}).includes('running — ')", timeout=30_000, polling=25)
            pause = _control(page, "pause")
            page.evaluate(_ARM_CLICK)
            pause.click()
            since, clicked_at = page.wait_for_function(
                _PAUSED_SINCE_CLICK, arg=PAUSED, timeout=30_000, polling="raf"
            ).json_value()
            shown.append(float(since))
            paused = [
                event.at
                for event in store.load(session_id, after=last)
                if isinstance(event.payload, SessionStatus) and event.payload.reason == "paused by operator"
            ]
            assert paused, "the status line says paused, but the log has no pause"
            recorded.append(paused[-1] - float(clicked_at))
            assert store.session(session_id).status == "paused", "the run ended before the rounds did"
        return shown, recorded
    finally:
        stopping.set()
        thread.join(30)
        own_store.close()


def first_draw(page: Page, url: str, session_id: str, draw_all: bool) -> float:
    page.goto("about:blank")
    started = time.perf_counter()
    page.goto(f"{url}/?session={session_id}" + ("&all=1" if draw_all else ""))
    page.wait_for_function(
        "() => document.querySelectorAll('svg text').length > 5 || document.querySelector('[class*=echarts] canvas, canvas[data-zr-dom-id]')",
        timeout=60_000,
        polling=20,
    )
    return time.perf_counter() - started


def load_to_tree(page: Page, url: str, session_id: str, rounds: int = 10) -> list[float]:
    """Seconds from opening a session's page to its tree drawn, Streamlit's own start-up included."""
    return [first_draw(page, url, session_id, draw_all=False) for _ in range(rounds)]


WATCHED_TASK = "Wireless over-ear headphones and duplex"
"""The demo task whose running page `watching_cost` measures: the longest, so it runs throughout."""


def watching_cost(page: Page, url: str, seconds: float = 10.0) -> tuple[float, list[tuple[str, float]]]:
    """KiB per second the console sends a page watching a running demo session, in all and by element
    (the three largest), over `seconds` once the live page shows its first screenshot."""
    from collections import Counter

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    received: Counter[str] = Counter()
    counting = [False]

    def frame(payload: bytes | str) -> None:
        if not counting[0] or not isinstance(payload, bytes):
            return
        message = ForwardMsg()
        message.ParseFromString(payload)
        kind: str = message.WhichOneof("type") or "?"
        if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            kind = message.delta.new_element.WhichOneof("type") or kind
        received[kind] += len(payload)

    page.on("websocket", lambda socket: socket.on("framereceived", frame))
    page.goto(url)
    page.get_by_text("New session").wait_for(timeout=60_000)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator(".st-key-new_task_choice input").fill(WATCHED_TASK)
    page.get_by_role("option").first.click()
    sidebar.locator(".st-key-start_session button").click()
    page.locator(".st-key-live_page img").first.wait_for(timeout=90_000)
    counting[0] = True
    page.wait_for_timeout(seconds * 1000)  # Playwright delivers the frames while it waits
    counting[0] = False
    largest = [(kind, size / 1024 / seconds) for kind, size in received.most_common(3)]
    return sum(received.values()) / 1024 / seconds, largest


def _p95(figures: list[float]) -> float:
    ordered = sorted(figures)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def refresh_time(db: Path, session_id: str, rounds: int = 10) -> tuple[float, float]:
    """Server time of one redraw of the whole session page (the live fragment is all of it),
    measured as a script run in Streamlit's headless test harness; also the chart alone, every node drawn."""
    from unittest.mock import patch

    from streamlit.testing.v1 import AppTest

    # Only for the harness: the console started after this must serve its demo shop (watching_cost).
    with patch.dict(os.environ, ANDOR_DB=str(db), ANDOR_SHOP="0"):
        app = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
        app.query_params["session"] = session_id
        app.run()
        timings = []
        for _ in range(rounds):
            started = time.perf_counter()
            app.run()
            timings.append((time.perf_counter() - started) * 1000)
    state = replay(SqlStore(database_url(db)).load(session_id))
    everything = []
    for _ in range(5):
        started = time.perf_counter()
        json.dumps(build_chart(state, collapse_closed=False, max_nodes=1_000_000).option)
        everything.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), statistics.median(everything)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        store = SqlStore(database_url(db))
        mid_1k, nodes_1k = _grown_session(store, 10, 3, until_nodes=1000)
        mid_5k, nodes_5k = _grown_session(store, 17, 3, until_nodes=5000)
        refresh_ms, refresh_all_ms = refresh_time(db, mid_1k)
        console = start_console(db)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=find_chromium(), args=launch_args())
                page = browser.new_page(viewport={"width": 1500, "height": 1100})
                draws = {
                    (nodes, draw_all): min(first_draw(page, console.url, sid, draw_all) for _ in range(2))
                    for nodes, sid in ((nodes_1k, mid_1k), (nodes_5k, mid_5k))
                    for draw_all in (False, True)
                }
                loads = load_to_tree(page, console.url, mid_1k)
                page.close()
                fresh = browser.new_page(viewport={"width": 1500, "height": 1100})
                errors: list[str] = []
                fresh.on("pageerror", lambda error: errors.append(str(error)))
                fresh.on("crash", lambda _: errors.append("page crashed"))
                try:
                    latencies = event_latency(fresh, console.url, store)
                    idle = idle_cost(console.process.pid)
                    rss_before = _rss_mib(console.process.pid)
                    clicks = step_click_latency(fresh, console.url, store)
                    rss_after = _rss_mib(console.process.pid)
                    pauses, pauses_recorded = pause_click_latency(fresh, console.url, store)
                finally:
                    if errors:
                        print("page errors:", errors[:5])
                watched, largest = watching_cost(
                    browser.new_page(viewport={"width": 1500, "height": 1100}), console.url
                )
                browser.close()
        finally:
            console.stop()
    print(
        f"engine event -> visible in the browser ({len(latencies)} events): p50 {statistics.median(latencies):.2f} s, "
        f"p95 {_p95(latencies):.2f} s, max {max(latencies):.2f} s (goal p95 <= {GOALS['latency_p95_s']} s)"
    )
    print(
        f"click on Step -> new step count on screen ({len(clicks)} clicks): p50 {statistics.median(clicks):.2f} s, "
        f"p95 {_p95(clicks):.2f} s, max {max(clicks):.2f} s (goal p95 <= {GOALS['step_click_p95_s']:g} s, "
        f"ratio {_p95(clicks) / GOALS['step_click_p95_s']:.2f})"
    )
    print(
        f"click on Pause -> status line says paused ({len(pauses)} clicks on a running session whose actions take "
        f"{ACTION_SECONDS:g} s): p50 {statistics.median(pauses):.2f} s, p95 {_p95(pauses):.2f} s, max {max(pauses):.2f} s "
        f"(goal p95 <= {GOALS['pause_click_p95_s']:g} s, ratio {_p95(pauses) / GOALS['pause_click_p95_s']:.2f}); "
        f"the pause recorded in the log: p50 {statistics.median(pauses_recorded):.2f} s, "
        f"p95 {_p95(pauses_recorded):.2f} s after the click"
    )
    print(
        f"open a {nodes_1k:,}-node session's page -> tree drawn ({len(loads)} loads): "
        f"p50 {statistics.median(loads):.2f} s, max {max(loads):.2f} s (goal <= {GOALS['load_to_tree_s']:g} s, "
        f"ratio {max(loads) / GOALS['load_to_tree_s']:.2f})"
    )
    print(
        f"console CPU while a paused session's page is open: {idle:.3f} s per s (goal <= {GOALS['idle_cpu_s_per_s']:g}); "
        f"console memory {rss_before:.0f} MiB before 20 Step clicks, {rss_after:.0f} MiB after"
    )
    print(
        f"a page watching a running demo session receives {watched:.0f} KiB/s; the largest: "
        + ", ".join(f"{kind} {rate:.0f} KiB/s" for kind, rate in largest)
    )
    for (nodes, draw_all), seconds in draws.items():
        goal = GOALS["draw_1k_s"] if nodes < 2000 else GOALS["draw_5k_s"]
        how = "every node drawn" if draw_all else "default view (folded)"
        print(f"first draw, {nodes:,}-node tree, {how}: {seconds:.2f} s from navigation (goal <= {goal:g} s)")
    print(
        f"server time of one refresh of the session page, {nodes_1k:,}-node session: {refresh_ms:.0f} ms "
        f"(goal <= {GOALS['refresh_ms']} ms); the chart alone with every node drawn: {refresh_all_ms:.1f} ms"
    )


if __name__ == "__main__":
    main()
