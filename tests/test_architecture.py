"""The layout rules a newcomer relies on, checked rather than hoped for.

    ui/, demo/  ->  sessions/  ->  planner core  <-  planner.models / planner.browser (adapters)

The core (the modules directly in `planner/`) is pure: it imports only itself, the standard library and a
short list of small libraries, never an adapter, an SDK, a database or a UI. `ui/` drives sessions and never
an engine of its own. Every module's `__all__` says exactly what it offers (the httpx habit).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Third-party packages the core may import directly: validation models, the WHATWG URL parser the guard
# needs to see a URL exactly as Chromium will, and Unicode's confusables data it reads look-alike letters by.
CORE_THIRD_PARTY = frozenset({"ada_url", "confusable_homoglyphs", "networkx", "pydantic"})
# What must never be loaded by importing the core, directly or through anything it imports.
FORBIDDEN_FOR_CORE = ("anthropic", "playwright", "sqlalchemy", "streamlit", "sessions", "ui", "demo", "bench")
ADAPTERS = ("planner.models", "planner.browser")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


CORE = sorted(_module_name(path) for path in (ROOT / "planner").glob("*.py"))
SURFACE = sorted(
    path
    for folder in ("planner", "sessions", "ui")
    for path in (ROOT / folder).rglob("*.py")
    if path.name != "__main__.py"
)


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every module a file imports, at any depth (a lazy import inside a function still loads at run time).

    `from a import b` yields both `a` and `a.b`, since `b` may be a submodule.
    """
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno} uses a relative import; the project imports absolutely"
            assert node.module is not None
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in paths
        for module, line in _imports(path)
        if any(_within(module, package) for package in forbidden)
    ]


def _loaded_by(modules: list[str]) -> list[str]:
    """The modules a fresh interpreter holds after importing `modules`."""
    code = f"import sys\nimport {', '.join(modules)}\nprint('\\n'.join(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"importing {modules} failed:\n{done.stderr}"
    loaded = done.stdout.split()
    assert modules[-1] in loaded, f"the subprocess did not import {modules[-1]}; it printed:\n{done.stdout[:500]}"
    return loaded


def test_core_loads_no_adapter_sdk_database_or_ui() -> None:
    """Import every core module in a fresh interpreter and look at what actually got loaded, transitively."""
    loaded = _loaded_by(CORE)
    leaked = sorted({package for package in FORBIDDEN_FOR_CORE + ADAPTERS for m in loaded if _within(m, package)})
    assert not leaked, f"importing the core loaded {leaked}; the core must stay pure (docs/architecture.md)"


def test_light_adapters_load_no_sdk() -> None:
    """The fakes the tests, demo and benchmarks use must not pull in Playwright or the Anthropic SDK."""
    light = [
        "planner.browser",
        "planner.browser.dry",
        "planner.browser.observation",
        "planner.models",
        "planner.models.offline",
        "planner.models.replay",
        "planner.models.scripted",
    ]
    heavy = ("anthropic", "playwright", "sqlalchemy", "streamlit")
    leaked = sorted({package for package in heavy for m in _loaded_by(light) if _within(m, package)})
    assert not leaked, f"importing {light} loaded {leaked}; load those lazily (see planner/browser/__init__.py)"


@pytest.mark.parametrize("module", CORE)
def test_core_imports_only_core_stdlib_and_allowed_libraries(module: str) -> None:
    path = ROOT / (module.replace(".", "/") + ("/__init__.py" if module == "planner" else ".py"))
    outside = [f"{name} (line {line})" for name, line in _imports(path) if not _allowed_in_core(name)]
    assert not outside, (
        f"{module} imports {outside}: the core may import only core modules (directly in planner/), the standard "
        f"library and {sorted(CORE_THIRD_PARTY)}"
    )


def _allowed_in_core(name: str) -> bool:
    if name.split(".")[0] in sys.stdlib_module_names | CORE_THIRD_PARTY or name in CORE:
        return True
    parent, _, attribute = name.rpartition(".")
    if parent in CORE and parent != "planner":  # `from planner.tree import Node`
        return True
    # `from planner import X`: fine when X is defined by a core module.
    defined_in = getattr(getattr(importlib.import_module("planner"), attribute, None), "__module__", None)
    return parent == "planner" and defined_in in CORE


def test_planner_never_imports_sessions_ui_demo_or_bench() -> None:
    found = _violations(sorted((ROOT / "planner").rglob("*.py")), ("sessions", "ui", "demo", "bench", "app"))
    assert not found, f"the planner (core and adapters) must not depend on what is built on it: {found}"


def test_sessions_never_imports_ui() -> None:
    found = _violations(sorted((ROOT / "sessions").rglob("*.py")), ("ui", "app"))
    assert not found, f"sessions must work without the console: {found}"


def test_sessions_never_imports_the_demo_built_on_it() -> None:
    """The demo runs on sessions (`python -m demo` adds its subcommands to the sessions CLI), so an import
    back would be a loop. Its tasks reach sessions as a catalogue the entry points load by name
    (`sessions.catalogue`), never by an import."""
    found = _violations(sorted((ROOT / "sessions").rglob("*.py")), ("demo",))
    loaded = [
        m for m in _loaded_by(["sessions.client", "sessions.worker.runner", "sessions.cli"]) if _within(m, "demo")
    ]
    assert not found and not loaded, f"sessions must not import the demo that runs on it: {found or loaded}"


def test_ui_talks_to_sessions_only_through_the_client() -> None:
    """The console is a client: it reads snapshots and sends commands through `sessions.client`, never the
    store, the runner or the worker side directly."""
    paths = sorted((ROOT / "ui").rglob("*.py")) + [ROOT / "app.py"]
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in paths
        for module, line in _imports(path)
        if _within(module, "sessions") and not _within(module, "sessions.client")
    ]
    assert not found, f"ui must use sessions.client only: {found}"


def test_ui_never_runs_an_engine_of_its_own() -> None:
    """The console drives sessions (whose runner owns the engine); an engine in the page would bypass the log."""
    paths = sorted((ROOT / "ui").rglob("*.py")) + [ROOT / "app.py"]
    planner = importlib.import_module("planner")
    found = _violations(paths, ("planner.engine",)) + [
        f"{path.relative_to(ROOT)}:{line} imports {name} (defined in planner.engine)"
        for path in paths
        for name, line in _imports(path)
        if name.startswith("planner.")
        and name.count(".") == 1
        and getattr(getattr(planner, name.split(".")[1], None), "__module__", "") == "planner.engine"
    ]
    assert not found, f"ui must send commands through sessions.client, not run an Engine: {found}"


def _isort_key(name: str) -> tuple[int, list[int | str]]:
    """Ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then the rest, each in natural order."""
    group = 0 if len(name) > 1 and name.isupper() else 1 if name[0].isupper() else 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                assert node.value is not None
                return list(ast.literal_eval(node.value))
    return None


@pytest.mark.parametrize("path", SURFACE, ids=lambda path: str(path.relative_to(ROOT)))
def test_all_is_honest(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not node.name.startswith("_")
    ]
    declared = _declared_all(tree)
    if declared is None:
        assert not defined, f"{path.relative_to(ROOT)} defines {defined} but has no __all__"
        return
    unlisted = [name for name in defined if name not in declared]
    assert not unlisted, f"{unlisted} are public but not in __all__; list them or prefix them with '_'"
    assert declared == sorted(declared, key=_isort_key), "__all__ is not sorted the way ruff's RUF022 sorts it"
    assert len(set(declared)) == len(declared), "__all__ lists a name twice"
    module = importlib.import_module(_module_name(path))
    missing = [name for name in declared if not hasattr(module, name)]
    assert not missing, f"__all__ lists {missing}, which {module.__name__} does not have"


def test_no_two_modules_import_each_other_even_through_others() -> None:
    """A cycle (even a lazy import inside a function) means neither module can be read or tested alone."""
    import networkx as nx

    paths = [path for folder in ("planner", "sessions", "ui", "demo") for path in (ROOT / folder).rglob("*.py")]
    modules = {_module_name(path): path for path in paths}
    graph = nx.DiGraph()
    for module, path in modules.items():
        graph.add_node(module)
        for imported, _ in _imports(path):
            if imported in modules and imported != module and not module.startswith(imported + "."):
                graph.add_edge(module, imported)
    cycles = [sorted(cycle) for cycle in nx.simple_cycles(graph) if not _package_init_pair(cycle)]
    assert cycles == [], f"modules that import each other: {cycles[:5]}"


def _package_init_pair(cycle: list[str]) -> bool:
    """A package's `__init__` re-exporting its own submodules (lazily) is not a cycle between modules."""
    return any(all(other == name or other.startswith(name + ".") for other in cycle) for name in cycle)
