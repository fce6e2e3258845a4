"""Lazy package exports (PEP 562), so importing a package root costs only what its caller uses.

`python -m sessions list` needs the store but not the engine; a package root that imported every
public name eagerly would make it pay for all of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports each name from its home module on first use and keeps it
    in `namespace` (the package's globals), so later lookups are plain attribute reads."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
