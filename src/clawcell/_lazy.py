"""The optional parts of the package: names a package exports but loads on first use (PEP 562
module `__getattr__`), names that moved, and how to add a missing extra (`install_hint`).

Running a cell needs a fraction of what the packages export: tool authoring, declarations,
model-tool exports, the durable stores and snapshots are used by some processes and not by
others. Their modules load when one of their names is first read, so `import clawcell` and
a process's first cell do not pay for them (the cold start the runtime bench measures).
The value is then bound in the package, so later reads are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping

__all__ = ["install_hint", "lazy_exports", "moved_exports"]


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


def moved_exports(
    package: str,
    moved: Mapping[str, str],
    fallback: Callable[[str], object] | None = None,
    *,
    advice: Mapping[str, str] | None = None,
) -> Callable[[str], object]:
    """A `__getattr__` for `package` that keeps names which moved elsewhere reachable for one
    release: reading one of `moved`'s names (`{name: "new.module"}`) warns with a
    `DeprecationWarning` that names the new home and returns the value from there. Other names
    go to `fallback` (another `__getattr__`, such as `lazy_exports`'s), else `AttributeError`.
    `advice` says what to use instead of a name whose new home is private, in place of
    "import it from there"."""

    def load(name: str) -> object:
        home = moved.get(name)
        if home is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"`{package}.{name}` moved to `{home}.{name}`; "
            f"{(advice or {}).get(name, 'import it from there')} "
            "(the old name goes away in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return load


def install_hint(extra: str) -> str:
    """The commands that add the extra `extra`: from a built wheel, and in a checkout.

    >>> install_hint("ui")
    "`pip install 'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`)"
    """
    checkout = f"`.venv/bin/pip install -e '.[{extra}]'`"
    return f"`pip install 'clawcell[{extra}]'` (in a clawcell checkout: {checkout})"
