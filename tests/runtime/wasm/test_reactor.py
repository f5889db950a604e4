"""The guest runtime below `CodeMode`: wasm patch, module cache, image reset, interrupt
deadline, epoch backstop, memory limit and the raw string reader."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from clawcell import CodeMode, Limits, RuntimeUnavailableError
from clawcell.runtime import Guest, GuestPool, compiled_reactor
from clawcell.runtime._failure import EngineFailure, JSException
from clawcell.runtime._wasm import _reactor
from clawcell.runtime._wasm._engine import (
    EXPORTED_FUNCTIONS,
    MAX_WASM_STACK,
    MEMORY_RESERVATION,
    _cache_path,  # pyright: ignore[reportPrivateUsage]
)
from clawcell.runtime._wasm._exports import SIGNATURES, GuestTrap
from tests.conftest import in_forked_child
from tests.runtime.wasm._calls import backstop

INSTALL = json.dumps({"maxPending": 16, "bindings": []})
SORT = "const a = 'abcdefghij'.repeat(3e5).split(''); a.sort(); a.length"


def guest(memory: int = 64 * 1024 * 1024) -> Guest:
    return Guest(compiled_reactor(), memory_limit_bytes=memory, install_config=INSTALL)


def evaluate(g: Guest, source: str) -> str:
    inst = g.instance
    return inst.take_string(inst.eval(f"String(({source}))"))


# -- the wasm patcher ---------------------------------------------------------------------


def test_a_modified_reactor_binary_is_refused_by_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path(_reactor._locate())  # pyright: ignore[reportPrivateUsage]
    forged = tmp_path / "qjs-wasi-reactor.wasm"
    forged.write_bytes(real.read_bytes() + b"\0")
    monkeypatch.setattr(_reactor, "_locate", lambda: str(forged))
    with pytest.raises(RuntimeUnavailableError) as caught:
        _reactor.load_verified_wasm()
    assert caught.value.code == "runtime_unavailable"
    assert f"expected {_reactor.WASM_SHA256}" in caught.value.message
    assert "qjs-wasi-reactor.wasm==0.17.0" in caught.value.message


@pytest.mark.parametrize("version", ["0.15.9", "0.10.1", "0.16.0rc1", "0.16", "latest", ""])
def test_a_reactor_older_than_0_16_or_of_no_release_version_is_refused(version: str) -> None:
    with pytest.raises(RuntimeUnavailableError) as caught:
        _reactor.check_version(version)
    assert caught.value.message == (
        f"qjs-wasi-reactor.wasm {version!r} is older than 0.16.0 (or not a release version): "
        "QuickJS-NG before 0.16.0 has heap overflows on 32-bit hosts, and wasm32 is one. "
        "Install the pinned build: pip install 'qjs-wasi-reactor.wasm==0.17.0'"
    )


@pytest.mark.parametrize("version", ["0.16.0", "0.17.0", "0.17.0.post1", "1.0.0+local"])
def test_a_reactor_from_0_16_on_passes_the_floor(version: str) -> None:
    _reactor.check_version(version)


def test_the_installed_reactor_is_checked_against_the_floor_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata

    real = importlib.metadata.distribution("qjs-wasi-reactor.wasm")

    class Old:
        version = "0.15.0"
        files = real.files

        def locate_file(self, file: object) -> object:
            raise AssertionError("an old reactor's file is never read")

    def distribution(name: str) -> Old:
        return Old()

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(RuntimeUnavailableError, match=r"'0\.15\.0' is older than 0\.16\.0"):
        _reactor._locate()  # pyright: ignore[reportPrivateUsage]
    _reactor.check_version(_reactor.WASM_VERSION)  # the pinned build is above the floor


def test_patching_refuses_functions_missing_from_the_name_section() -> None:
    wasm = _reactor.load_verified_wasm()
    with pytest.raises(RuntimeUnavailableError) as caught:
        _reactor.patch_exports(wasm, ["JS_Eval", "JS_NoSuchFunction"])
    assert "['JS_NoSuchFunction']" in caught.value.message


def test_patching_refuses_bytes_that_are_not_a_wasm_module() -> None:
    with pytest.raises(RuntimeUnavailableError, match=r"not a WebAssembly 1\.0 binary module"):
        _reactor.patch_exports(b"\x7fELF\x02\x01\x01\x00", ["JS_Eval"])


def test_the_patched_module_exports_the_c_api_with_the_expected_signatures() -> None:
    # Read with wasmtime-py's own classes, from the engine cache our bindings serialized
    # (an engine configured as ours, or the file is refused).
    reactor = compiled_reactor()
    cache = _cache_path()
    assert cache is not None and os.path.exists(cache)
    config = wasmtime.Config()
    config.epoch_interruption = True
    config.max_wasm_stack = MAX_WASM_STACK
    config.memory_reservation = MEMORY_RESERVATION
    config.memory_reservation_for_growth = 0
    config.cranelift_opt_level = "speed"
    module = wasmtime.Module.deserialize_file(wasmtime.Engine(config), str(cache))
    assert reactor.module.ptr
    exports = {e.name: e.type for e in module.exports}
    for name in EXPORTED_FUNCTIONS:
        ty = exports[name]
        assert isinstance(ty, wasmtime.FuncType), name
        params = tuple(str(p) for p in ty.params)
        results = tuple(str(r) for r in ty.results)
        assert (params, results) == SIGNATURES[name], name
    table = exports[_reactor.TABLE_EXPORT]
    assert isinstance(table, wasmtime.TableType)
    assert table.limits.max is None  # host callbacks can be added
    assert isinstance(exports[_reactor.STACK_POINTER_EXPORT], wasmtime.GlobalType)


# -- the compiled-module cache --------------------------------------------------------------

_FIRST_CELL = (
    "import asyncio, clawcell\n"
    "async def main():\n"
    "    async with clawcell.CodeMode() as mode:\n"
    "        print((await mode.exec('return 6 * 7'))['value'])\n"
    "asyncio.run(main())\n"
)


def _new_process(cache: Path) -> tuple[str, str]:
    """A first cell in a new process: its stdout, and what it said on stderr."""
    env = {**os.environ, "CLAWCELL_CACHE_DIR": str(cache)}
    env.pop("CLAWCELL_NO_MODULE_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CELL],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), done.stderr


def _compiling(cache: Path) -> str:
    return (
        f"clawcell: compiling the JavaScript engine once into {cache} "
        "(a few seconds; later starts reuse it)\n"
    )


@pytest.mark.slow
def test_a_new_process_loads_the_compiled_module_from_the_cache(tmp_path: Path) -> None:
    assert _new_process(tmp_path) == ("42", _compiling(tmp_path))
    [cached] = tmp_path.glob("qjs-*.cwasm")
    written = cached.stat().st_mtime_ns
    assert _new_process(tmp_path) == ("42", "")
    assert cached.stat().st_mtime_ns == written  # read, not rewritten


@pytest.mark.slow
def test_a_corrupt_cache_file_is_recompiled_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file a new process would read, found without compiling the engine for it first
    # (the test above shows that a first process writes exactly one such file).
    monkeypatch.delenv("CLAWCELL_NO_MODULE_CACHE", raising=False)
    monkeypatch.setenv("CLAWCELL_CACHE_DIR", str(tmp_path))
    cache_file = _cache_path()
    assert cache_file is not None
    cached = Path(cache_file)
    assert cached.parent == tmp_path and cached.suffix == ".cwasm"
    cached.write_bytes(b"not a compiled module")
    assert _new_process(tmp_path) == ("42", _compiling(tmp_path))
    assert cached.read_bytes() != b"not a compiled module"


@pytest.mark.slow
def test_an_unwritable_cache_says_every_start_compiles_and_what_to_set(tmp_path: Path) -> None:
    # A directory under a regular file cannot be made, whoever runs the test (root included).
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    cache = blocker / "cache"
    expected = (
        f"clawcell: compiling the JavaScript engine (a few seconds); {cache} is not writable, "
        "so every start compiles it again: set CLAWCELL_CACHE_DIR to a writable directory\n"
    )
    assert _new_process(cache) == ("42", expected)
    assert _new_process(cache) == ("42", expected)  # said again: it did compile again


@pytest.mark.slow
def test_files_of_other_builds_are_kept_up_to_three_newest(tmp_path: Path) -> None:
    # Other environments on the machine (another wasmtime) use these; removing them made two
    # environments recompile each other's file on every start.
    others = [tmp_path / f"qjs-0000000000000000-p5-w{n}.cwasm" for n in range(5)]
    for age, other in enumerate(others):
        other.write_bytes(b"another build")
        os.utime(other, (1_000_000 + age, 1_000_000 + age))
    assert _new_process(tmp_path) == ("42", _compiling(tmp_path))
    kept = sorted(path.name for path in tmp_path.glob("qjs-*.cwasm"))
    assert len(kept) == 4  # this build's file and the three newest others
    assert {other.name for other in others[2:]} <= set(kept)


@pytest.mark.slow
def test_without_a_cache_nothing_is_announced(tmp_path: Path) -> None:
    environment = {**os.environ, "CLAWCELL_NO_MODULE_CACHE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CELL],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")


# -- one guest --------------------------------------------------------------------------


def test_reset_restores_the_pristine_image() -> None:
    g = guest()
    assert evaluate(g, "globalThis.kept = 1, Object.prototype.x = 2, typeof kept") == "number"
    g.reset()
    assert evaluate(g, "[typeof kept, typeof ({}).x]") == "undefined,undefined"


def test_the_interrupt_handler_stops_a_busy_loop_uncatchably() -> None:
    g = guest()
    g.deadline = time.monotonic() - 1
    with pytest.raises(JSException) as caught:
        g.instance.eval("try { while (true) {} } catch (e) { 'caught' }")
    assert caught.value.text == "InternalError: interrupted"
    g.deadline = float("inf")
    assert evaluate(g, "1 + 1") == "2"


def test_the_epoch_backstop_traps_a_long_native_operation() -> None:
    g = guest(256 * 1024 * 1024)
    # The interrupt handler never fires (no deadline): only the backstop can stop the sort.
    with pytest.raises(GuestTrap, match="interrupt"), backstop(g.instance, time.monotonic() + 0.3):
        g.instance.eval(SORT)
    g.reset()
    assert evaluate(g, "'alive'") == "alive"


def test_the_memory_limit_gives_a_catchable_out_of_memory_error() -> None:
    g = guest(8 * 1024 * 1024)
    code = (
        "const a = [];\n"
        "try { for (;;) a.push(new Array(1e4).fill(1)); } catch (e) { a.length = 0; String(e) }"
    )
    assert g.instance.take_string(g.instance.eval(code)) == "InternalError: out of memory"


@pytest.mark.parametrize(
    "source",
    [
        "''",
        "'ascii'",
        "'café'",
        "'中🦞'",
        "'lone \\udc00 end'",
        "'x'.repeat(70000)",
        "['a', 'b'].join('/') + 'é'.repeat(3)",
        "String.fromCharCode(0, 255, 256)",
    ],
)
def test_the_raw_string_reader_agrees_with_quickjs(source: str) -> None:
    g = guest()
    inst = g.instance
    assert inst.raw_strings is True  # verified at load
    raw = inst.take_string(inst.eval(source))
    inst.raw_strings = False
    assert raw == inst.take_string(inst.eval(source))


def test_concurrent_cells_get_independent_guests() -> None:
    # Each cell stays alive across a timer, so the pool hands out a guest per cell: the
    # first built from scratch, the others copied from its pristine image.
    cells = [
        f"globalThis.mine = '{name}'; await new Promise((r) => setTimeout(r, 20)); return mine;"
        for name in "abc"
    ]

    async def main() -> list[Any]:
        async with CodeMode(limits=Limits(timeout_ms=2000)) as mode:
            envelopes = await asyncio.gather(*(mode.exec(code) for code in cells))
        return [envelope.get("value") for envelope in envelopes]

    assert asyncio.run(main()) == ["a", "b", "c"]


def test_a_guest_cloned_from_the_template_has_working_host_callbacks() -> None:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    template, clone = pool.acquire(), pool.acquire()
    assert clone is not template
    clone.deadline = time.monotonic() + 0.1
    # A broken interrupt handler traps at the backstop, never hangs.
    with (
        pytest.raises(JSException, match="interrupted"),
        backstop(clone.instance, time.monotonic() + 2),
    ):
        clone.start_turn(clone.compile("while (true) {}"))
    clone.reset()
    clone.deadline = time.monotonic() + 5
    code = "const x = 1;\nvoid Promise.reject(new Error('lost')); return 2;"
    report = clone.start_turn(clone.compile(code))
    assert (report.state, report.value_json) == (1, "2")
    unhandled = clone.unhandled_rejection()
    assert unhandled is not None
    assert unhandled.splitlines()[0] == "Error: lost"


# Python 3.12+ warns about forking a threaded process; forking is the point of this test.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_runs_cells_with_its_own_engine_threads() -> None:
    # Pre-forking servers create the runtime in the parent: the child inherits no threads
    # (watchdog, guest worker), so it must build its own instead of waiting on dead ones.
    mode = CodeMode(limits=Limits(timeout_ms=300))
    assert asyncio.run(mode.exec("return 1"))["value"] == 1

    def child() -> bytes:
        done = asyncio.run(mode.exec("return 40 + 2"))["value"] == 42
        busy = asyncio.run(mode.exec("while (true) {}"))["code"] == "timeout"
        return b"ok" if done and busy else b"bad"

    assert in_forked_child(child) == b"ok"


class _Counted:
    """A fast export that records its name on each call."""

    def __init__(self, name: str, inner: Any, calls: list[str]) -> None:
        self.name, self.inner, self.calls = name, inner, calls

    def __call__(self, *args: int) -> int:
        self.calls.append(self.name)
        return self.inner(*args)


def _counting(g: Guest) -> list[str]:
    calls: list[str] = []
    exports = g.instance._f  # pyright: ignore[reportPrivateUsage]
    for name, inner in list(exports.items()):
        exports[name] = _Counted(name, inner, calls)  # pyright: ignore[reportArgumentType]
    return calls


@pytest.mark.parametrize(
    ("code", "state", "value"),
    [
        ("return 6 * 7;", 1, "42"),
        ("await Promise.resolve(); return 'after a job';", 1, '"after a job"'),
    ],
)
def test_a_cells_first_leg_is_three_crossings(code: str, state: int, value: str | None) -> None:
    """Parse (one `JS_Eval`, the source staged without a guest malloc), then start, jobs and
    step in one `clawcell_start`, then the report string freed. (A cell that throws adds the
    rejection tracker's own calls, which are not the leg's.)"""
    g = guest()
    calls = _counting(g)
    script = g.parse_cell(code, time.monotonic() + 30)
    assert isinstance(script, int)
    report = g.run_segment(script, None, time.monotonic() + 30)
    assert not isinstance(report, EngineFailure)
    assert report.state == state
    if value is not None:
        assert report.value_json == value
    assert calls == ["JS_Eval", "clawcell_start", "JS_FreeValue"]


def test_a_script_that_throws_when_run_reports_its_exception_from_clawcell_start() -> None:
    """Code closing the cell's wrapper early runs (and throws) in `JS_EvalFunction`, inside
    `clawcell_start`: the exception is left pending, and the leg fails with it."""
    g = guest()
    script = g.parse_cell(
        "}); throw new RangeError('early'); (async () => {", time.monotonic() + 30
    )
    assert isinstance(script, int)
    failure = g.run_segment(script, None, time.monotonic() + 30)
    assert isinstance(failure, EngineFailure)
    assert "RangeError: early" in failure.message
    # The guest is usable afterwards.
    g.reset()
    script = g.parse_cell("return 1;", time.monotonic() + 30)
    assert isinstance(script, int)
    report = g.run_segment(script, None, time.monotonic() + 30)
    assert not isinstance(report, EngineFailure) and report.value_json == "1"


def test_a_long_source_is_compiled_from_a_guest_allocation() -> None:
    """A source larger than the staging buffer still parses and runs (malloc'd, then freed)."""
    g = guest()
    code = "const s = '" + "x" * 100_000 + "';\nreturn s.length;"
    script = g.parse_cell(code, time.monotonic() + 30)
    assert isinstance(script, int)
    report = g.run_segment(script, None, time.monotonic() + 30)
    assert not isinstance(report, EngineFailure) and report.value_json == "100000"


def test_a_first_segment_refuses_a_batch_to_settle() -> None:
    g = guest()
    script = g.parse_cell("return 1;", time.monotonic() + 30)
    assert isinstance(script, int)
    with pytest.raises(ValueError, match=r"settles no batch \(got '\[\]'\): settle it"):
        g.run_segment(script, "[]", time.monotonic() + 30)


def test_the_raw_string_reader_follows_the_memory_as_it_grows() -> None:
    # The reader keeps a view of the memory as far as it had grown: a string placed past
    # that, once the memory grew, is read from a longer view, not cut short.
    inst = guest().instance
    assert inst.take_string(inst.eval("'small'")) == "small"
    before = inst.memory.size
    text = inst.take_string(inst.eval("globalThis.big = 'é'.repeat(3000000) + 'z'; big"))
    assert inst.memory.size > before
    assert len(text) == 3000001 and text.endswith("éz")
    inst.raw_strings = False
    assert text == inst.take_string(inst.eval("big"))
