"""Reusable plans: a subtree saved as a named, versioned template with parameters, kept in the
session store (every backend), exported and imported as JSON, and injected through the ordinary
command queue as one edit whose nodes record the template they came from (and one undo takes back).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_helpers import cli, command, finish, last_json, session_status, spawn
from conftest import BROWNIE_TASK, SCRIPTS, new_state, snapshot
from postgres import database_for, migrated_to
from waiting import wait_until

from planner.commands import Inject, Undo, apply_command, parse_command, undo_refusal
from planner.events import Event, Kind, NodesAdded
from planner.inputs import InputError
from planner.state import SessionState, replay
from planner.templates import Template, parse_ref, parse_values
from planner.tree import NodeType, Status, TemplateRef
from sessions.cli import main
from sessions.client.templates import export_text, import_text, listing, lookup, with_template
from sessions.store.sql import _MIGRATIONS, SqlStore

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"
SHOP_TASK = "Cheapest Northwind keyboard under $80"


def _shop_state() -> tuple[SessionState, list[Event]]:
    """A plan the operator fixed: an AND of a search, an OR of two ways to sort, and a note."""
    state, log = new_state(SHOP_TASK)
    log += apply_command(
        state,
        Inject(
            parent="0",
            goals=["search for Northwind keyboards", "find the cheapest under $80", "note the name and price"],
            node_type="AND",
        ),
    )
    log += apply_command(
        state,
        Inject(
            parent="0.2", goals=["sort by price", "read every price on the page"], node_type="OR", scores=[0.9, 0.4]
        ),
    )
    return state, log


def _template(name: str = "cheapest") -> Template:
    state, _ = _shop_state()
    return Template.from_subtree(state.tree, "0", name, {"brand": "Northwind", "max_price": "$80"}, children_only=True)


# -- the model ------------------------------------------------------------------------------------


def test_saving_a_subtree_makes_only_the_named_values_placeholders() -> None:
    template = _template()
    assert template.params == ["brand", "max_price"]
    assert [goal.description for goal in template.goals] == [
        "search for {brand} keyboards",
        "find the cheapest under {max_price}",
        "note the name and price",
    ]
    sort = template.goals[1]
    assert sort.type == "OR" and [(c.description, c.score) for c in sort.children] == [
        ("sort by price", 0.9),
        ("read every price on the page", 0.4),
    ]
    assert template.size == 5 and template.ref == TemplateRef("cheapest", 1)


def test_the_whole_node_is_saved_and_what_failed_or_was_pruned_is_left_out() -> None:
    state, _ = _shop_state()
    apply_command(state, parse_command({"kind": "prune", "node": "0.3", "reason": "not needed"}))
    template = Template.from_subtree(state.tree, "0", "whole")
    assert len(template.goals) == 1 and template.goals[0].description == SHOP_TASK
    assert [goal.description for goal in template.goals[0].children] == [
        "search for Northwind keyboards",
        "find the cheapest under $80",
    ]


def test_braces_in_a_node_survive_a_save_and_a_fill() -> None:
    state, _ = new_state("t")
    apply_command(state, Inject(parent="0", goals=["type {json} into the Acme box"], node_type="AND"))
    template = Template.from_subtree(state.tree, "0", "braces", {"brand": "Acme"}, children_only=True)
    assert template.goals[0].description == "type {{json}} into the {brand} box"
    assert template.fill({"brand": "Zenith"})[0].description == "type {json} into the Zenith box"


@pytest.mark.parametrize(
    ("values", "sentence"),
    [
        ({"brand": "Keystone"}, "template cheapest needs a value for max_price: give it as max_price=VALUE"),
        (
            {"brand": "Keystone", "max_price": "$60", "colour": "red"},
            "template cheapest has no parameter colour (its parameters: brand, max_price)",
        ),
        ({"brand": " ", "max_price": "$60"}, "template cheapest needs a value for brand: give it as brand=VALUE"),
    ],
)
def test_unknown_or_missing_params_are_one_sentence(values: dict[str, str], sentence: str) -> None:
    with pytest.raises(InputError) as refused:
        _template().fill(values)
    assert str(refused.value) == sentence


@pytest.mark.parametrize(
    ("values", "sentence"),
    [
        ({"brand": "Zenith"}, "'Zenith' (brand) occurs nowhere in 0's subtree; give a value its text contains"),
        ({"brand": ""}, "parameter brand has no value; write it as brand=TEXT"),
        ({"1x": "Northwind"}, "'1x' is not a parameter name: use a letter or '_' followed by letters, digits or '_'"),
        ({"a": "Northwind", "b": "Northwind"}, "parameters a and b have the same value; give each its own"),
    ],
)
def test_a_save_that_cannot_work_is_one_sentence(values: dict[str, str], sentence: str) -> None:
    state, _ = _shop_state()
    with pytest.raises(InputError) as refused:
        Template.from_subtree(state.tree, "0", "x", values)
    assert str(refused.value) == sentence


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"name": "a", "params": ["b"], "goals": [{"description": "x"}]}, "parameter b is used by no goal"),
        ({"name": "a", "goals": [{"description": "buy {b}"}]}, "a goal uses {b}, which is not one of"),
        ({"name": "a", "goals": [{"description": "x", "children": [{"description": "y"}]}]}, "must be AND or OR"),
        ({"name": "a", "goals": [{"description": "x", "type": "AND"}]}, "is AND but has no sub-goals"),
        ({"name": "a b", "goals": [{"description": "x"}]}, "is not a template name"),
        ({"name": "a", "goals": []}, "cannot be empty"),
    ],
)
def test_a_template_that_does_not_hold_together_is_refused(data: dict[str, object], problem: str) -> None:
    from pydantic import ValidationError

    from planner.inputs import describe_validation_error

    with pytest.raises(ValidationError) as refused:
        Template.model_validate(data)
    assert problem in describe_validation_error(refused.value)


def test_references_and_values_are_read_with_one_sentence_for_a_slip() -> None:
    assert parse_ref("cheapest") == ("cheapest", None) and parse_ref("cheapest@3") == ("cheapest", 3)
    assert parse_values(["brand=Northwind", "", "max_price = $80"]) == {"brand": "Northwind", "max_price": "$80"}
    for slip, sentence in [
        (lambda: parse_ref("cheapest@x"), "'cheapest@x' has no version after '@'; write cheapest or cheapest@2"),
        (lambda: parse_values(["brand"]), "'brand' is not name=value; write e.g. brand=Northwind"),
        (lambda: parse_values(["a=1", "a=2"]), "parameter a is given twice; give it once"),
    ]:
        with pytest.raises(InputError) as refused:
            slip()
        assert str(refused.value) == sentence


# -- injecting: the command, the fold, undo ----------------------------------------------------------


def _inject(state: SessionState, log: list[Event], **fields: object) -> Event:
    events = apply_command(state, parse_command({"kind": "inject", **fields}))
    log += events
    return events[-1]


def test_a_template_is_injected_whole_with_its_params_and_provenance() -> None:
    state, log = new_state("Cheapest Keystone keyboard under $60")
    template = _template().model_copy(update={"version": 2})
    applied = _inject(
        state,
        log,
        parent="0",
        node_type="AND",
        template=template.model_dump(mode="json"),
        params={"brand": "Keystone", "max_price": "$60"},
    )
    assert applied.kind is Kind.COMMAND_APPLIED, getattr(applied.payload, "reason", None)
    added = next(e for e in log if e.kind is Kind.NODES_ADDED)
    payload = added.payload
    assert isinstance(payload, NodesAdded) and added.version == 2
    assert payload.template == TemplateRef("cheapest", 2) and payload.types == {"0.2": NodeType.OR}
    tree = state.tree
    assert [(n.id, n.type, n.description, n.score) for n in tree.walk()][1:] == [
        ("0.1", NodeType.UNKNOWN, "search for Keystone keyboards", None),
        ("0.2", NodeType.OR, "find the cheapest under $60", None),
        ("0.2.1", NodeType.UNKNOWN, "sort by price", 0.9),
        ("0.2.2", NodeType.UNKNOWN, "read every price on the page", 0.4),
        ("0.3", NodeType.UNKNOWN, "note the name and price", None),
    ]
    assert {str(n.template) for n in list(tree.walk())[1:]} == {"cheapest v2"} and tree.root.template is None
    assert all(n.protected and n.status is Status.UNVISITED for n in list(tree.walk())[1:])
    assert [c.id for c in applied.payload.changes if c.before is None] == ["0.1", "0.2", "0.2.1", "0.2.2", "0.3"]  # type: ignore[attr-defined]
    assert snapshot(replay(log)) == snapshot(state), "the fold of the log gives the same tree"
    assert [n.template for n in replay(log).tree.walk()] == [n.template for n in tree.walk()]


def test_a_template_goes_before_a_node_at_its_position() -> None:
    state, log = _shop_state()
    _inject(
        state,
        log,
        parent="0",
        position=0,
        template=_template().model_dump(mode="json"),
        params={"brand": "Keystone", "max_price": "$60"},
    )
    assert state.tree.root.children[:4] == ["0.4", "0.5", "0.6", "0.1"]
    assert state.tree["0.5"].children == ["0.5.1", "0.5.2"]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"brand": "Keystone"}, "template cheapest needs a value for max_price: give it as max_price=VALUE"),
        (
            {"brand": "Keystone", "max_price": "$60", "size": "L"},
            "template cheapest has no parameter size (its parameters: brand, max_price)",
        ),
    ],
)
def test_an_inject_with_missing_or_unknown_params_is_rejected_with_one_sentence(
    params: dict[str, str], reason: str
) -> None:
    state, log = _shop_state()
    rejected = _inject(state, log, parent="0", template=_template().model_dump(mode="json"), params=params)
    assert rejected.kind is Kind.COMMAND_REJECTED and rejected.payload.reason == reason  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "sentence"),
    [
        ({"goals": ["a"], "template": "T"}, "give sub-goals or a template, not both"),
        (
            {"goals": ["a"], "params": {"a": "b"}},
            "template parameters fill a template's placeholders; give the template too",
        ),
        ({"template": "T", "scores": [0.5]}, "a template's sub-goals carry their own scores; leave the scores out"),
    ],
)
def test_goals_or_a_template_not_both(fields: dict[str, object], sentence: str) -> None:
    from pydantic import ValidationError

    from planner.commands import describe_command_error

    if fields.get("template") == "T":
        fields = {**fields, "template": _template().model_dump(mode="json")}
    with pytest.raises(ValidationError) as refused:
        parse_command({"kind": "inject", "parent": "0", **fields})
    assert describe_command_error(refused.value) == f"invalid inject command: {sentence}"


def test_one_undo_takes_the_whole_template_back() -> None:
    state, log = _shop_state()
    before = {n.id: (n.status, n.type, tuple(n.children)) for n in state.tree.walk()}
    _inject(
        state,
        log,
        parent="0.2",
        template=_template().model_dump(mode="json"),
        params={"brand": "Keystone", "max_price": "$60"},
    )
    added = [n.id for n in state.tree.walk() if n.template is not None]
    assert added == ["0.2.3", "0.2.4", "0.2.4.1", "0.2.4.2", "0.2.5"]
    assert undo_refusal(state) is None
    log += apply_command(state, Undo())
    assert log[-1].kind is Kind.COMMAND_APPLIED
    assert all(state.tree[node_id].status is Status.DELETED for node_id in added)
    assert {n.id: (n.status, n.type) for n in state.tree.walk() if n.id in before} == {
        node_id: face[:2] for node_id, face in before.items()
    }
    assert snapshot(replay(log)) == snapshot(state)


def test_a_version_one_nodes_added_event_is_upgraded_on_load() -> None:
    old = {"nodes": [{"id": "0.1", "description": "a"}], "origin": "operator", "position": None}
    event = Event.from_data(2, "nodes_added", "0", old, version=1)
    assert event.version == 2 and event.payload.template is None and event.payload.types == {}  # type: ignore[attr-defined]
    state, log = new_state("t")
    state = replay([*log, event])
    assert state.tree["0.1"].template is None and state.tree.root.children == ["0.1"]


# -- the store, on every backend ---------------------------------------------------------------------


def test_saving_a_name_again_makes_its_next_version(store: SqlStore) -> None:
    first = store.save_template(_template())
    second = store.save_template(_template().model_copy(update={"description": "v2", "version": 9}))
    store.save_template(_template("other"))
    assert (first.version, second.version) == (1, 2)
    assert store.template("cheapest") == second and store.template("cheapest", 1) == first
    assert store.template("cheapest", 3) is None and store.template("nothing") is None
    assert [(t.name, t.version) for t in store.templates()] == [("cheapest", 1), ("cheapest", 2), ("other", 1)]
    assert listing(store)[0] == {
        "name": "cheapest",
        "versions": [1, 2],
        "version": 2,
        "description": "v2",
        "params": ["brand", "max_price"],
        "nodes": 5,
    }
    assert lookup(store, "cheapest@1") == first
    with pytest.raises(InputError, match="^template cheapest has no version 7; its versions are 1, 2$"):
        lookup(store, "cheapest@7")
    assert store.delete_templates("cheapest", 1) == 1 and [t.version for t in store.templates("cheapest")] == [2]
    assert store.delete_templates("cheapest") == 1 and store.templates("cheapest") == []
    with pytest.raises(InputError, match="^there is no template cheapest; `python -m sessions template list`"):
        lookup(store, "cheapest")


def test_export_and_import_carry_every_version_and_skip_what_is_there(store: SqlStore, tmp_path: Path) -> None:
    store.save_template(_template())
    store.save_template(_template().model_copy(update={"description": "second"}))
    text = export_text(store)
    other = SqlStore(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        done = import_text(other, text)
        assert [(t.name, t.version) for t in done.saved] == [("cheapest", 1), ("cheapest", 2)] and not done.unchanged
        assert [t.body() for t in other.templates()] == [t.body() for t in store.templates()]
        again = import_text(other, text)
        assert not again.saved and len(again.unchanged) == 2, "an import adds nothing the store already holds"
    finally:
        other.close()


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("{", "it is not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)"),
        ('{"nodes": []}', "it is not a template file: an exported file is a JSON object with format 'andor-templates'"),
        (
            '{"format": "andor-templates", "templates": [{"name": "x", "goals": [{"description": "{a}"}]}]}',
            "it is not a usable template file: templates #1: a goal uses {a}, which is not one of the template's parameters",
        ),
        (
            '{"format": "andor-templates", "templates": []}',
            "it is not a usable template file: templates: cannot be empty",
        ),
    ],
)
def test_a_bad_file_is_one_sentence_and_saves_nothing(store: SqlStore, text: str, sentence: str) -> None:
    store.save_template(_template())
    with pytest.raises(InputError) as refused:
        import_text(store, text)
    assert str(refused.value) == sentence
    assert [(t.name, t.version) for t in store.templates()] == [("cheapest", 1)], "the store lost or gained nothing"


@pytest.fixture(params=["disk", "postgres"])
def version_four_database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database as the previous version left it: migrations 1 to 4, no templates table."""
    url = database_for(request.param, request, tmp_path)
    migrated_to(url, 4).dispose()
    return url


def test_a_version_four_database_gets_the_templates_table(version_four_database: str) -> None:
    store = SqlStore(version_four_database)
    try:
        with store._engine.connect() as conn:
            versions = list(conn.execute(sa.text("select version from schema_migrations order by version")).scalars())
        assert versions == list(range(1, len(_MIGRATIONS) + 1))
        assert store.templates() == [] and store.save_template(_template()).version == 1
    finally:
        store.close()


def test_a_stored_template_that_cannot_be_read_is_one_sentence(tmp_path: Path) -> None:
    from sessions.store import StoreError

    store = SqlStore(f"sqlite:///{tmp_path / 's.db'}")
    try:
        store.save_template(_template())
        with store._engine.begin() as conn:
            conn.execute(sa.text("update templates set data = '{\"name\": 1}'"))
        with pytest.raises(StoreError, match=r"^stored template cheapest v1 cannot be read \(.*\); delete it: "):
            store.templates()
    finally:
        store.close()


# -- the command line ----------------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object] | str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, (json.loads(out.strip().splitlines()[-1]) if code == 0 else err.strip())


def test_the_template_subcommand_saves_lists_exports_imports_and_deletes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    _, log = _shop_state()
    store = SqlStore(f"sqlite:///{db}")
    store.create_session("shop", SHOP_TASK, "script", log, status="paused")
    store.close()
    saved = _run(
        capsys,
        "template",
        "save",
        "cheapest",
        "--db",
        db,
        "--session",
        "shop",
        "--node",
        "0",
        "--children",
        "--param",
        "brand=Northwind",
        "--param",
        "max_price=$80",
        "--description",
        "cheapest of a brand",
    )
    assert saved == (0, {"name": "cheapest", "version": 1, "params": ["brand", "max_price"], "nodes": 5})
    assert _run(capsys, "template", "save", "cheapest", "--db", db, "--session", "shop", "--node", "0.2")[1] == {
        "name": "cheapest",
        "version": 2,
        "params": [],
        "nodes": 3,
    }
    listed = _run(capsys, "template", "list", "--db", db)[1]
    assert [(t["name"], t["versions"]) for t in listed["templates"]] == [("cheapest", [1, 2])]  # type: ignore[index]
    out = tmp_path / "t.json"
    assert _run(capsys, "template", "export", "--db", db, "--out", str(out)) == (0, {"out": str(out)})
    assert _run(capsys, "template", "delete", "cheapest@1", "--db", db) == (0, {"deleted": 1})
    assert _run(capsys, "template", "import", str(out), "--db", db)[1] == {
        "saved": ["cheapest@3"],
        "unchanged": ["cheapest@2"],
    }, "version 1 came back as the next version; version 2 was still there"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    code, error = _run(capsys, "template", "import", str(bad), "--db", db)
    assert (code, error.startswith("error: cannot import /")) == (2, True), error  # a long path is clamped
    assert error.endswith(
        ": it is not a template file: an exported file is a JSON object with format 'andor-templates'"
    ), error
    code, error = _run(
        capsys, "template", "save", "x", "--db", db, "--session", "shop", "--node", "0", "--param", "brand=Zenith"
    )
    assert (code, error) == (2, "error: 'Zenith' (brand) occurs nowhere in 0's subtree; give a value its text contains")
    assert _run(capsys, "template", "delete", "nothing", "--db", db)[0] == 2


def test_the_cli_injects_a_template_with_params_and_refuses_a_missing_one(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn(
        "run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--breakpoint", "after_expansion", "--id", "t1"
    )
    try:
        wait_until(
            lambda: session_status(db, "t1") == "paused", "the run to pause at its first breakpoint", timeout=120
        )
        saved = last_json(
            cli(
                "template",
                "save",
                "recipe",
                "--db",
                db,
                "--session",
                "t1",
                "--node",
                "0",
                "--children",
                "--param",
                "dish=vegan chocolate brownie",
            )
        )
        assert saved["params"] == ["dish"] and saved["nodes"] == 3
        missing = cli("command", "t1", "--db", db, "inject", "--parent", "0", "--template", "recipe", check=False)
        assert missing.returncode == 2
        assert missing.stderr.strip() == "error: template recipe needs a value for dish: give it as dish=VALUE"
        injected = command(
            db,
            "t1",
            "inject",
            "--parent",
            "0",
            "--position",
            "0",
            "--template",
            "recipe@1",
            "--param",
            "dish=gluten-free lemon bars",
        )
        assert injected["result"] == "applied", injected
        assert command(db, "t1", "stop")["result"] == "applied"
        finish(runner, "the stopped run to exit")
    finally:
        runner.kill()
    trace = last_json(cli("export", "t1", "--db", db))
    added = [e for e in trace["events"] if e["kind"] == "nodes_added"]
    assert added[-1]["detail"]["template"] == {"name": "recipe", "version": 1}
    assert added[-1]["detail"]["nodes"][0]["description"] == "Search for gluten-free lemon bars"
    nodes = {n["id"]: n for n in trace["nodes"]}
    assert nodes["0.4"]["description"] == "Search for gluten-free lemon bars" and nodes["0.4"]["origin"] == "operator"


def test_the_console_and_cli_resolve_a_template_by_name(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite:///{tmp_path / 's.db'}")
    try:
        store.save_template(_template())
        payload = with_template(
            store, {"kind": "inject", "parent": "0", "template": "cheapest", "params": {"brand": "K", "max_price": "1"}}
        )
        assert payload["template"]["name"] == "cheapest" and payload["template"]["version"] == 1
        assert parse_command(payload).template == store.template("cheapest")  # type: ignore[union-attr]
        with pytest.raises(InputError, match="^template cheapest needs a value for max_price"):
            with_template(store, {"kind": "inject", "parent": "0", "template": "cheapest", "params": {"brand": "K"}})
    finally:
        store.close()
