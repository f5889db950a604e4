"""Names a package exports but loads on first use (PEP 562 module `__getattr__`).

Running a cell needs a fraction of what the packages export: tool authoring, declarations,
model-tool exports, the durable stores and snapshots are used by some processes and not by
others. Their modules load when one of their names is first read, so `import clawcell` and
a process's first cell do not pay for them (the cold start the runtime bench measures).
The value is then bound in the package, so later reads are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A `__getattr__` for `package` that imports `modules[name]` (a submodule's name,
    relative to `package`) when `name` is first read, and binds the value there."""

    def load(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
