"""The ablation table: four conditions over the suite, in the layout of the paper's Table 7."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from demo.ablations import CONDITIONS
from demo.cli import main
from planner.metrics import SUITE_ROWS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_over_ear_task_under_four_conditions_gives_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """over-ear-under-100 meets the broken price filter: its OR falls back in Full and OR only.

    Run as `python -m demo suite --ablations` would run it (in this process, for speed)."""
    out = tmp_path / "ablations.json"
    db = str(tmp_path / "sessions.db")

    # On a thread of its own: this worker may already run a Playwright on its main thread (a session
    # fixture of an earlier test file), and Playwright's sync API allows one per thread.
    codes: list[int] = []
    argv = ["suite", "--ablations", "--only", "over-ear-under-100", "--out", str(out), "--db", db]
    runner = threading.Thread(target=lambda: codes.append(main(argv)), name="ablations")
    runner.start()
    runner.join(600)
    assert codes, "the ablations did not finish within 600 s"
    code = codes[0]

    assert code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["Full", "OR", "only", "Repair", "only", "Neither"]
    labels = [row.label for row in SUITE_ROWS]
    assert [line for line in lines[1:-1] if line.split()] and all(
        any(line.startswith(label) for line in lines) for label in labels
    )
    data = json.loads(out.read_text())
    assert list(data) == list(CONDITIONS)
    assert data["Full"]["suite"]["success_rate"] == 1.0
    assert data["Full"]["sessions"][0]["or_nodes"] >= 1
    assert data["Repair only"]["sessions"][0]["or_nodes"] == 0
    assert data["OR only"]["suite"]["recovery_rate"] == 0.0
    assert out.with_suffix(".md").read_text().startswith("|  | Full | OR only | Repair only | Neither |")
    assert json.loads(lines[-1])["json"] == str(out)
