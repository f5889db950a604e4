"""`clawcell_turn`: one bridge round trip in one wasm call (hand-assembled WebAssembly).

Written for clawcell and added to the reactor by the load-time patcher. Between two
awaits the host used to cross into the guest about eight times: make the settle string,
call `settle`, free it, run each pending job, call `step`. This function does all of that
inside the guest, so a round trip costs one crossing:

```text
i64 clawcell_turn(i32 ctx, i32 rt, i64 settle, i64 step, i32 text, i32 len, i32 argv, i32 pctx)
  if len >= 0:                                   ;; a settle batch was staged at `text`
      s = JS_NewStringLen(ctx, text, len)        ;; exception -> return it
      *argv = s
      r = JS_Call(ctx, settle, undefined, 1, argv); JS_FreeValue(ctx, s)
      if r is an exception: return r
      JS_FreeValue(ctx, r)
  while (n = JS_ExecutePendingJob(rt, pctx)) != 0:
      if n < 0: return JS_EXCEPTION              ;; the job's exception is pending
  return JS_Call(ctx, step, undefined, 0, argv)  ;; the step report (or an exception)
```

A cell's first segment used to take seven more crossings before that turn: run the compiled
script (`JS_EvalFunction`), make the seed string, call the controller's `start`, free the three
values. `clawcell_start` does those and then the turn's pump and step, in one crossing:

```text
i64 clawcell_start(i32 ctx, i32 rt, i64 start, i64 step, i32 seed, i32 len, i32 argv,
                   i32 pctx, i64 script)
  cell = JS_EvalFunction(ctx, script)            ;; consumes script; exception -> return it
  s = JS_NewStringLen(ctx, seed, len)            ;; exception -> free cell, return it
  argv[0] = cell; argv[1] = s
  r = JS_Call(ctx, start, undefined, 2, argv); JS_FreeValue(ctx, s); JS_FreeValue(ctx, cell)
  if r is an exception: return r
  JS_FreeValue(ctx, r)
  (the pump and the step of clawcell_turn)
```

Every exception path leaves the exception pending in the context, exactly as the C calls
they replace would, so the host reads it with `JS_GetException` as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "START_EXPORT",
    "START_TYPE",
    "TURN_EXPORT",
    "TURN_NEEDS",
    "TURN_TYPE",
    "start_body",
    "turn_body",
]

TURN_EXPORT: Final = "clawcell_turn"
START_EXPORT: Final = "clawcell_start"
TURN_NEEDS: Final = (
    "JS_NewStringLen",
    "JS_Call",
    "JS_FreeValue",
    "JS_ExecutePendingJob",
    "JS_EvalFunction",
)

_I32, _I64 = 0x7F, 0x7E
# (i32 ctx, i32 rt, i64 settle, i64 step, i32 text, i32 len, i32 argv, i32 pctx) -> i64
TURN_TYPE: Final = bytes([0x60, 8, _I32, _I32, _I64, _I64, _I32, _I32, _I32, _I32, 1, _I64])

# (i32 ctx, i32 rt, i64 start, i64 step, i32 seed, i32 len, i32 argv, i32 pctx, i64 script) -> i64
START_TYPE: Final = bytes([0x60, 9, _I32, _I32, _I64, _I64, _I32, _I32, _I32, _I32, _I64, 1, _I64])

_CTX, _RT, _SETTLE, _STEP, _TEXT, _LEN, _ARGV, _PCTX, _S, _R, _N = range(11)
# clawcell_start's own: `start` takes `settle`'s place, the seed `text`'s; then `script`.
_SCRIPT, _CELL, _SEED, _RESULT, _JOBS = range(8, 13)
_UNDEFINED: Final = 3 << 32
_EXCEPTION: Final = 6 << 32
_TAG_EXCEPTION: Final = 6

_LOCAL_GET, _LOCAL_SET, _LOCAL_TEE = 0x20, 0x21, 0x22
_I32_CONST, _I64_CONST, _CALL = 0x41, 0x42, 0x10
_IF, _LOOP, _END, _RETURN, _BR_IF, _VOID = 0x04, 0x03, 0x0B, 0x0F, 0x0D, 0x40
_I32_EQ, _I32_LT_S, _I32_GE_S = 0x46, 0x48, 0x4E
_I64_SHR_U, _I32_WRAP_I64, _I64_STORE = 0x88, 0xA7, 0x37


def _sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _get(index: int) -> bytes:
    return bytes([_LOCAL_GET, index])


def _call(function: int) -> bytes:
    return bytes([_CALL]) + _uleb(function)


def _is_exception(local: int) -> bytes:
    """Push `tag(local) == JS_TAG_EXCEPTION`."""
    return (
        _get(local)
        + bytes([_I64_CONST])
        + _sleb(32)
        + bytes([_I64_SHR_U, _I32_WRAP_I64, _I32_CONST])
        + _sleb(_TAG_EXCEPTION)
        + bytes([_I32_EQ])
    )


def _return_if_exception(local: int) -> bytes:
    return _is_exception(local) + bytes([_IF, _VOID]) + _get(local) + bytes([_RETURN, _END])


def _call_with_undefined_this(fn: int, function: int, argc: int) -> bytes:
    return (
        _get(_CTX)
        + _get(fn)
        + bytes([_I64_CONST])
        + _sleb(_UNDEFINED)
        + bytes([_I32_CONST])
        + _sleb(argc)
        + _get(_ARGV)
        + _call(function)
    )


def _settle(f: Mapping[str, int]) -> bytes:
    make_string = _get(_CTX) + _get(_TEXT) + _get(_LEN) + _call(f["JS_NewStringLen"])
    store_arg = _get(_ARGV) + _get(_S) + bytes([_I64_STORE, 3, 0])
    free_string = _get(_CTX) + _get(_S) + _call(f["JS_FreeValue"])
    free_result = _get(_CTX) + _get(_R) + _call(f["JS_FreeValue"])
    body = (
        make_string
        + bytes([_LOCAL_SET, _S])
        + _return_if_exception(_S)
        + store_arg
        + _call_with_undefined_this(_SETTLE, f["JS_Call"], 1)
        + bytes([_LOCAL_SET, _R])
        + free_string
        + _return_if_exception(_R)
        + free_result
    )
    has_text = _get(_LEN) + bytes([_I32_CONST]) + _sleb(0) + bytes([_I32_GE_S])
    return has_text + bytes([_IF, _VOID]) + body + bytes([_END])


def _pump(f: Mapping[str, int], jobs: int = _N) -> bytes:
    """Run every pending job (its count goes to local `jobs`); an exception returns."""
    run_job = _get(_RT) + _get(_PCTX) + _call(f["JS_ExecutePendingJob"])
    failed = (
        bytes([_I32_CONST])
        + _sleb(0)
        + bytes([_I32_LT_S, _IF, _VOID, _I64_CONST])
        + _sleb(_EXCEPTION)
        + bytes([_RETURN, _END])
    )
    again = _get(jobs) + bytes([_BR_IF, 0])
    return (
        bytes([_LOOP, _VOID]) + run_job + bytes([_LOCAL_TEE, jobs]) + failed + again + bytes([_END])
    )


def turn_body(functions: Mapping[str, int]) -> bytes:
    """The code-section entry (size-prefixed) of `clawcell_turn` for these function indices."""
    locals_ = bytes([2, 2, _I64, 1, _I32])  # s, r: i64; n: i32
    code = (
        locals_
        + _settle(functions)
        + _pump(functions)
        + _call_with_undefined_this(_STEP, functions["JS_Call"], 0)
        + bytes([_END])
    )
    return _uleb(len(code)) + code


def _free(f: Mapping[str, int], local: int) -> bytes:
    return _get(_CTX) + _get(local) + _call(f["JS_FreeValue"])


def start_body(functions: Mapping[str, int]) -> bytes:
    """The code-section entry (size-prefixed) of `clawcell_start` for these function indices."""
    f = functions
    locals_ = bytes([2, 3, _I64, 1, _I32])  # cell, seed, result: i64; jobs: i32
    run_script = _get(_CTX) + _get(_SCRIPT) + _call(f["JS_EvalFunction"])
    make_seed = _get(_CTX) + _get(_TEXT) + _get(_LEN) + _call(f["JS_NewStringLen"])
    seed_failed = (
        _is_exception(_SEED)
        + bytes([_IF, _VOID])
        + _free(f, _CELL)
        + _get(_SEED)
        + bytes([_RETURN, _END])
    )
    store_args = (
        _get(_ARGV)
        + _get(_CELL)
        + bytes([_I64_STORE, 3, 0])
        + _get(_ARGV)
        + _get(_SEED)
        + bytes([_I64_STORE, 3, 8])
    )
    code = (
        locals_
        + run_script
        + bytes([_LOCAL_SET, _CELL])
        + _return_if_exception(_CELL)
        + make_seed
        + bytes([_LOCAL_SET, _SEED])
        + seed_failed
        + store_args
        + _call_with_undefined_this(_SETTLE, f["JS_Call"], 2)
        + bytes([_LOCAL_SET, _RESULT])
        + _free(f, _SEED)
        + _free(f, _CELL)
        + _return_if_exception(_RESULT)
        + _free(f, _RESULT)
        + _pump(f, _JOBS)
        + _call_with_undefined_this(_STEP, f["JS_Call"], 0)
        + bytes([_END])
    )
    return _uleb(len(code)) + code
