"""What our wasmtime bindings guarantee beyond the happy path (`_wasm._capi`, `_handles`,
`_host_funcs`, `_backstop`): prototypes and layouts equal to the installed wasmtime's
headers, C callbacks that outlive their module's globals and never let an exception reach C,
objects unusable after `close()`, a forked child that can compile, and a version read from
any metadata pip writes."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, cast

import pytest
import wasmtime
from wasmtime import _bindings as reference  # generated from the installed version's headers
from wasmtime import _ffi as ffi

from clawcell import RuntimeUnavailableError
from clawcell.runtime._wasm import _backstop, _capi, _library
from clawcell.runtime._wasm._capi import EXTERN_FUNC, EXTERN_MEMORY, EXTERN_TABLE, EngineError
from clawcell.runtime._wasm._exports import FastExport, GuestTrap, export_of
from clawcell.runtime._wasm._externs import Memory
from clawcell.runtime._wasm._handles import Engine, Linker, Module, Store
from clawcell.runtime._wasm._host_funcs import add_to_table, live_host_functions

_SPIN = bytes(
    wasmtime.wat2wasm("""
(module
  (func (export "spin") (param $n i32)
    (loop $again
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $again (local.get $n)))))
""")
)

# -- prototypes and layouts against the headers ----------------------------------------------


def _abi(kind: Any) -> str:
    """A ctypes type as the calling convention sees it: a pointer, or an integer's width
    and signedness (`c_size_t` and `c_uint64` are one type on some platforms, not others)."""
    if kind is None:
        return "void"
    pointer = issubclass(kind, ctypes._Pointer) or hasattr(kind, "_argtypes_")  # pyright: ignore[reportPrivateUsage]
    if pointer or kind in (ctypes.c_void_p, ctypes.c_char_p):  # `_argtypes_`: a CFUNCTYPE
        return "pointer"
    if kind is ctypes.c_bool:
        return "bool"
    integer = cast(Any, kind)
    signed = integer(-1).value < 0
    return f"{'i' if signed else 'u'}{ctypes.sizeof(integer) * 8}"


def _pointer_sized(abi: str) -> str:
    # The generated bindings declare a returned error pointer of a callback as `size_t`.
    return "pointer" if abi == f"u{ctypes.sizeof(ctypes.c_void_p) * 8}" else abi


def _declared() -> dict[str, Any]:
    api = _capi.capi()
    return {name: entry for name, entry in vars(api).items() if hasattr(entry, "argtypes")}


def test_every_declared_prototype_matches_the_installed_wasmtime_s_header() -> None:
    declared = _declared()
    assert len(declared) >= 50
    for entry in declared.values():
        theirs = getattr(reference, f"_{entry.__name__}")
        ours = (_abi(entry.restype), [_abi(a) for a in entry.argtypes])
        assert ours == (_abi(theirs.restype), [_abi(a) for a in theirs.argtypes]), entry.__name__


def test_the_callback_types_match_the_header_s() -> None:
    epoch = reference._wasmtime_store_epoch_deadline_callback.argtypes[1]  # pyright: ignore[reportPrivateUsage]
    unchecked = reference._wasmtime_func_new_unchecked.argtypes[2]  # pyright: ignore[reportPrivateUsage]
    finalizer = reference._wasmtime_func_new_unchecked.argtypes[4]  # pyright: ignore[reportPrivateUsage]
    pairs: list[tuple[Any, Any]] = [
        (_capi.EPOCH_CALLBACK, epoch),
        (_capi.UNCHECKED_CALLBACK, unchecked),
        (_capi.FINALIZER, finalizer),
    ]
    for ours, theirs in pairs:
        assert _abi(ours._restype_) == _pointer_sized(_abi(theirs._restype_))
        assert [_abi(a) for a in ours._argtypes_] == [_abi(a) for a in theirs._argtypes_]


def test_the_structures_have_the_header_s_sizes_and_offsets() -> None:
    assert ctypes.sizeof(_capi.Extern) >= ctypes.sizeof(reference.wasmtime_extern_t)
    assert ctypes.sizeof(_capi.Val) >= ctypes.sizeof(reference.wasmtime_val_t)
    assert (
        _capi.PAYLOAD == reference.wasmtime_extern_t.of.offset == reference.wasmtime_val_t.of.offset
    )
    assert ctypes.sizeof(reference.wasmtime_func_t) == _capi.FUNC_BYTES
    assert ctypes.sizeof(reference.wasmtime_val_raw_t) == _capi.VAL_RAW_BYTES
    assert ctypes.sizeof(reference.wasmtime_instance_t) == _capi.INSTANCE_BYTES
    assert ctypes.sizeof(_capi.ByteVec) == ctypes.sizeof(reference.wasm_byte_vec_t)
    assert ctypes.sizeof(_capi.ValtypeVec) == ctypes.sizeof(reference.wasm_valtype_vec_t)
    kinds = {
        "EXTERN_FUNC": "WASMTIME_EXTERN_FUNC",
        "EXTERN_GLOBAL": "WASMTIME_EXTERN_GLOBAL",
        "EXTERN_TABLE": "WASMTIME_EXTERN_TABLE",
        "EXTERN_MEMORY": "WASMTIME_EXTERN_MEMORY",
        "VAL_I32": "WASMTIME_I32",
        "VAL_I64": "WASMTIME_I64",
        "VAL_FUNCREF": "WASMTIME_FUNCREF",
    }
    for ours, theirs in kinds.items():
        assert getattr(_capi, ours) == getattr(ffi, theirs).value, ours


def test_a_32_bit_python_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_capi, "_loaded", [])
    real = ctypes.sizeof
    monkeypatch.setattr(ctypes, "sizeof", lambda t: 4 if t is ctypes.c_void_p else real(t))  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    with pytest.raises(RuntimeUnavailableError) as caught:
        _capi.capi()
    assert caught.value.message == (
        "clawcell binds wasmtime's C API with the structure layouts of a 64-bit platform, and "
        "this Python's pointers are 32-bit: use a 64-bit Python"
    )


# -- C callbacks ------------------------------------------------------------------------------


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=600,  # a hang fails the test; a pass never comes near it
        check=False,
    )


def test_callbacks_outlive_the_globals_of_their_modules() -> None:
    # At interpreter exit a module's globals are cleared before some stores are freed: the
    # trampoline, the epoch callback and both finalizers must still be valid C functions
    # then. Freed ctypes callbacks' memory is taken by the next ones made, so decoys show
    # any call that would go to a freed callback.
    result = _run("""
        import ctypes, gc, wasmtime
        from clawcell.runtime._wasm import _backstop, _capi, _host_funcs
        from clawcell.runtime._wasm._exports import FastExport, export_of
        from clawcell.runtime._wasm._handles import Engine, Module, Store
        wat = '''(module (type $cb (func (param i32) (result i32)))
          (table (export "table") 0 funcref)
          (func (export "call") (param $slot i32) (param $a i32) (result i32)
            (call_indirect (type $cb) (local.get $a) (local.get $slot))))'''
        engine = Engine(epoch_interruption=True)
        store = Store(engine)
        exports = store.instantiate(Module.compile(engine, bytes(wasmtime.wat2wasm(wat))))
        slot = _host_funcs.add_to_table(
            store, export_of(exports, "table", _capi.EXTERN_TABLE), (("i32",), ("i32",)),
            lambda a: a * 2)
        _backstop.install_backstop(store)
        call = FastExport(store, export_of(exports, "call", _capi.EXTERN_FUNC),
                          (("i32", "i32"), ("i32",)))
        _host_funcs._trampoline = _host_funcs._forget = None
        _backstop._on_epoch = _backstop._forget = None
        gc.collect()
        seen = []
        decoys = [_capi.FINALIZER(lambda key: seen.append("finalizer")) for _ in range(32)]
        decoys += [_capi.UNCHECKED_CALLBACK(lambda *a: seen.append("trampoline") or 0)
                   for _ in range(32)]
        engine.increment_epoch()  # the epoch callback runs in the next call
        results = [call(slot, 21), call(slot, 5)]
        del call, exports, store
        gc.collect()
        print(results, seen, _host_funcs.live_host_functions(), len(_backstop._deadlines))
    """)
    assert (result.returncode, result.stdout.strip()) == (0, "[42, 10] [] 0 0"), result.stderr


class _Raising(dict[int, Any]):
    def get(self, key: int, default: Any = None) -> Any:
        raise KeyboardInterrupt  # a signal arriving while the callback runs


def test_an_exception_in_the_epoch_check_traps_the_guest(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(epoch_interruption=True)
    store = Store(engine)
    _backstop.install_backstop(store)
    spin = FastExport(
        store,
        export_of(store.instantiate(Module.compile(engine, _SPIN)), "spin", EXTERN_FUNC),
        (("i32",), ()),
    )
    spin(1000)  # the deadline is one epoch away: no callback yet
    monkeypatch.setattr(_backstop, "_deadlines", _Raising())
    engine.increment_epoch()
    with pytest.raises(GuestTrap) as caught:
        spin(1000)
    assert _backstop.CALLBACK_FAILED in str(caught.value)
    assert isinstance(caught.value.__cause__, KeyboardInterrupt)


# -- ownership ----------------------------------------------------------------------------------


def test_a_closed_engine_module_or_linker_refuses_to_be_used() -> None:
    engine = Engine()
    module = Module.compile(engine, _SPIN)
    linker = Linker(engine)
    store = Store(engine)
    module.close()
    linker.close()
    engine.close()
    engine.close()  # idempotent
    attempts = (
        lambda: store.instantiate(module),
        module.serialize,
        lambda: linker.instantiate(store, Module.compile(Engine(), _SPIN)),
        lambda: Module.compile(engine, _SPIN),
        lambda: Module.deserialize_file(engine, "/nonexistent"),
        lambda: Store(engine),
        lambda: Linker(engine),
        engine.increment_epoch,
    )
    for attempt in attempts:
        with pytest.raises(EngineError, match=r"^this wasmtime \w+ was closed .*: create a new"):
            attempt()


def test_a_store_outlives_a_closed_engine_and_module() -> None:
    # wasmtime shares engines and modules by reference count: a store made from them keeps
    # what it needs, so closing them early is safe.
    engine = Engine()
    module = Module.compile(engine, _SPIN)
    store = Store(engine)
    spin = FastExport(
        store, export_of(store.instantiate(module), "spin", EXTERN_FUNC), (("i32",), ())
    )
    module.close()
    engine.close()
    assert spin(10) == 0


def test_a_store_is_freed_only_by_collection() -> None:
    assert not hasattr(Store, "close")


# -- processes and versions ---------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_compiles_after_its_parent_did() -> None:
    result = _run("""
        import os, wasmtime
        from clawcell.runtime._wasm._handles import Engine, Module
        wasm = bytes(wasmtime.wat2wasm('(module (func (export "f") (result i32) i32.const 1))'))
        Module.compile(Engine(), wasm)  # the parent's compile threads now exist
        pid = os.fork()
        if pid == 0:
            Module.compile(Engine(), wasm)
            os._exit(7)
        print(os.waitpid(pid, 0)[1] >> 8)
    """)
    assert (result.returncode, result.stdout.strip()) == (0, "7"), result.stderr


def test_a_site_with_two_majors_metadata_is_refused(tmp_path: Path) -> None:
    for folder in ("wasmtime-50.0.0.dist-info", "wasmtime-51.0.1.dist-info"):
        (tmp_path / folder).mkdir()
    with pytest.raises(RuntimeUnavailableError) as caught:
        _library.wasmtime_version(tmp_path)
    assert caught.value.message == (
        f"{str(tmp_path)!r} holds the metadata of several wasmtime versions (50.0.0, 51.0.1), "
        f"so the version of its library cannot be told: reinstall it "
        f"(`pip install --force-reinstall 'wasmtime>=51.0.0,<52'`)"
    )


def test_a_develop_egg_info_s_version_is_read_from_its_pkg_info(tmp_path: Path) -> None:
    (tmp_path / "wasmtime.egg-info").mkdir()
    (tmp_path / "wasmtime.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: wasmtime\nVersion: 51.0.3\n", encoding="utf-8"
    )
    assert _library.wasmtime_version(tmp_path) == "51.0.3"


def test_a_package_without_metadata_beside_it_asks_importlib_metadata(tmp_path: Path) -> None:
    # an editable install: the package in a source tree, its metadata in site-packages
    assert _library.wasmtime_version(tmp_path) == "51.0.0"


def test_a_package_whose_version_nobody_knows_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_capi, "_loaded", [])
    monkeypatch.setattr(_library, "wasmtime_version", lambda site: "unknown")  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    with pytest.raises(RuntimeUnavailableError) as caught:
        _capi.capi()
    package = str(Path(_library.library_path()).parents[1])
    assert caught.value.message == (
        f"cannot tell which wasmtime version the package at {package!r} is (no "
        f"`wasmtime-*.dist-info` or `.egg-info` beside it, and `importlib.metadata` knows "
        f"none; a copied or vendored package?), so its C structure layouts are unknown: "
        f"install it with pip (`pip install 'wasmtime>=51.0.0,<52'`)"
    )


def test_an_export_used_with_another_store_is_refused() -> None:
    # wasmtime aborts the whole process when an extern meets a store it does not belong to
    memory_wasm = bytes(wasmtime.wat2wasm('(module (memory (export "memory") 1))'))
    engine = Engine()
    module = Module.compile(engine, memory_wasm)
    first, second = Store(engine), Store(engine)
    memory = export_of(first.instantiate(module), "memory", EXTERN_MEMORY)
    second.instantiate(module)
    with pytest.raises(ValueError, match=r"does not belong to <.*Store.*>: use an export read"):
        Memory(second, memory)
    with pytest.raises(ValueError, match="does not belong to"):
        Memory(first, _capi.Extern(kind=EXTERN_MEMORY))  # made by hand: no store at all
    assert Memory(first, memory).pages() == 1


def test_a_host_function_s_exception_is_the_trap_s_cause() -> None:
    wat = """(module (type $cb (func (param i32) (result i32)))
      (table (export "table") 0 funcref)
      (func (export "call") (param $slot i32) (result i32)
        (call_indirect (type $cb) (i32.const 1) (local.get $slot))))"""
    engine = Engine()
    store = Store(engine)
    exports = store.instantiate(Module.compile(engine, bytes(wasmtime.wat2wasm(wat))))
    failure = RuntimeError("from the host")

    def failing(value: int) -> int:
        raise failure

    slot = add_to_table(
        store, export_of(exports, "table", EXTERN_TABLE), (("i32",), ("i32",)), failing
    )
    call = FastExport(store, export_of(exports, "call", EXTERN_FUNC), (("i32",), ("i32",)))
    with pytest.raises(GuestTrap, match="python exception") as caught:
        call(slot)
    assert caught.value.__cause__ is failure
    with pytest.raises(GuestTrap) as again:
        FastExport(store, export_of(exports, "call", EXTERN_FUNC), (("i32",), ("i32",)))(99)
    assert again.value.__cause__ is None  # a trap of the guest's own (no such slot)


@pytest.mark.parametrize(
    ("platform", "machine", "folder", "library"),
    [
        ("linux", "x86_64", "linux-x86_64", "_libwasmtime.so"),
        ("linux", "aarch64", "linux-aarch64", "_libwasmtime.so"),
        ("darwin", "arm64", "darwin-aarch64", "_libwasmtime.dylib"),
        ("darwin", "x86_64", "darwin-x86_64", "_libwasmtime.dylib"),
        ("win32", "AMD64", "win32-x86_64", "_wasmtime.dll"),
        ("win32", "ARM64", "win32-aarch64", "_wasmtime.dll"),
    ],
)
def test_the_library_is_looked_for_where_wasmtime_py_s_wheels_put_it(
    monkeypatch: pytest.MonkeyPatch, platform: str, machine: str, folder: str, library: str
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    if platform == "win32":
        monkeypatch.delattr(os, "uname")
        monkeypatch.setenv("PROCESSOR_ARCHITECTURE", machine)
    else:
        uname = os.uname()
        fields = (uname.sysname, uname.nodename, uname.release, uname.version, machine)
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(fields))
    names = (_library._platform_dir(), _library._library_name())  # pyright: ignore[reportPrivateUsage]
    assert names == (folder, library)


def test_stores_made_and_freed_on_one_thread_while_another_calls_host_functions() -> None:
    # The registries change from whichever thread frees a store (its finalizers) while the
    # trampoline reads them on a guest's thread.
    import gc
    import threading

    wat = """(module (type $cb (func (param i32) (result i32)))
      (table (export "table") 0 funcref)
      (func (export "call") (param $slot i32) (param $a i32) (result i32)
        (call_indirect (type $cb) (local.get $a) (local.get $slot))))"""
    wasm = bytes(wasmtime.wat2wasm(wat))
    engine = Engine(epoch_interruption=True)
    module = Module.compile(engine, wasm)
    gc.collect()
    before = (live_host_functions(), len(_backstop._deadlines))  # pyright: ignore[reportPrivateUsage]

    def plus_one(value: int) -> int:
        return value + 1

    def guest() -> tuple[Store, FastExport, int]:
        store = Store(engine)
        _backstop.install_backstop(store)
        exports = store.instantiate(module)
        table = export_of(exports, "table", EXTERN_TABLE)
        slot = add_to_table(store, table, (("i32",), ("i32",)), plus_one)
        call = FastExport(
            store, export_of(exports, "call", EXTERN_FUNC), (("i32", "i32"), ("i32",))
        )
        return store, call, slot

    store, call, slot = guest()
    results: list[int] = []
    started = threading.Event()

    def churn() -> None:
        started.set()
        for _ in range(150):
            guest()  # made and dropped: its finalizers run on this thread

    thread = threading.Thread(target=churn)
    thread.start()
    started.wait()
    while True:
        results.append(call(slot, len(results)))
        if not thread.is_alive():
            break
    thread.join()
    assert results == [n + 1 for n in range(len(results))]
    del store, call
    gc.collect()
    assert (live_host_functions(), len(_backstop._deadlines)) == before  # pyright: ignore[reportPrivateUsage]
