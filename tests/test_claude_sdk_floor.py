"""The Claude backend on the lowest anthropic SDK requirements.txt allows, against the fake Messages API.

Why 0.77.0: the code sends `output_config` (the effort), a keyword `Messages.create` takes from 0.77.0
on; 0.76.0 refuses it with a TypeError on every call (tried here). `custom_auth`, which the client is
asked for before each call, is a property of the SDK's base client long before that (None there; the
client's own override came in 0.98.0). The floor is read from requirements.txt and installed from
PyPI into a temporary directory that shadows the virtualenv's SDK in a child interpreter; that child
runs whole sessions through the fake.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys
import anthropic
from conftest import drive, new_state
from planner.browser.dry import DryEnvironment
from planner.config import EngineConfig
from planner.engine import Engine
from planner.errors import ModelUnavailable
from planner.events import ModelCalled
from planner.models.claude import ClaudeModel, ModelSettingRefused
from planner.questions import View

url, task = sys.argv[1], sys.argv[2]
result = {"version": anthropic.__version__, "sdk": anthropic.__file__, "runs": {}}
for model_id in ("claude-sonnet-5-5", "claude-haiku-4-5", "claude-future-9"):
    state, log = new_state(task, EngineConfig(repair=False))
    drive(Engine(state, ClaudeModel(model_id, base_url=url, max_retries=0), DryEnvironment()), log)
    calls = [e.payload for e in log if isinstance(e.payload, ModelCalled)]
    result["runs"][model_id] = [state.status.value, state.final_answer, len(calls), bool(calls and calls[0].thinking)]
view = View(task=task, tree=state.tree, node=state.tree["0"], notes=(), progress="", observation="", url="")
forcing = ClaudeModel(base_url=url, max_retries=0)
forcing.forced = True  # a setting Sonnet 5.5 refuses: the fake answers 400 naming tool_choice
try:
    forcing.expand(view)
except ModelSettingRefused as error:
    result["refused"] = str(error)
import os
os.environ.pop("ANTHROPIC_API_KEY")
try:
    ClaudeModel(base_url=url, max_retries=0).expand(view)
except ModelUnavailable as error:
    result["no_key"] = str(error)
print(json.dumps(result))
"""


def _floor() -> str:
    line = next(line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("anthropic"))
    found = re.match(r"anthropic>=([\d.]+),<3\b", line)
    assert found, f"requirements.txt pins anthropic as >=X,<3, not {line!r}"
    return found[1]


@pytest.mark.slow
def test_the_lowest_allowed_sdk_runs_whole_sessions_against_the_fake(tmp_path: Path) -> None:
    floor = _floor()
    target = tmp_path / "sdk"
    # The SDK's own dependencies that the virtualenv (on SDK 2.x, built on httpx2) does not have.
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
    done = subprocess.run(
        [*install, f"anthropic=={floor}", "httpx<1", "httpcore<2", "h11<1", "distro<2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"pip could not install anthropic=={floor} from PyPI: {done.stderr[-2000:]}"
    from test_claude import SCRIPT, TASK

    with FakeAnthropic(dict(SCRIPT)) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-floor"}
        env["PYTHONPATH"] = os.pathsep.join([str(target), str(ROOT), str(ROOT / "tests")])
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, fake.url, TASK],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["version"] == floor and result["sdk"].startswith(str(target)), result
    for model_id, (status, answer, calls, thought) in result["runs"].items():
        assert status == "succeeded" and answer == "Crema Compact Espresso, $129.00" and calls >= 5, model_id
        assert thought == (model_id != "claude-haiku-4-5"), model_id
    assert 'tool_choice: type "tool" and "any" are not supported' in result["refused"]
    assert "set ANTHROPIC_API_KEY" in result["no_key"]
