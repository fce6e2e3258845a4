"""Candidate items: reported by observations, kept by name for the whole run, shown and exported."""

from __future__ import annotations

from conftest import drive, load, new_state

from planner.browser.dry import DryEnvironment
from planner.engine import Engine
from planner.models.prompts import render_user
from planner.models.scripted import ScriptedModel
from planner.questions import Candidate, Observation, Reply, View
from planner.state import RunStatus, replay
from sessions.client.export import markdown_report

BROWNIE_TASK = "Find a vegan chocolate brownie recipe with 4+ rating"
REPORTS = {
    "type [12] [vegan chocolate brownie] [1]": [
        Candidate(name="Fudgy vegan brownies", fields={"rating": "4.8"}),
        Candidate(name="Cakey brownies", verdict="rejected", fields={"vegan": "no"}, unmet=["vegan"]),
    ],
    "click [31]": [Candidate(name="Fudgy vegan brownies", verdict="qualifies", fields={"vegan": "yes"})],
}


class Reporting(ScriptedModel):
    """The brownie script, with observations that report candidate recipes, and a record of what later calls saw."""

    def __init__(self) -> None:
        super().__init__(load("brownie.json"))
        self.views: list[View] = []

    def observe(self, view: View, action: str) -> Reply[Observation]:
        self.views.append(view)
        reply = super().observe(view, action)
        return Reply(reply.output.model_copy(update={"candidates": REPORTS.get(action, [])}))


def test_candidates_are_merged_by_name_and_rebuilt_from_the_log() -> None:
    model = Reporting()
    state, log = new_state(BROWNIE_TASK)
    drive(Engine(state, model, DryEnvironment()), log)
    assert state.status is RunStatus.SUCCEEDED
    fudgy = state.candidates["Fudgy vegan brownies"]
    assert fudgy.verdict == "qualifies" and fudgy.fields == {"rating": "4.8", "vegan": "yes"}
    assert state.candidates["Cakey brownies"].unmet == ["vegan"]
    assert replay(log).candidates == state.candidates
    later = model.views[-1]
    assert [c.name for c in later.candidates] == ["Fudgy vegan brownies", "Cakey brownies"]
    prompt = render_user("observe", later, detail="click [31]")
    assert "## Candidate items so far\n- [uncertain] Fudgy vegan brownies — rating: 4.8" in prompt
    assert "- [rejected] Cakey brownies — vegan: no — fails: vegan" in prompt
    report = markdown_report("s", state, log)
    assert "| qualifies | Fudgy vegan brownies | – | rating: 4.8; vegan: yes |" in report
