"""Hostile cells: each ends in the right envelope, the host survives, and the next cell on the
same guests runs normally without any trace of the previous cell.

The probe cells run in a `CodeMode` of their own beside the case's, on one executor: same
tools, same limits but a roomy budget (the budget is no part of a guest's configuration), so
one pool of guests, and the probe after the case gets the guest the hostile cell ran on (or a
new one, when the case's guest was discarded). Only the hostile cell has the
case's tight budget; a probe sharing it failed on a loaded machine (load 18+), for the clock's
reasons, not the cell's. (A per-`exec` budget on `CodeMode` would have done it in one runtime;
it is not public API: a run's budget would then have to travel with its parked legs.)"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import QuickJSExecutor, V8Executor
from tests.conftest import FAST, echo_tool, failure, run, with_mode

TIMEOUT = "code mode timeout exceeded"
STACK = "RangeError: Maximum call stack size exceeded"
OOM = "InternalError: out of memory"
MODULES = "code mode module access is disabled."
STUCK = "code mode promise is pending without host work"
BIG = Limits(timeout_ms=250, memory_limit_bytes=256 * 1024 * 1024)
# Memory cases must end by OOM, never by the clock: 30 s is a hang guard only (at a load of
# 20 on two cores, four of them passed the old 3 s budget before reaching OOM).
ROOMY = Limits(timeout_ms=30_000)
PROBE_LIMITS = Limits(timeout_ms=30_000)  # V8 probes (see `_run_v8`)

# What a fresh cell sees: global names and the own properties (with their kinds) of the
# prototypes and intrinsics a hostile cell might replace, plus frozen/extensible flags.
PROBE = r"""
const shape = (o) => Object.getOwnPropertyNames(o).sort().map((k) => {
  const d = Object.getOwnPropertyDescriptor(o, k);
  const v = d.value;
  const kind = "value" in d ? (typeof v === "function" ? "fn:" + v.name + ":"
    + /\[native code\]/.test(Function.prototype.toString.call(v)) : typeof v) : "accessor";
  return k + "=" + kind;
}).join(",");
const fingerprint = {
  globals: Object.getOwnPropertyNames(globalThis).sort().join(","),
  object: shape(Object.prototype), array: shape(Array.prototype),
  fn: shape(Function.prototype), promise: shape(Promise.prototype), json: shape(JSON),
  string: shape(String.prototype), iterator: String(Array.prototype[Symbol.iterator]),
  frozen: [Object.isFrozen(Object.prototype), Object.isExtensible(Array.prototype)],
  leak: typeof globalThis.__leak,
};
text("probe");
console.log("probe", [1, { a: 2 }]);
const echoed = await echo({ n: 1, list: [1, 2] });
await new Promise((resolve) => setTimeout(resolve, 1));
return { fingerprint, echoed, list: [1, { b: [2] }] };
"""


@dataclass(frozen=True)
class Hostile:
    code: str
    status: str = "failed"
    code_: str | None = None  # the envelope's failure `code`
    phase: str = "guest"
    error: str | None = None  # exact error, or a regex when `error_re`
    error_re: bool = False
    value: Any = None
    output: list[Any] = field(default_factory=list[Any])
    limits: Limits = FAST


def fails(code: str, failure_code: str, error: str, **kw: Any) -> Hostile:
    return Hostile(code, code_=failure_code, error=error, **kw)


def completes(code: str, value: Any, **kw: Any) -> Hostile:
    return Hostile(code, status="completed", value=value, **kw)


def located(message: str) -> str:
    """A regex for `message` followed by frames ending at a user frame
    (`openclaw-code-mode:user.js:L:C`); native frames such as `at ArrayBuffer (native)` may
    come between, as in the release."""
    frame = r"    at [^\n]+ \(openclaw-code-mode:user\.js:\d+:\d+\)\n"
    native = r"    at [^\n]+ \(native\)\n"
    return re.escape(message) + rf"\n({native}|{frame})*{frame}"


CASES: dict[str, Hostile] = {
    # -- runaway computation --------------------------------------------------------------
    "busy_loop": fails("globalThis.__leak = 1; while (true) {}", "timeout", TIMEOUT),
    "caught_busy_loop": fails(
        "try { while (1) {} } catch {}\nreturn 'escaped';", "timeout", TIMEOUT
    ),
    "busy_loop_with_finally": fails(
        "try { while (1) {} } finally { return 'escaped'; }", "timeout", TIMEOUT
    ),
    "busy_loop_after_a_tool_call": fails(
        "await echo({});\nwhile (true) {}", "timeout", TIMEOUT, phase="bridge"
    ),
    "busy_loop_in_a_timer": fails(
        "setTimeout(() => { while (true) {} }, 0);\nawait new Promise(() => {});",
        "timeout",
        TIMEOUT,
    ),
    # Building takes ~0.2 s, the native sort ~2.7 s: only the epoch backstop can stop it.
    "native_sort_of_3e6_strings": fails(
        "const a = 'abcdefghij'.repeat(3e5).split('');\na.sort();\nreturn a.length;",
        "timeout",
        TIMEOUT,
        limits=BIG,
    ),
    # -- memory -----------------------------------------------------------------------------
    "array_buffer_of_2_gib": fails(
        "new ArrayBuffer(2 ** 31);",
        "internal_error",
        located("RangeError: invalid array buffer length"),
        error_re=True,
    ),
    "array_of_2_gib_filled": fails(
        "new Array(2 ** 31 - 1).fill(0);",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "string_doubling": fails(
        "let s = 'x';\nwhile (true) s += s;",
        "internal_error",
        located("InternalError: string too long"),
        error_re=True,
    ),
    "push_loop": fails(
        "const a = [];\nwhile (true) a.push(new Array(1e5).fill(1));",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "out_of_memory_is_catchable": completes(
        "const a = [];\ntry { while (true) a.push(new Array(1e5).fill(1)); }\n"
        "catch (e) { a.length = 0; return String(e); }",
        OOM,
        limits=ROOMY,
    ),
    "returning_100_mb_under_the_default_limit": fails(
        "const s = 'x'.repeat(2 ** 20);\nreturn s.repeat(100);",
        "internal_error",
        located(OOM),
        error_re=True,
    ),
    # Buffers: backing stores live outside V8's heap; the V8 worker's memory guard and the
    # host's watchdog bound them (docs/executors.md, "Limits").
    "typed_arrays_of_64_mib_kept": fails(
        "const a = [];\nfor (;;) a.push(new Uint8Array(64 * 1024 * 1024));",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "array_buffer_flood_is_catchable": completes(
        "const a = [];\ntry { for (;;) a.push(new ArrayBuffer(8 << 20)); }\n"
        "catch (e) { a.length = 0; return String(e); }",
        OOM,
        limits=ROOMY,
    ),
    "dropped_buffers_do_not_count": completes(
        "let s = 0;\nfor (let i = 0; i < 100; i++) { const b = new Uint8Array(4 << 20); "
        "b[i] = 1; s += b[i]; }\nreturn s;",
        100,
        limits=ROOMY,
    ),
    "heap_and_buffers_share_the_limit": fails(
        "const held = new Array(5e6).fill(1.5);\nconst b = new ArrayBuffer(32 << 20);\n"
        "return held.length + b.byteLength;",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "heap_and_buffers_within_the_limit": completes(
        "const held = new Array(2e6).fill(1.5);\nconst b = new ArrayBuffer(32 << 20);\n"
        "return held.length + b.byteLength;",
        2_000_000 + (32 << 20),
        limits=ROOMY,
    ),
    "buffer_constructors_tampered": fails(
        "ArrayBuffer.prototype.constructor = undefined;\n"
        "Uint8Array.prototype.constructor = undefined;\nconst a = new Uint8Array(8 << 20);\n"
        "const k = [];\nfor (;;) k.push(a.slice(), a.buffer.slice(0));",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "shared_array_buffer_flood": fails(
        "const k = [];\nfor (;;) k.push(new SharedArrayBuffer(8 << 20));",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "resizable_buffer_grown_past_the_limit": fails(
        "const b = new ArrayBuffer(1, { maxByteLength: 2 ** 30 });\nb.resize(2 ** 30);",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "transferred_buffer_grown_past_the_limit": fails(
        "const k = [];\nlet b = new ArrayBuffer(8 << 20);\n"
        "for (;;) { b = b.transfer(b.byteLength + (8 << 20)); k.push(new Uint8Array(b)); }",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    # Filled element by element before any allocation check can see it: on V8 only the
    # host's watchdog stops it (see `_V8_OUTCOME`).
    "typed_array_of_a_huge_array_like": fails(
        "const a = new Float64Array({ length: 2 ** 26 });\nreturn a.length;",
        "internal_error",
        located(OOM),
        error_re=True,
        limits=ROOMY,
    ),
    "webassembly_memory_grow": fails(
        "const m = new WebAssembly.Memory({ initial: 1 });\nfor (;;) m.grow(1);",
        "internal_error",
        located("ReferenceError: WebAssembly is not defined"),
        error_re=True,
    ),
    # -- stack --------------------------------------------------------------------------
    "deep_recursion": fails(
        "function f() { return f() + 1; }\nreturn f();",
        "internal_error",
        located(STACK),
        error_re=True,
    ),
    "deep_json_parse": fails(
        "JSON.parse('['.repeat(1e5) + ']'.repeat(1e5));",
        "internal_error",
        located(STACK),
        error_re=True,
    ),
    # Deep stringify overflows the wasm stack before QuickJS's own check: a trap. Capturing
    # the trap's backtrace over a 2 MiB native stack takes wasmtime about 0.2 s, so these
    # cases get room to end by the trap, never by the clock.
    "deep_json_stringify": fails(
        "let o = [];\nfor (let i = 0; i < 1e5; i++) o = [o];\nreturn JSON.stringify(o).length;",
        "internal_error",
        STACK,
        limits=ROOMY,
    ),
    "deep_json_stringify_inside_try": fails(
        "let o = [];\nfor (let i = 0; i < 1e5; i++) o = [o];\n"
        "try { JSON.stringify(o); } catch { return 'caught'; }",
        "internal_error",
        STACK,
        limits=ROOMY,
    ),
    # -- weird throws ---------------------------------------------------------------------
    "throw_proxy_with_throwing_traps": fails(
        "throw new Proxy({}, { get() { throw new Error('trap'); } });",
        "internal_error",
        "[Unserializable]",
    ),
    "throw_revoked_proxy": fails(
        "const { proxy, revoke } = Proxy.revocable({}, {});\nrevoke();\nthrow proxy;",
        "internal_error",
        "[Unserializable]",
    ),
    "throw_symbol": fails("throw Symbol('s');", "internal_error", "Symbol(s)"),
    "throw_object_with_throwing_to_string": fails(
        "throw { toString() { throw 1; } };", "internal_error", "[object Object]"
    ),
    "throw_null": fails("throw null;", "internal_error", "null"),
    "throw_error_with_throwing_name": fails(
        "const e = new Error('m');\n"
        "Object.defineProperty(e, 'name', { get() { throw 1; } });\nthrow e;",
        "internal_error",
        r"Error(\n    at [^\n]+\n)*",
        error_re=True,
    ),
    # -- module access and ambient authority ---------------------------------------------
    "dynamic_import": fails(
        "const fs = await import('fs');", "invalid_input", MODULES, phase="input"
    ),
    "require": fails("return require('fs');", "invalid_input", MODULES, phase="input"),
    "process": fails("return process.env;", "invalid_input", MODULES),
    "no_ambient_capabilities": completes(
        "return [typeof WebAssembly, typeof fetch, typeof std, typeof os, typeof print,\n"
        "  typeof scriptArgs, typeof require, typeof module, typeof process, typeof tools,\n"
        "  typeof ALL_TOOLS, typeof XMLHttpRequest, typeof Deno, typeof Bun];",
        ["undefined"] * 14,
    ),
    "no_private_controller_names": completes(
        "const names = Object.getOwnPropertyNames(globalThis);\n"
        "return names.filter((n) => /^(_|install$|start$|step$|settle$|describeError$|"
        "request$|drain$|host)/i.test(n));",
        [],
    ),
    # -- forged protocol data --------------------------------------------------------------
    "protocol_shaped_strings_are_plain_data": completes(
        'const forged = \'{"s":1,"q":0,"v":"1","r":[["bridge:callValue:9","callValue",'
        '["echo",{}]]]}\';\n'
        "text(forged);\nconsole.log('\"]}', forged);\n"
        'const r = await echo({ batch: \'[["bridge:callValue:1",true,{"x":1}]]\' });\n'
        'return [r, \'"},"s":1,"v":"forged"\'];',
        [{"batch": '[["bridge:callValue:1",true,{"x":1}]]'}, '"},"s":1,"v":"forged"'],
        output=[
            {
                "type": "text",
                "text": '{"s":1,"q":0,"v":"1","r":[["bridge:callValue:9","callValue",'
                '["echo",{}]]]}',
            },
            {
                "type": "text",
                "text": '"]} {"s":1,"q":0,"v":"1","r":[["bridge:callValue:9","callValue",'
                '["echo",{}]]]}',
            },
        ],
    ),
    # -- pollution before tools and output -----------------------------------------------
    "object_prototype_to_json": completes(
        "Object.prototype.toJSON = () => 'polluted';\nglobalThis.__leak = 1;\n"
        "text({ a: 1 });\n"
        "const r = await echo(Object.assign(Object.create(null), { n: 1 }));\n"
        "return { r, nested: { list: [1] } };",
        {"r": {"n": 1}, "nested": {"list": [1]}},
        # Plain objects are projected into null-prototype copies: no inherited toJSON.
        output=[{"type": "text", "text": '{"a":1}'}],
    ),
    "array_prototype_to_json": completes(
        "Array.prototype.toJSON = () => 'forged';\ntext('t');\nconsole.log('c', [1]);\n"
        "const r = await echo({ n: 1 });\nreturn [r, [2]];",
        [{"n": 1}, [2]],
        output=[{"type": "text", "text": "t"}, {"type": "text", "text": "c [1]"}],
    ),
    "array_prototype_methods": completes(
        "for (const k of ['push', 'pop', 'shift', 'join', 'map', 'indexOf', 'splice'])\n"
        "  Array.prototype[k] = () => { throw new Error('hijacked ' + k); };\n"
        "Array.prototype[Symbol.iterator] = function* () { throw new Error('iter'); };\n"
        "text('t');\nconsole.log('c', { a: [1] });\n"
        "const r = await echo({ n: [1, 2] });\n"
        "await new Promise((resolve) => setTimeout(resolve, 1, 'x'));\nreturn r;",
        {"n": [1, 2]},
        output=[{"type": "text", "text": "t"}, {"type": "text", "text": 'c {"a":[1]}'}],
    ),
    "promise_prototype_then": completes(
        "Promise.prototype.then = function () { throw new Error('then hijacked'); };\n"
        "text('t');\nconst r = await echo({ n: 1 });\nreturn r;",
        {"n": 1},
        output=[{"type": "text", "text": "t"}],
    ),
    "json_methods": completes(
        "JSON.stringify = () => 'forged';\nJSON.parse = () => ({ forged: true });\n"
        "text({ k: 1 });\njson({ k: 2 });\nconst r = await echo({ n: 1 });\nreturn r;",
        {"n": 1},
        output=[{"type": "text", "text": '{"k":1}'}, {"type": "json", "value": {"k": 2}}],
    ),
    "function_prototype_call_apply_bind": completes(
        "Function.prototype.call = () => 'hijacked';\nFunction.prototype.apply = null;\n"
        "Function.prototype.bind = null;\nReflect.apply = null;\n"
        "text({ k: 1 });\nconst r = await echo({ n: 1 });\n"
        "await new Promise((resolve) => setTimeout(resolve, 1));\nreturn r;",
        {"n": 1},
        output=[{"type": "text", "text": '{"k":1}'}],
    ),
    "string_and_map_prototypes": completes(
        "for (const k of ['split', 'slice', 'replace', 'startsWith', 'charCodeAt'])\n"
        "  String.prototype[k] = () => { throw new Error('hijacked ' + k); };\n"
        "Map.prototype.get = Map.prototype.set = () => { throw new Error('map'); };\n"
        "text('t');\nconst r = await echo({ n: 1 });\nreturn r;",
        {"n": 1},
        output=[{"type": "text", "text": "t"}],
    ),
    "frozen_prototypes": completes(
        "Object.freeze(Object.prototype);\nObject.preventExtensions(Array.prototype);\n"
        "text('t');\nconst r = await echo({ n: 1 });\nreturn r;",
        {"n": 1},
        output=[{"type": "text", "text": "t"}],
    ),
    "redefined_output_api": completes(
        "const keep = text;\nglobalThis.text = () => { throw new Error('no'); };\n"
        "json = null;\nconsole = { log() { throw new Error('no'); } };\n"
        "globalThis.setTimeout = null;\nglobalThis.echo = null;\nkeep('kept');\nreturn 1;",
        1,
        output=[{"type": "text", "text": "kept"}],
    ),
    "unterminated_promise": fails("await new Promise(() => {});", "internal_error", STUCK),
}


def _check(case: Hostile, envelope: dict[str, Any]) -> None:
    assert envelope["status"] == case.status, envelope
    assert envelope["output"] == case.output
    if case.status == "completed":
        assert envelope["value"] == case.value
        return
    code, phase, error, _ = failure(envelope)
    assert (code, phase) == (case.code_, case.phase), envelope
    assert case.error is not None
    if case.error_re:
        assert re.fullmatch(case.error, error), error
    else:
        assert error == case.error


def probed(
    code: str, *, limits: Limits, tools: list[Tool] | None = None, **options: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A probe's fingerprint, `code`'s envelope under `limits`, and a probe's fingerprint
    after it: the probes in a runtime of the same guest configuration with a roomy budget."""
    kit = [echo_tool()] if tools is None else tools
    roomy = dataclasses.replace(limits, timeout_ms=max(limits.timeout_ms, ROOMY.timeout_ms))
    shared = QuickJSExecutor()  # one pool: each CodeMode would otherwise make its own

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with (
            CodeMode(kit, limits=roomy, executor=shared, **options) as probing,
            CodeMode(kit, limits=limits, executor=shared, **options) as mode,
        ):
            pristine = await _probe(probing)
            envelope = await mode.exec(code)
            return pristine, envelope, await _probe(probing)

    return run(main())


async def _probe(mode: CodeMode) -> dict[str, Any]:
    envelope = await mode.exec(PROBE)
    assert envelope["status"] == "completed", envelope
    assert envelope["output"] == [
        {"type": "text", "text": "probe"},
        {"type": "text", "text": 'probe [1,{"a":2}]'},
    ]
    value: dict[str, Any] = envelope["value"]
    assert value["echoed"] == {"n": 1, "list": [1, 2]}
    assert value["list"] == [1, {"b": [2]}]
    return value["fingerprint"]


# On V8 these cells end otherwise, for the engine's reasons (docs/divergences.md, "The V8
# executor"): case id -> the V8 envelope's (status, code). Their probes must still agree.
_V8_OUTCOME: dict[str, tuple[str, str | None]] = {
    "string_doubling": ("failed", "internal_error"),  # RangeError: Invalid string length
    "push_loop": ("failed", "internal_error"),  # out of memory, without frames: the worker ended
    "out_of_memory_is_catchable": ("failed", "internal_error"),  # a heap OOM ends the worker
    "returning_100_mb_under_the_default_limit": ("failed", "internal_error"),  # heap + copies
    "deep_json_parse": ("completed", None),  # V8's JSON parser does not recurse
    "deep_json_stringify": ("completed", None),
    "deep_json_stringify_inside_try": ("completed", None),
    "array_buffer_of_2_gib": ("failed", "internal_error"),  # out of memory: 2 ** 31 is a length
    "typed_array_of_a_huge_array_like": ("failed", "internal_error"),  # the watchdog, no frames
    "array_of_2_gib_filled": ("failed", "internal_error"),  # a heap OOM ends the worker
}


def test_probes_keep_a_roomy_budget_around_a_case_with_a_tight_one() -> None:
    # A probe slowed past the case's budget (a loaded machine did it to 250 ms budgets; the
    # tool stands for the load by taking twice the case's budget) still completes: only the
    # case has the tight budget. With one budget for both the probe timed out.
    tight = Limits(timeout_ms=100)

    async def slow_echo(params: dict[str, Any]) -> Any:
        await asyncio.sleep(2 * tight.timeout_ms / 1000)
        return params

    slow = Tool(name="echo", execute=slow_echo)
    pristine, envelope, after = probed("return 1;", limits=tight, tools=[slow])
    assert (envelope["status"], envelope["value"]) == ("completed", 1)
    assert after == pristine


@pytest.mark.parametrize("executor", ["quickjs", "v8"])
@pytest.mark.parametrize("case", [pytest.param(c, id=i) for i, c in CASES.items()])
def test_hostile_cell_ends_cleanly_and_leaves_no_trace(case: Hostile, executor: str) -> None:
    if executor == "v8":  # probes with a roomy budget: see `test_hostile_corpus._run_v8`
        pristine, envelope, after = _run_v8(case)
    else:
        pristine, envelope, after = probed(case.code, limits=case_limits(case))
    name = next(i for i, c in CASES.items() if c is case)
    if executor == "v8" and name in _V8_OUTCOME:
        assert (envelope["status"], envelope.get("code")) == _V8_OUTCOME[name], envelope
    else:
        _check(case, envelope)
    assert after == pristine
    assert pristine["leak"] == "undefined"


def case_limits(case: Hostile) -> Limits:
    """A case's limits, with a roomy budget unless the case ends by its deadline: a case
    recorded as completing (or failing otherwise) must not time out because the machine is
    loaded; a hang would still end, at the roomy budget."""
    if case.code_ == "timeout":
        return case.limits
    return dataclasses.replace(case.limits, timeout_ms=max(case.limits.timeout_ms, 10_000))


_V8_PRISTINE: dict[tuple[tuple[str, ...], Limits], dict[str, Any]] = {}


def v8_pristine(tools: list[Tool] | None = None, limits: Limits = PROBE_LIMITS) -> dict[str, Any]:
    """The probe of a fresh V8 runtime over `tools` (`None`: the echo tool).

    Every V8 runtime starts in a clean worker, never one that ran a cell, so this is the same
    for every fresh runtime over the same catalog: a test process runs it once per catalog and
    limits (a Deno worker boot saved per case), and each case's probe afterwards, in a fresh
    runtime, must equal it. A case that polluted anything the next runtime sees fails that
    comparison, whichever test ran first."""
    key = (tuple(t.name for t in tools or [echo_tool()]), limits)
    if key not in _V8_PRISTINE:
        executor = V8Executor(spares=0)
        try:
            _V8_PRISTINE[key] = with_mode(_probe, tools=tools, limits=limits, executor=executor)
        finally:
            executor.close()
    return _V8_PRISTINE[key]


def _run_v8(case: Hostile) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    pristine = v8_pristine()
    executor = V8Executor(spares=1)
    limits = case_limits(case)

    async def run_case(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(case.code)

    try:
        envelope = with_mode(run_case, limits=limits, executor=executor)
        return pristine, envelope, with_mode(_probe, limits=PROBE_LIMITS, executor=executor)
    finally:
        executor.close()


@pytest.mark.slow
def test_returning_100_mb_completes_with_a_truncation_marker() -> None:
    limits = Limits(timeout_ms=60_000, memory_limit_bytes=512 * 1024 * 1024)  # a hang guard

    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        big = await mode.exec("const s = 'x'.repeat(2 ** 20);\nreturn Array(100).fill(s);")
        return big, await mode.exec("return 1;")

    big, after = with_mode(body, limits=limits)
    assert big["status"] == "completed"
    marker = big["value"]
    assert marker["truncated"] is True
    assert marker["prefix"].startswith('["xxxx')
    original = 100 * (2**20 + 3) + 1  # 100 quoted strings, 99 commas, two brackets
    assert marker["omittedBytes"] == original - len(marker["prefix"].encode())
    assert after["value"] == 1


def test_an_epoch_trap_does_not_break_the_next_cell_in_another_code_mode() -> None:
    # The engine epoch is process-wide: a backstop trap in one CodeMode must not leave
    # other guests unable to enter wasm.
    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        async with CodeMode([echo_tool()], limits=FAST) as other:
            first = await other.exec("return 1;")
            trapped = await mode.exec(CASES["native_sort_of_3e6_strings"].code)
            return [first, trapped, await other.exec("return await echo({ n: 2 });")]

    first, trapped, after = with_mode(body, limits=BIG)
    assert first["value"] == 1
    assert failure(trapped)[:3] == ("timeout", "guest", TIMEOUT)
    assert after["value"] == {"n": 2}


def test_large_cells_do_not_exhaust_memory_for_later_cells() -> None:
    code = "const a = new Uint8Array(40 * 1024 * 1024);\nreturn a.length;"

    async def body(mode: CodeMode) -> list[Any]:
        return [(await mode.exec(code)).get("value") for _ in range(5)]

    # Room enough that each cell ends by its own result, never by the clock.
    assert with_mode(body, limits=ROOMY) == [40 * 1024 * 1024] * 5


def test_code_that_escapes_the_cell_wrapper_still_times_out() -> None:
    envelope = exec_one_escaping("}); while (true) {}; (() => {")
    assert failure(envelope)[:3] == ("timeout", "guest", TIMEOUT)


def exec_one_escaping(code: str) -> dict[str, Any]:
    async def body(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    return with_mode(body, limits=FAST)
