"""The V8 executor: Deno worker processes with no permissions, one fresh context per cell.

The same cells behave as on QuickJS (guest API, tool calls, output, errors); deadlines kill
the worker and a warm spare takes its place; a heap flood ends the worker, not the host; a
parked cell continues live in its worker but never claims to survive a restart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, ConfigurationError, Limits, SnapshotError, Tool
from clawcell.cli import load_settings
from clawcell.runtime import (
    EngineFailure,
    GuestConfig,
    V8Executor,
    bwrap_binary,
    executor_named,
    pid_guard,
)
from clawcell.runtime._v8._process import WORKER_SCRIPT, worker_argv
from clawcell.store import SQLiteStore
from tests.conftest import FAST, echo_tool, run

CONFIG = GuestConfig(
    memory_limit_bytes=64 * 1024 * 1024, install_config='{"maxPending":16,"bindings":[]}'
)


async def _slow(tool_input: dict[str, Any]) -> Any:
    await asyncio.sleep(float(tool_input.get("s", 0.05)))
    return {"slept": True}


def _tools() -> list[Tool]:
    return [echo_tool(), Tool(name="slow", execute=_slow)]


def _cells(codes: list[str], *, limits: Limits | None = None) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        async with CodeMode(_tools(), executor="v8", limits=limits or Limits()) as mode:
            return [await mode.exec(code) for code in codes]

    return run(main())


def test_a_cell_returns_its_value_and_output_as_on_quickjs() -> None:
    code = "text('hi'); json({ a: 1 }); console.log('log', 2); return { n: [1, 2] };"
    [v8] = _cells([code])

    async def quickjs() -> dict[str, Any]:
        async with CodeMode(_tools()) as mode:
            return await mode.exec(code)

    expected = run(quickjs())
    for key in ("status", "output", "value"):
        assert v8[key] == expected[key]


def test_tool_calls_sequential_and_batched_reach_the_host() -> None:
    sequential, batched = _cells(
        [
            "let s = 0; for (let i = 0; i < 50; i++) s += (await echo({ i })).i; return s;",
            "const r = await Promise.all([1, 2, 3].map((i) => echo({ i }))); return r;",
        ]
    )
    assert sequential["value"] == sum(range(50))
    assert sequential["telemetry"]["callCount"] == 50
    assert batched["value"] == [{"i": 1}, {"i": 2}, {"i": 3}]


def test_a_thrown_error_reads_as_a_v8_error_with_user_frames() -> None:
    [envelope] = _cells(["const x = 1;\nthrow new TypeError('bad ' + x);"])
    assert envelope["status"] == "failed"
    assert envelope["code"] == "internal_error"
    assert envelope["error"].startswith("TypeError: bad 1\n    at ")
    assert "openclaw-code-mode:user.js:2:" in envelope["error"]


def test_a_syntax_error_is_an_input_failure() -> None:
    [envelope] = _cells(["return )"])
    assert (envelope["code"], envelope["failurePhase"]) == ("invalid_input", "input")


def test_globals_and_prototypes_do_not_leak_into_the_next_cell() -> None:
    polluted, probe = _cells(
        [
            "Object.prototype.leak = 1; globalThis.mine = 2; Array.prototype.map = null; return 1;",
            "return [({}).leak, typeof mine, typeof [].map, typeof Deno, typeof process];",
        ]
    )
    assert polluted["status"] == "completed"
    assert probe["value"] == [None, "undefined", "function", "undefined", "undefined"]


def test_a_busy_loop_times_out_and_the_next_cell_runs() -> None:
    busy, after = _cells(["while (true) {}", "return 'next'"], limits=FAST)
    assert (busy["status"], busy["code"]) == ("failed", "timeout")
    assert after["value"] == "next"


def test_an_endless_microtask_chain_times_out() -> None:
    code = "const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});"
    busy, after = _cells([code, "return 2"], limits=FAST)
    assert busy["code"] == "timeout"
    assert after["value"] == 2


def test_a_heap_flood_fails_the_cell_not_the_host() -> None:
    flood = "const a = []; for (;;) a.push({ x: 'y'.repeat(64) + a.length });"
    limits = Limits(timeout_ms=30_000, memory_limit_bytes=16 * 1024 * 1024)
    flooded, after = _cells([flood, "return 3"], limits=limits)
    assert flooded["status"] == "failed"
    assert flooded["code"] == "internal_error"
    assert flooded["error"] == "InternalError: out of memory"
    assert after["value"] == 3


def test_an_unhandled_rejection_fails_a_completed_cell() -> None:
    [envelope] = _cells(["Promise.reject(new Error('lost')); return 1;"])
    assert envelope["status"] == "failed"
    assert envelope["error"].startswith("Error: lost")


def test_a_parked_cell_continues_live_and_never_claims_replay_safety() -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with CodeMode(_tools(), executor="v8") as mode:
            parked = await mode.call_tool(
                "exec",
                {
                    "code": "const a = 41; await yield_control('x'); return a + 1;",
                    "restartSafe": True,
                },
            )
            return parked, await mode.wait(parked["runId"])

    parked, done = run(main())
    assert parked["status"] == "waiting"
    assert parked["replaySafe"] is False
    assert done["value"] == 42


def test_a_durable_park_continues_in_its_process_and_is_refused_elsewhere(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    code = "await yield_control(); return 'here';"

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with CodeMode([], store=SQLiteStore(db), executor="v8") as mode:
            first = await mode.exec(code)
            same = await mode.wait(first["runId"])
            second = await mode.exec(code)
        async with CodeMode([], store=SQLiteStore(db), executor="v8") as other:
            with pytest.raises(SnapshotError, match="V8 executor"):
                await other.wait(second["runId"])
        return first, same, second

    first, same, second = run(main())
    assert first["status"] == second["status"] == "waiting"
    assert first["replaySafe"] is False
    assert same["value"] == "here"


def test_the_worker_has_no_permissions_and_runs_in_the_sandbox_when_it_can() -> None:
    argv = worker_argv("/opt/deno", 96, sandbox=True)
    assert not [arg for arg in argv if arg.startswith("--allow")]
    assert "--v8-flags=--max-old-space-size=96" in argv
    bwrap = bwrap_binary()
    if bwrap is not None:
        # bubblewrap is PID 1 of a PID namespace of its own when `unshare` can make one
        guard = list(pid_guard(bwrap))
        assert argv[: len(guard) + 1] == [*guard, bwrap]
        assert "--unshare-all" in argv
        assert "--clearenv" in argv
        binds = [argv[i + 1] for i, arg in enumerate(argv) if arg in ("--bind", "--ro-bind")]
        assert str(WORKER_SCRIPT) in binds
        assert "--bind" not in argv  # nothing of the host is writable
    assert worker_argv("/opt/deno", 96, sandbox=False)[0] == "/opt/deno"


def test_a_killed_worker_is_replaced_and_never_handed_out_again() -> None:
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        guest.stop()
        executor.release(guest)
        fresh = executor.acquire(CONFIG)
        assert fresh is not guest
        assert not guest.alive
        assert fresh.parse_cell("return 1", deadline=_far()) == 1
        executor.release(fresh)
    finally:
        executor.close()


def test_a_v8_snapshot_is_a_marker_that_restore_refuses() -> None:
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        assert guest.snapshots is False
        with pytest.raises(SnapshotError, match="cannot be continued after a restart"):
            guest.restore(guest.snapshot())
        executor.release(guest)
    finally:
        executor.close()


def test_executor_names_are_checked() -> None:
    assert isinstance(executor_named("v8"), V8Executor)
    assert executor_named("node") is None
    with pytest.raises(ConfigurationError, match="'quickjs', 'v8'"):
        CodeMode([], executor="node")  # pyright: ignore[reportArgumentType]


def test_the_config_file_selects_the_executor_in_limits(tmp_path: Path) -> None:
    path = tmp_path / "clawcell.toml"
    path.write_text('[limits]\ntimeoutMs = 4000\nexecutor = "v8"\n', "utf-8")
    settings = load_settings(path)
    assert settings.limits == {"timeoutMs": 4000, "executor": "v8"}
    assert isinstance(settings.options(None).executor, V8Executor)
    path.write_text('[limits]\nexecutor = "node"\n', "utf-8")
    with pytest.raises(ConfigurationError, match="limit 'executor' must be one of 'quickjs'"):
        load_settings(path)


def _far() -> float:
    import time

    return time.monotonic() + 60


# -- memory outside the heap: the worker's guard and the host's watchdog --------------------

OOM = "InternalError: out of memory"
SMALL = Limits(timeout_ms=30_000, memory_limit_bytes=16 * 1024 * 1024)


def test_a_2_gib_array_buffer_is_refused_catchably_and_the_worker_goes_on() -> None:
    refused, caught, after = _cells(
        [
            "new ArrayBuffer(2 ** 31);",
            "try { new Uint8Array(2 ** 30); } catch (e) { return [String(e), e.name, "
            "e instanceof Error]; }",
            "return new Uint8Array(1 << 20).length;",
        ],
        limits=SMALL,
    )
    assert refused["error"].startswith(OOM + "\n    at ")
    assert "openclaw-code-mode:user.js:1:" in refused["error"]
    assert "clawcell:memory.js" not in refused["error"]  # the guard's frames are hidden
    assert caught["value"] == [OOM, "InternalError", True]
    assert after["value"] == 1 << 20


def test_every_way_to_allocate_a_buffer_is_counted() -> None:
    keep = "const k = [];\nfor (;;) k.push({});"
    ways = {
        "typed arrays": "new Float64Array(1 << 20)",
        "array buffers": "new ArrayBuffer(8 << 20)",
        "shared buffers": "new SharedArrayBuffer(8 << 20)",
        "a subclass": "new (class extends Uint8Array {})(8 << 20)",
        "Reflect.construct": "Reflect.construct(Int32Array, [2 << 20])",
        "the prototype's constructor": "new (Object.getPrototypeOf(new Uint8Array(1))"
        ".constructor)(8 << 20)",
        "slice without a constructor": "Object.assign(new Uint8Array(8 << 20), "
        "{ constructor: undefined }).slice()",
        "a species of undefined": "new (class extends ArrayBuffer { static get "
        "[Symbol.species]() { return undefined; } })(8 << 20).slice(0)",
        "map": "new Float64Array(1 << 20).map((x) => x)",
        "toReversed": "new Uint8Array(8 << 20).toReversed()",
        "fromHex": "Uint8Array.fromHex('ab'.repeat(4 << 20))",
    }
    cells = [keep.replace("{}", way) for way in ways.values()]
    for name, envelope in zip(ways, _cells([*cells, "return 'next'"], limits=SMALL), strict=False):
        assert envelope["error"].startswith(OOM), (name, envelope)
    assert _cells(["return 'next'"], limits=SMALL)[0]["value"] == "next"


def test_growing_buffers_is_counted() -> None:
    grow = [
        "const b = new ArrayBuffer(1, { maxByteLength: 2 ** 31 });\n"
        "for (let n = 1; ; n *= 2) b.resize(Math.min(n << 20, 2 ** 31));",
        "const s = new SharedArrayBuffer(1, { maxByteLength: 2 ** 31 });\n"
        "for (let n = 1; ; n *= 2) s.grow(Math.min(n << 20, 2 ** 31));",
        "let b = new ArrayBuffer(1);\nfor (let n = 1; ; n *= 2) b = b.transfer(n << 20);",
    ]
    for envelope in _cells(grow, limits=SMALL):
        assert envelope["error"].startswith(OOM), envelope


def test_a_cell_that_tampers_with_the_intrinsics_still_meets_the_limit() -> None:
    code = (
        "Object.defineProperty(Object.prototype, 'construct', { get() { throw 1; } });\n"
        "Reflect.apply = Reflect.construct = () => ({});\nFunction.prototype.apply = null;\n"
        "Function.prototype.call = null;\nObject.defineProperty = null;\n"
        "Error.captureStackTrace = () => {};\nArray.prototype[Symbol.iterator] = null;\n"
        "Object.getOwnPropertyDescriptor = () => ({ get() { return 0; } });\n"
        "Uint8Array.prototype.constructor = undefined;\n"
        "const k = [];\nfor (;;) k.push(new Uint8Array(8 << 20).slice());"
    )
    tampered, after = _cells([code, "return new Uint8Array(4 << 20).length;"], limits=SMALL)
    assert tampered["error"].startswith(OOM), tampered
    assert after["value"] == 4 << 20


def test_the_guarded_constructors_behave_as_the_engine_s_own() -> None:
    code = (
        "class Sub extends Uint8Array {}\nconst a = new Uint8Array([1, 2, 3]);\n"
        "const view = new Uint8Array(a.buffer, 1);\n"
        "return [Uint8Array.name, Uint8Array.length, a instanceof Uint8Array,\n"
        "  a.constructor === Uint8Array, new Sub(2) instanceof Uint8Array,\n"
        "  Array.from(Uint8Array.from([4, 5])), Array.from(a.slice(1)), view.buffer === a.buffer,\n"
        "  ArrayBuffer.isView(view), typeof gc, a.buffer.constructor === ArrayBuffer,\n"
        "  Array.from(a.map((x) => x * 2)), a.slice.name, a.slice.length];"
    )
    [envelope] = _cells([code])
    assert envelope["value"] == [
        "Uint8Array", 3, True, True, True, [4, 5], [2, 3], True, True, "undefined", True,
        [2, 4, 6], "slice", 2,
    ]  # fmt: skip


def test_buffers_are_counted_live_and_shared_buffers_per_cell() -> None:
    churn = (
        "let s = 0;\nfor (let i = 0; i < 40; i++) { const b = new Uint8Array(4 << 20); "
        "b[1] = 1; s += b[1]; }\nreturn s;"
    )
    shared = "const s = new SharedArrayBuffer(12 << 20);\nreturn s.byteLength;"
    done = _cells([churn, shared, shared], limits=SMALL)
    assert [envelope.get("value") for envelope in done] == [40, 12 << 20, 12 << 20]


def test_a_flood_past_the_guard_is_killed_by_the_watchdog_and_the_worker_replaced() -> None:
    executor = V8Executor(spares=0)
    small = GuestConfig(memory_limit_bytes=16 * 1024 * 1024, install_config=CONFIG.install_config)
    # An array-like is written element by element before the guard sees the new buffer. On
    # a loaded machine the watchdog's samples may come late and the guard refuse the finished
    # buffer first (an out-of-memory error the cell could catch, its worker kept): then the
    # flood is tried again, up to eight times, and one of them must be the watchdog's kill
    # (three were not enough once on a faster host, stop 49).
    code = "const a = new Float64Array({ length: 2 ** 26 });\nreturn a.length;"
    try:
        for _ in range(8):
            guest = executor.acquire(small)
            assert guest.parse_cell(code, deadline=_far()) == 1
            outcome = guest.run_segment(1, None, deadline=_far())
            if not isinstance(outcome, EngineFailure):  # the guard's refusal
                assert outcome.error is not None and outcome.error.startswith(OOM), outcome
                executor.release(guest)
                continue
            assert outcome.kind == "out_of_memory"
            assert "(watchdog)" in outcome.message
            assert guest.interrupted and not guest.alive
            executor.release(guest)
            fresh = executor.acquire(small)
            assert fresh is not guest
            assert fresh.parse_cell("return 1", deadline=_far()) == 1
            executor.release(fresh)
            return
        pytest.fail("the guard refused the flood eight times: the watchdog never had to kill it")
    finally:
        executor.close()


def test_the_watchdog_failure_reads_as_out_of_memory() -> None:
    code = "const a = new Float64Array({ length: 2 ** 26 });\nreturn a.length;"
    flooded, after = _cells([code, "return 'next'"], limits=SMALL)
    # The watchdog's kill reads as the bare error; on a loaded machine its samples may come
    # late and the guard refuse the finished buffer first (catchable, with the cell's frame).
    assert flooded["code"] == "internal_error"
    assert flooded["error"] == OOM or flooded["error"].startswith(OOM + "\n    at ")
    assert after["value"] == "next"


def test_errors_through_the_guard_show_the_cell_s_frames_only() -> None:
    bad_length, own_error = _cells(
        [
            "new Uint8Array(-1);",
            "new Uint8Array({ length: { valueOf() { throw new Error('mine'); } } });",
        ]
    )
    assert bad_length["error"].startswith("RangeError: Invalid typed array length: -1\n    at ")
    assert own_error["error"].startswith("Error: mine\n    at Object.valueOf (openclaw-code")
    for envelope in (bad_length, own_error):
        assert "clawcell:memory.js" not in envelope["error"]
        assert envelope["error"].endswith("(openclaw-code-mode:user.js:1:1)\n")
