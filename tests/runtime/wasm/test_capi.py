"""Our own bindings of wasmtime's C API (`_wasm._capi`, `_handles`, `_externs`,
`_host_funcs`): how the library is found, what a missing or unknown wasmtime says, that
every object is freed once, and traps and host functions as wasmtime-py had them."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import wasmtime  # the reference binding, for comparison only: clawcell never imports it

from clawcell import RuntimeUnavailableError
from clawcell.runtime._wasm import _capi, _library
from clawcell.runtime._wasm._capi import (
    EXTERN_FUNC,
    EXTERN_GLOBAL,
    EXTERN_MEMORY,
    EXTERN_TABLE,
    EngineError,
)
from clawcell.runtime._wasm._exports import FastExport, GuestTrap, export_of
from clawcell.runtime._wasm._externs import GlobalI32, Memory
from clawcell.runtime._wasm._handles import Engine, Module, Store, func_signature
from clawcell.runtime._wasm._host_funcs import add_to_table, live_host_functions

_WAT = """
(module
  (type $cb (func (param i32 i64) (result i32)))
  (table (export "table") 0 funcref)
  (memory (export "memory") 1 4)
  (global (export "sp") (mut i32) (i32.const 16))
  (func (export "call") (param $slot i32) (param $a i32) (param $b i64) (result i32)
    (call_indirect (type $cb) (local.get $a) (local.get $b) (local.get $slot)))
  (func (export "trap") unreachable))
"""
_CALL = (("i32", "i32", "i64"), ("i32",))
_WASM = bytes(wasmtime.wat2wasm(_WAT))


@pytest.fixture
def store() -> Iterator[tuple[Store, Any]]:
    engine = Engine()
    store = Store(engine)
    yield store, store.instantiate(Module.compile(engine, _WASM))


# -- finding the library --------------------------------------------------------------------


def test_the_library_is_the_one_the_installed_package_ships_and_its_version_is_read() -> None:
    path = Path(_library.library_path())
    assert path.parent.parent == Path(wasmtime.__file__).parent
    assert _library.wasmtime_version(path.parents[2]) == "51.0.0"


def test_a_missing_wasmtime_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", [])
    with pytest.raises(RuntimeUnavailableError) as caught:
        _library._package_dir()  # pyright: ignore[reportPrivateUsage]
    assert caught.value.message == (
        "the wasmtime package is not installed; clawcell runs QuickJS on its library: "
        "`pip install 'wasmtime>=51.0.0,<52'`"
    )


def test_a_package_without_this_platform_s_library_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_library, "_library", [])
    monkeypatch.setattr(_library, "_platform_dir", lambda: "plan9-mips")
    with pytest.raises(RuntimeUnavailableError, match=r"for this platform \('plan9-mips'\)"):
        _library.library_path()


def test_a_wasmtime_whose_layouts_are_unknown_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_capi, "_loaded", [])
    monkeypatch.setattr(_library, "wasmtime_version", lambda site: "52.0.0")  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    with pytest.raises(RuntimeUnavailableError) as caught:
        _capi.capi()
    assert caught.value.message == (
        "clawcell binds wasmtime's C API with the structure layouts of wasmtime 51, and the "
        "installed wasmtime is '52.0.0': install a supported one "
        "(`pip install 'wasmtime>=51.0.0,<52'`)"
    )


@pytest.mark.parametrize(
    ("folders", "version"),
    [
        (["wasmtime-51.0.0.dist-info"], "51.0.0"),
        (["other-1.0.dist-info", "wasmtime-51.0.2.dist-info"], "51.0.2"),
        (["wasmtime-52.1.0.dist-info"], "52.1.0"),
        (["wasmtime-51.0.0.dist-info", "wasmtime-51.0.1.dist-info"], "51.0.1"),
        (["wasmtime-51.0.1-py3.11.egg-info"], "51.0.1"),
    ],
)
def test_the_version_is_the_dist_info_folder_s(
    tmp_path: Path, folders: list[str], version: str
) -> None:
    for folder in folders:
        (tmp_path / folder).mkdir()
    assert _library.wasmtime_version(tmp_path) == version


# -- ownership ------------------------------------------------------------------------------


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    api = _capi.capi()
    real: Callable[[int], None] = getattr(api, name)
    freed: list[int] = []

    def free(ptr: int) -> None:
        freed.append(ptr)
        real(ptr)

    gc.collect()  # an earlier test's garbage is freed now, not counted as this test's
    monkeypatch.setattr(api, name, free)
    return freed


def test_each_object_is_freed_once_whether_closed_or_collected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engines = _counting(monkeypatch, "engine_delete")
    modules = _counting(monkeypatch, "module_delete")
    stores = _counting(monkeypatch, "store_delete")
    engine = Engine()
    module = Module.compile(engine, _WASM)
    store = Store(engine)
    pointers = engine.ptr, module.ptr, store.ptr
    del store  # a store is freed only when collected (it has no `close()`)
    module.close()
    del module
    assert (engines, modules, stores) == ([], [pointers[1]], [pointers[2]])
    del engine  # collected: freed by `__del__`
    assert engines == [pointers[0]]


def test_objects_collected_while_the_interpreter_finalizes_are_left_to_the_system(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Called as the interpreter's exit would: the process ends and the kernel takes back
    # every mapping at once, so nothing is freed piece by piece (`_Owned.__del__`).
    freed = [_counting(monkeypatch, n) for n in ("engine_delete", "module_delete", "store_delete")]
    engine = Engine()
    module = Module.compile(engine, _WASM)
    store = Store(engine)
    ours = {engine.ptr, module.ptr, store.ptr}

    def of_ours() -> list[list[int]]:  # the collector may free an earlier test's objects too
        return [[ptr for ptr in kind if ptr in ours] for kind in freed]

    for owned in (store, module, engine):
        owned.__del__(lambda: True)
    assert of_ours() == [[], [], []]
    assert (engine.ptr, module.ptr, store.ptr) != (0, 0, 0)
    pointers = [[engine.ptr], [module.ptr], [store.ptr]]
    for owned in (store, module, engine):
        owned.__del__(lambda: False)  # while it runs: freed, once
    del store, module, engine
    gc.collect()
    assert of_ours() == pointers


def test_a_store_keeps_its_engine_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    engines = _counting(monkeypatch, "engine_delete")
    store = Store(Engine())
    exports = store.instantiate(Module.compile(store.engine, _WASM))
    assert engines == []
    assert Memory(store, export_of(exports, "memory", EXTERN_MEMORY)).pages() == 1
    del store, exports
    assert len(engines) == 1


# -- exports, traps and host functions ------------------------------------------------------


def test_exports_are_read_by_name_and_kind(store: tuple[Store, Any]) -> None:
    handle, exports = store
    assert exports.get("memory", EXTERN_FUNC) is None
    assert exports.get("missing", EXTERN_FUNC) is None
    assert func_signature(handle, export_of(exports, "call", EXTERN_FUNC)) == _CALL
    memory = Memory(handle, export_of(exports, "memory", EXTERN_MEMORY))
    assert (memory.pages(), memory.data_size()) == (1, 65_536)
    assert memory.grow(2) == 1 and memory.data_size() == 3 * 65_536
    with pytest.raises(EngineError, match="cannot grow the memory by 2 pages"):
        memory.grow(2)  # its maximum is 4 pages
    sp = GlobalI32(handle, export_of(exports, "sp", EXTERN_GLOBAL))
    assert sp.get() == 16
    sp.set(0x8000_0010)
    assert sp.get() == -0x7FFF_FFF0  # an i32: the high bit reads back as the sign


def test_a_trap_s_message_is_wasmtime_s_own(store: tuple[Store, Any]) -> None:
    handle, exports = store
    trap = FastExport(handle, export_of(exports, "trap", EXTERN_FUNC), ((), ()))
    with pytest.raises(GuestTrap) as ours:
        trap()
    reference = wasmtime.Store()
    instance = wasmtime.Instance(reference, wasmtime.Module(reference.engine, _WASM), [])
    function = instance.exports(reference)["trap"]
    assert isinstance(function, wasmtime.Func)
    with pytest.raises(wasmtime.Trap) as theirs:
        function(reference)
    assert str(ours.value) == str(theirs.value)
    assert "wasm `unreachable` instruction executed" in str(ours.value)
    with pytest.raises(GuestTrap):
        trap()  # the trap slot was cleared: the next trap is reported too


def test_a_host_function_gets_its_arguments_and_returns_its_result(
    store: tuple[Store, Any],
) -> None:
    handle, exports = store
    table = export_of(exports, "table", EXTERN_TABLE)
    seen: list[tuple[int, int]] = []

    def host(a: int, b: int) -> int:
        seen.append((a, b))
        return a + 1

    def failing(a: int, b: int) -> int:
        raise RuntimeError("from the host")

    call = FastExport(handle, export_of(exports, "call", EXTERN_FUNC), _CALL)
    slot = add_to_table(handle, table, (("i32", "i64"), ("i32",)), host)
    bad = add_to_table(handle, table, (("i32", "i64"), ("i32",)), failing)
    assert (slot, bad) == (0, 1)
    assert call(slot, -5 & 0xFFFF_FFFF, 2**63 + 1) == -4 & 0xFFFF_FFFF
    assert seen == [(-5, 2**63 + 1)]  # an i32 signed, an i64 unsigned
    with pytest.raises(GuestTrap, match="python exception"):
        call(bad, 1, 2)


def _zero(a: int, b: int) -> int:
    return 0


def test_host_functions_are_released_with_their_store() -> None:
    gc.collect()  # stores of earlier tests left in cycles (a trap's traceback holds frames)
    before = live_host_functions()
    engine = Engine()
    store = Store(engine)
    exports = store.instantiate(Module.compile(engine, _WASM))
    table = export_of(exports, "table", EXTERN_TABLE)
    for _ in range(3):
        add_to_table(store, table, (("i32", "i64"), ("i32",)), _zero)
    assert live_host_functions() == before + 3
    del store, exports, table
    gc.collect()
    assert live_host_functions() == before


def test_a_module_that_does_not_compile_says_why() -> None:
    with pytest.raises(EngineError, match=r"^cannot compile: "):
        Module.compile(Engine(), b"\0asm\x01\0\0\0\x0a")


def test_the_requirement_named_in_errors_is_the_project_s_dependency() -> None:
    import tomllib

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    dependencies = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    assert _library.REQUIREMENT in dependencies
    assert _library.REQUIREMENT.startswith(f"wasmtime>={_library.LAYOUT_MAJORS[-1]}.")
