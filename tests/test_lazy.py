"""Names a package loads on first use (`clawcell._lazy`), and what `import clawcell` leaves out."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types

import pytest

from clawcell import _lazy  # pyright: ignore[reportPrivateUsage]

LAZY_MODULES = [
    "clawcell.catalog._typescript._api_files",
    "clawcell.catalog._typescript._declarations",
    "clawcell.catalog._define",
    "clawcell.catalog._hooks",
    "clawcell.catalog._model_tools",
    "clawcell.catalog._tool_search",
    "clawcell.catalog._typescript._quick_index",
    "clawcell.catalog._typescript._tool_dts",
    "clawcell.envelope._descriptor",
    "clawcell.runtime._parser",
    "clawcell.runtime._wasm._snapshot",
    "clawcell.runtime._v8",
    "clawcell.runtime._v8._process",
    "clawcell.store._sqlite._store",
    "clawcell.store._postgres._store",
    "jsonschema_rs",
    "sqlite3",
    # `shutil` (with `bz2` and `lzma`) and `tempfile`: only writing the compiled engine's
    # cache, probing bubblewrap and finding libc off Linux need them.
    "shutil",
    "tempfile",
    "bz2",
    "lzma",
]
"""Modules a cell that returns a small value never uses (the cold-start bench's cell)."""

_FIRST_CELL = """
import asyncio, json, sys
import clawcell
async def main():
    async with clawcell.CodeMode() as mode:
        assert (await mode.exec("return 1"))["value"] == 1
asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_a_name_loads_its_module_when_first_read_and_is_bound_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = types.ModuleType("fake_package")
    monkeypatch.setitem(sys.modules, "fake_package", package)
    loaded: list[str] = []

    def import_module(name: str) -> types.ModuleType:
        loaded.append(name)
        module = types.ModuleType(name)
        module.value = 42  # type: ignore[attr-defined]
        return module

    monkeypatch.setattr(_lazy.importlib, "import_module", import_module)
    load = _lazy.lazy_exports("fake_package", {"_values": ["value"]})
    assert loaded == []
    assert load("value") == 42
    assert loaded == ["fake_package._values"]
    assert package.value == 42  # type: ignore[attr-defined]


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    load = _lazy.lazy_exports("clawcell.catalog", {})
    message = "module 'clawcell.catalog' has no attribute 'nothing'"
    with pytest.raises(AttributeError, match=re.escape(message)):
        load("nothing")


def test_lazily_exported_names_are_the_real_ones() -> None:
    import clawcell.catalog
    import clawcell.envelope
    import clawcell.runtime
    from clawcell.catalog import _define, _hooks, _model_tools  # pyright: ignore[reportPrivateUsage]
    from clawcell.envelope import _descriptor  # pyright: ignore[reportPrivateUsage]
    from clawcell.runtime import _parser  # pyright: ignore[reportPrivateUsage]

    assert clawcell.catalog.tool is _define.tool
    assert clawcell.catalog.to_openai is _model_tools.to_openai
    assert clawcell.catalog.HookDecision is _hooks.HookDecision
    assert clawcell.envelope.describe is _descriptor.describe
    assert clawcell.runtime.parse_failure is _parser.parse_failure
    from clawcell.runtime._v8 import _executor as _v8  # pyright: ignore[reportPrivateUsage]

    assert clawcell.runtime.V8Executor is _v8.V8Executor


def test_a_first_cell_in_a_new_process_loads_none_of_the_lazy_modules() -> None:
    from clawcell.runtime._wasm._engine import compiled_reactor  # pyright: ignore[reportPrivateUsage]

    compiled_reactor()  # the engine's cache is written (a start that compiles writes it)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CELL], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(done.stdout))
    assert "clawcell.catalog._catalog" in loaded  # the listing is real
    assert sorted(loaded & set(LAZY_MODULES)) == []
