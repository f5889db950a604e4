"""The guest runtime: QuickJS-NG compiled to WASI, run under wasmtime.

`wire` is the host↔guest vocabulary (bridge methods, cell states, step-report keys, file
names, guest globals) that the controller and the host share.
"""

from __future__ import annotations

from . import _wire as wire
from ._guest import Guest, GuestTrap, JSException, StepResult
from ._module import compiled_reactor
from ._parser import ParseFailure, parse_failure
from ._pool import GuestPool
from ._worker import run_on_guest_thread

__all__ = [
    "Guest",
    "GuestPool",
    "GuestTrap",
    "JSException",
    "ParseFailure",
    "StepResult",
    "compiled_reactor",
    "parse_failure",
    "run_on_guest_thread",
    "wire",
]
