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
from collections.abc import Callable, Iterable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]) -> Callable[[str], object]:
    """A `__getattr__` for `package`: each of the names `modules` lists for a submodule
    (its name relative to `package`) imports that submodule when first read, and is bound
    in `package` from then on."""
    owners = {name: module for module, names in modules.items() for name in names}

    def load(name: str) -> object:
        module = owners.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
