"""The headless CLI contract: run, command (from another process), resume, fork, list, export."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
from cli_helpers import ROOT, cli, command, finish, last_json, session_status, spawn
from conftest import BROWNIE_TASK, SCRIPTS, Billed, load
from pydantic import Field
from waiting import wait_until

from planner.browser.dry import DryEnvironment
from planner.commands import COMMAND_MODELS, Prune, Spelling
from planner.models.scripted import ScriptedModel
from sessions.backends import Backend
from sessions.cli import build_parser, main

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


def test_run_prints_a_json_summary_last(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE)
    summary = last_json(result)
    assert result.returncode == 0
    assert summary["status"] == "succeeded"
    assert summary["final_answer"] == "Fudgy vegan brownies (4.8 stars)"
    assert summary["steps"] == 12  # constraint extraction, then the paper's 11 steps
    listed = last_json(cli("list", "--db", db))["sessions"]
    assert [s["session_id"] for s in listed] == [summary["session_id"]]


def test_failed_run_exits_1_and_ablation_flags_apply(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = cli(
        "run", "--db", db, "--task", BROWNIE_TASK, "--model", f"script:{SCRIPTS / 'brownie_fail.json'}", "--no-repair"
    )
    assert result.returncode == 1
    assert last_json(result)["status"] == "failed"
    trace = last_json(cli("export", last_json(result)["session_id"], "--db", db))
    assert trace["session"]["config"]["repair"] is False
    assert trace["metrics"]["deleted"] == 1


def test_export_is_the_documented_trace_and_time_travels(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    trace = last_json(cli("export", session_id, "--db", db))
    assert set(trace) >= {"session", "nodes", "events", "metrics"}
    assert trace["session"]["status"] == "succeeded"
    assert {"id", "parent", "type", "status", "description", "action", "origin"} <= set(trace["nodes"][0])
    assert {"seq", "kind", "version", "node_id", "detail"} == set(trace["events"][0])
    early = last_json(cli("export", session_id, "--db", db, "--at", "8"))
    assert early["session"]["status"] == "running"
    assert len(early["events"]) == 8
    assert [n["id"] for n in early["nodes"]] == ["0", "0.1", "0.2", "0.3"]


def _two_step_script(tmp_path: Path) -> Path:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            {
                "nodes": {
                    "do it": {"type": "AND", "children": ["first", "second"]},
                    "first": {"type": "ACTION", "action": "click [1]"},
                    "second": {"type": "ACTION", "action": "click [2]"},
                    "injected": {"type": "ACTION", "action": "note [operator was here]"},
                }
            }
        )
    )
    return script


def test_commands_from_another_process_steer_a_paused_run(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    script = _two_step_script(tmp_path)
    runner = spawn(
        "run",
        "--db",
        db,
        "--task",
        "do it",
        "--model",
        f"script:{script}",
        "--breakpoint",
        "after_expansion",
        "--id",
        "abc",
    )
    try:
        wait_until(
            lambda: session_status(db, "abc") == "paused", "the run to pause at its first breakpoint", timeout=120
        )
        rejected = cli(
            "command", "abc", "--db", db, "--wait", "--timeout", "120", "prune", "--node", "0", "--reason", "x"
        )
        assert rejected.returncode == 1, rejected.stdout
        assert last_json(rejected)["reason"] == "the root cannot be pruned; stop the session instead"
        assert last_json(rejected)["seq"] > 0, "--wait says at which event the runner handled it"
        applied = command(db, "abc", "inject", "--parent", "0", "--goal", "injected", "--position", "1")
        assert applied["result"] == "applied", applied
        after_the_verb = cli(
            "command",
            "abc",
            "prune",
            "--node",
            "0.2",
            "--reason",
            "not needed",
            "--db",
            db,
            "--wait",
            "--timeout",
            "120",
        )
        assert last_json(after_the_verb)["result"] == "applied", (
            f"--db and --wait after the verb: {after_the_verb.stdout}"
        )
        cleared = command(db, "abc", "breakpoints")
        assert cleared["result"] == "applied", f"breakpoints without kinds clears them: {cleared}"
        resumed = command(db, "abc", "resume")
        assert resumed["result"] == "applied", resumed
        out, err = finish(runner, "the steered run to finish")
    finally:
        runner.kill()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["status"] == "succeeded"
    assert summary["final_answer"] == "operator was here"
    nodes = {n["id"]: n for n in last_json(cli("export", "abc", "--db", db))["nodes"]}
    assert nodes["0.3"]["origin"] == "operator" and nodes["0.3"]["status"] == "SUCCESS"
    assert nodes["0.2"]["status"] == "PRUNED"
    notices = [line for line in err.splitlines() if line.startswith("session abc paused")]
    assert len(notices) == 1, f"one notice per pause, and this run paused once: {err}"
    assert notices[0].endswith(f"); continue with: python -m sessions command abc resume --db {shlex.quote(db)}")


def test_command_wait_prints_the_engines_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pruning an action that already ran is applied with a warning; `--wait` prints it, as the console shows it."""
    import threading

    from sessions.client.creation import create_session
    from sessions.store.sql import open_store
    from sessions.worker.runner import Runner

    db = str(tmp_path / "s.db")
    store = open_store(db)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    backend = Backend(ScriptedModel(load("brownie.json")), DryEnvironment())
    first = Runner(store, session_id, backend=backend)
    first.run(should_stop=lambda: "0.1" in first.state.tree and first.state.tree["0.1"].status.value == "SUCCESS")
    done = threading.Event()
    paused = Runner(store, session_id, backend=Backend(ScriptedModel(load("brownie.json")), DryEnvironment()))
    runner = threading.Thread(target=paused.run, kwargs={"should_stop": done.is_set}, daemon=True)
    runner.start()
    try:
        code = main(["command", session_id, "--db", db, "--wait", "prune", "--node", "0.1", "--reason", "wrong"])
    finally:
        done.set()
        runner.join(30)
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (code, printed["result"]) == (0, "applied"), printed
    assert printed["warning"].startswith("already ran in the browser: 0.1 ("), printed
    assert printed["reason"] is None and printed["seq"] > 0, printed


def test_pause_then_resume_command_continues_in_a_new_process(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--id", "p1")
    try:
        wait_until(lambda: session_status(db, "p1") == "paused", "the session created paused to be listed", timeout=120)
        runner.terminate()  # Ctrl-C / SIGTERM leaves it paused and resumable
        out, _ = finish(runner, "the runner to leave after SIGTERM")
    finally:
        runner.kill()
    assert json.loads(out.strip().splitlines()[-1])["status"] == "paused"
    resumed = cli("resume", "p1", "--db", db)
    assert last_json(resumed)["status"] == "succeeded"


def test_fork_copies_history_and_runs_independently(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    fork = last_json(cli("fork", session_id, "--at", "12", "--db", db))
    assert fork["status"] == "paused"
    cli("command", fork["session_id"], "--db", db, "prune", "--node", "0.3", "--reason", "skip the note")
    resumed = last_json(cli("resume", fork["session_id"], "--db", db))
    assert resumed["status"] == "succeeded"
    forked = last_json(cli("export", fork["session_id"], "--db", db))
    original = last_json(cli("export", session_id, "--db", db))
    assert forked["session"]["forked_from"] == [session_id, 12]
    assert {n["id"]: n["status"] for n in forked["nodes"]}["0.3"] == "PRUNED"
    assert {n["id"]: n["status"] for n in original["nodes"]}["0.3"] == "SUCCESS"


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    missing = cli("run", "--db", db, "--task", "x", "--model", "script:/no/such.json", check=False)
    assert missing.returncode == 2 and "cannot use script file /no/such.json: no such file" in missing.stderr
    unknown = cli("command", "nope", "--db", db, "pause", check=False)
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr
    empty = cli("run", "--db", db, "--task", "  ", "--model", BROWNIE, check=False)
    assert empty.returncode == 2 and "the task is empty" in empty.stderr
    budget = cli("run", "--db", db, "--task", "x", "--model", BROWNIE, "--max-steps", "0", check=False)
    assert budget.returncode == 2 and "--max-steps: give a whole number from 1 to 100000, not '0'" in budget.stderr
    session_id = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE))["session_id"]
    blank = cli("command", session_id, "--db", db, "inject", "--parent", "0", "--goal", " ", check=False)
    assert blank.returncode == 2 and "cannot be blank" in blank.stderr
    fork = cli("fork", session_id, "--at", "999", "--db", db, check=False)
    assert fork.returncode == 2 and "999" in fork.stderr
    for result in (missing, unknown, empty, budget, blank, fork):
        assert len(result.stderr.splitlines()) == 1, result.stderr


def test_a_blank_description_is_refused_and_the_node_keeps_its_own(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    created = cli(
        "run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--exit-on-pause", check=False
    )
    assert created.returncode == 3, created.stderr
    fork = last_json(created)["session_id"]
    for verb, option in (("edit", "--description"), ("prune", "--reason")):
        refused = cli("command", fork, verb, "--node", "0", option, "   ", "--db", db, check=False)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr == f"error: invalid {verb} command: {option[2:]}: cannot be blank; write some text\n"
    trace = last_json(cli("export", fork, "--db", db))
    assert trace["nodes"][0]["description"] == BROWNIE_TASK, "a refused edit must not touch the node"
    assert not [e for e in trace["events"] if e["kind"].startswith("command")], "nothing was queued or recorded"


def test_constraints_and_lookahead_are_set_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn(
        "run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--paused", "--lookahead", "0", "--id", "c1"
    )
    try:
        wait_until(lambda: session_status(db, "c1") == "paused", "the session created paused to be listed", timeout=120)
        set_ = command(db, "c1", "constraints", "vegan", "rated 4 or more")
        assert set_["result"] == "applied", set_
        resumed = command(db, "c1", "resume")
        assert resumed["result"] == "applied", resumed
        out, _ = finish(runner, "the resumed run to finish")
    finally:
        runner.kill()
    assert json.loads(out.strip().splitlines()[-1])["status"] == "succeeded"
    trace = last_json(cli("export", "c1", "--db", db))
    assert trace["session"]["config"]["lookahead"] == 0
    calls = [e for e in trace["events"] if e["kind"] == "model_call"]
    assert not any(c["detail"]["question"] == "constraints" for c in calls), "the operator's constraints stand"
    expanded = {c["node_id"] for c in calls if c["detail"]["question"] == "expand"}
    assert {"0.1", "0.3"} <= expanded, "without lookahead every action node has its own expansion"

    no_constraints = last_json(cli("run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--no-constraints"))
    steps = [
        e["detail"]["work"]
        for e in last_json(cli("export", no_constraints["session_id"], "--db", db))["events"]
        if e["kind"] == "step"
    ]
    assert "constraints" not in steps
    bad = cli("run", "--db", db, "--task", "x", "--model", BROWNIE, "--lookahead", "-1", check=False)
    assert bad.returncode == 2 and "lookahead" in bad.stderr


def test_exit_on_pause_leaves_at_a_breakpoint_and_prints_the_line_that_continues(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    script = f"script:{_two_step_script(tmp_path)}"
    paused = cli(
        "run",
        "--db",
        db,
        "--task",
        "do it",
        "--model",
        script,
        "--breakpoint",
        "before_action",
        "--exit-on-pause",
        "--id",
        "bp1",
    )
    assert paused.returncode == 3, paused.stderr
    assert last_json(paused)["status"] == "paused", "the summary JSON is still the last stdout line"
    continue_line = f"python -m sessions resume bp1 --exit-on-pause --db {shlex.quote(db)}"
    notice = paused.stderr.splitlines()[-1]
    assert notice.startswith("session bp1 paused (") and "0.1" in notice, notice
    assert notice.endswith(f"); continue with: {continue_line}"), notice
    again = cli(*shlex.split(continue_line)[3:])
    assert again.returncode == 3 and "0.2" in again.stderr.splitlines()[-1], f"the next breakpoint: {again.stderr}"
    cleared = cli("command", "bp1", "breakpoints", "--db", db)
    assert cleared.returncode == 0, cleared.stderr
    done = cli("resume", "bp1", "--exit-on-pause", "--db", db)
    assert done.returncode == 0 and last_json(done)["status"] == "succeeded", done.stderr


def _follow(line: str) -> int:
    """Run a printed `python -m sessions ... && python -m sessions ...` line in this process."""
    code = 0
    for part in line.split(" && "):
        words = shlex.split(part)
        assert words[:3] == ["python", "-m", "sessions"], part
        code = main(words[3:])
    return code


def _notice(stderr: str) -> str:
    """The continue line of the last pause notice on stderr."""
    notices = [line for line in stderr.splitlines() if " paused (" in line or " waits for approval " in line]
    assert notices, f"no pause notice on stderr: {stderr!r}"
    return notices[-1]


def test_a_spent_cost_cap_says_how_to_raise_it_and_the_printed_lines_finish_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sessions.worker.runner.build_backend", lambda *_: Backend(Billed(), DryEnvironment()))
    db = str(tmp_path / "s.db")
    code = main(
        [
            "run",
            "--db",
            db,
            "--task",
            BROWNIE_TASK,
            "--model",
            BROWNIE,
            "--max-cost",
            "0.025",
            "--exit-on-pause",
            "--id",
            "cc1",
        ]
    )
    captured = capsys.readouterr()
    assert code == 3 and json.loads(captured.out.splitlines()[-1])["status"] == "paused"
    line = _notice(captured.err)
    assert line.startswith("session cc1 paused (") and "$0.025" in line, line
    assert line.endswith(
        f"; continue with: python -m sessions command cc1 budget --max-cost 0.06 --db {shlex.quote(db)} && "
        f"python -m sessions resume cc1 --exit-on-pause --db {shlex.quote(db)}"
    ), line
    for _ in range(6):  # each notice offers twice the spend, so a few rounds reach the end
        code = _follow(line.split("continue with: ")[1])
        captured = capsys.readouterr()
        if code != 3:
            break
        line = _notice(captured.err)
    assert code == 0 and json.loads(captured.out.splitlines()[-1])["status"] == "succeeded", captured.err


def test_an_action_waiting_for_approval_says_how_to_approve_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def guard(action: str, target: object) -> str | None:
        return "clicks need approval" if action.startswith("click") else None

    monkeypatch.setattr(
        "sessions.worker.runner.build_backend",
        lambda *_: Backend(ScriptedModel(load("brownie.json")), DryEnvironment(), guard),
    )
    db = str(tmp_path / "s.db")
    code = main(["run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--exit-on-pause", "--id", "ap1"])
    captured = capsys.readouterr()
    assert code == 3 and json.loads(captured.out.splitlines()[-1])["status"] == "awaiting_approval"
    line = _notice(captured.err)
    quoted = shlex.quote(db)
    assert line == (
        "session ap1 waits for approval of 'click [31]' at 0.2.1 (clicks need approval); approve it with: "
        f"python -m sessions command ap1 approve --db {quoted} && python -m sessions resume ap1 --exit-on-pause --db {quoted}"
        " (or use reject, or edit-action)"
    )
    assert _follow(line.split("approve it with: ")[1].removesuffix(" (or use reject, or edit-action)")) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["status"] == "succeeded"


LIST_NEEDS_NONE_OF = (
    "demo",
    "planner.browser",
    "planner.commands",
    "planner.engine",
    "planner.models",
    "sessions.backends",
    "sessions.worker.runner",
)


def test_list_loads_no_engine_model_registry_or_command_models(tmp_path: Path) -> None:
    """`list` is the quick look at a store: the parser adds only its own arguments, and nothing it
    does not use is imported (start-up time is most of what it costs; `python -m bench.durable --cli`)."""
    db = str(tmp_path / "s.db")
    code = (
        "import sys\nfrom sessions.cli import main\ncode = main(['list', '--db', sys.argv[1]])\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\nsys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, db], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and json.loads(done.stdout.splitlines()[-1]) == {"sessions": []}, done.stderr
    loaded = done.stderr.split()
    extra = sorted({p for p in LIST_NEEDS_NONE_OF for m in loaded if m == p or m.startswith(p + ".")})
    assert not extra, f"`list` imported {extra}; import them in the subcommands that use them"


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return dict(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


class _PruneWithMore(Prune):
    """Prune as it would be with two more fields: the CLI verb must offer them with no change of its own."""

    depth: int | None = Field(default=None, ge=1, le=5, description="how many levels to prune")
    memo: Annotated[str | None, Spelling(option="--note", noun="memo")] = Field(default=None, max_length=30)


def test_a_field_added_to_a_command_model_becomes_an_option_of_its_verb(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(COMMAND_MODELS, "prune", _PruneWithMore)
    verbs = _choices(_choices(build_parser())["command"])
    assert "how many levels to prune" in verbs["prune"].format_help()
    prune = ["command", "s1", "prune", "--node", "0.1", "--reason", "r"]
    for extra, refusal in (
        (["--depth", "9"], "argument --depth: give a whole number from 1 to 5, not '9'"),
        (["--note", "n" * 31], "argument --note: the memo is 31 characters long; the limit is 30"),
    ):
        with pytest.raises(SystemExit) as leaving:
            main([*prune, *extra])
        assert leaving.value.code == 2
        assert capsys.readouterr().err.startswith(
            f"error: {refusal}; see `python -m sessions command session_id prune --help`"
        )
    args = build_parser().parse_args([*prune, "--depth", "2", "--note", "kept"])
    assert (args.depth, args.memo) == (2, "kept"), "each option lands under its field's name"


def test_a_failed_run_is_diagnosed_and_reported_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    failed = last_json(
        cli(
            "run",
            "--db",
            db,
            "--task",
            BROWNIE_TASK,
            "--model",
            f"script:{SCRIPTS / 'brownie_fail.json'}",
            "--no-repair",
        )
    )["session_id"]
    diagnosed = cli("diagnose", failed, "--db", db)
    assert diagnosed.returncode == 0, diagnosed.stderr
    diagnosis = last_json(diagnosed)["diagnosis"]
    assert diagnosis["failure_category"] and diagnosis["root_cause"] and 1 <= diagnosis["confidence"] <= 5
    assert last_json(cli("export", failed, "--db", db))["session"]["status"] == "failed"
    report = tmp_path / "report.html"
    written = last_json(cli("report", failed, "--db", db, "--out", str(report)))
    assert written["out"] == str(report) and report.stat().st_size == written["bytes"] > 0
    assert "</html>" in report.read_text(encoding="utf-8")


def test_effort_is_for_claude_models_and_is_refused_in_one_line_otherwise(tmp_path: Path) -> None:
    result = cli("run", "--db", str(tmp_path / "s.db"), "--task", "t", "--effort", "high", check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --effort applies to Claude models only, not 'demo'; drop --effort"
    ]


def test_a_template_export_to_a_directory_is_refused_with_a_templates_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["template", "export", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path)])
    assert exited.value.code == 2
    assert f"{tmp_path} is a directory; give a file path such as var/templates.json" in capsys.readouterr().err
