"""The guest runtime: QuickJS-NG compiled to WASI, run under wasmtime.

`wire` is the host↔guest vocabulary (bridge methods, cell states, step-report keys, file
names, guest globals) that the controller and the host share. Engine exceptions (wasm traps,
QuickJS exceptions) never leave the runtime: guest code that stops without a result is
reported as an `EngineFailure` whose `kind` says why.

`Executor` is the seam `CodeMode(executor=…)` takes: it hands out guests (`ExecutorGuest`) of
one configuration (`GuestConfig`); `QuickJSExecutor` is the default, `V8Executor` the opt-in
V8 engine in sandboxed Deno worker processes (the `v8` extra; see docs/executors.md).
"""

from __future__ import annotations

import typing

from .. import _lazy
from . import _wire as wire
from ._crossing import TurnCrossing
from ._executor import Executor, ExecutorGuest, GuestConfig, QuickJSExecutor
from ._failure import EngineFailure, FailureKind
from ._guest import Guest
from ._named import EXECUTOR_NAMES, checked_executor_name, executor_named
from ._pool import GuestPool
from ._report import StepResult
from ._wasm._engine import compiled_reactor
from ._worker import SegmentRunner, run_on_guest_thread

if typing.TYPE_CHECKING:
    from ._bwrap import bwrap_binary, pid_guard
    from ._parent_death import die_with_parent
    from ._parser import ParseFailure, parse_failure, script_failure
    from ._v8._executor import V8Executor

# The parser, the V8 executor and the sandboxes' helpers (bubblewrap, the parent-death signal)
# load at first use: the first QuickJS cell needs none of them.
__getattr__ = _lazy.lazy_exports(
    __name__,
    {
        "_parser": ["ParseFailure", "parse_failure", "script_failure"],
        "_v8._executor": ["V8Executor"],
        "_bwrap": ["bwrap_binary", "pid_guard"],
        "_parent_death": ["die_with_parent"],
    },
)

__all__ = [
    "EXECUTOR_NAMES",
    "EngineFailure",
    "Executor",
    "ExecutorGuest",
    "FailureKind",
    "Guest",
    "GuestConfig",
    "GuestPool",
    "ParseFailure",
    "QuickJSExecutor",
    "SegmentRunner",
    "StepResult",
    "TurnCrossing",
    "V8Executor",
    "bwrap_binary",
    "checked_executor_name",
    "compiled_reactor",
    "die_with_parent",
    "executor_named",
    "parse_failure",
    "pid_guard",
    "run_on_guest_thread",
    "script_failure",
    "wire",
]
