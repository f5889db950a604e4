"""The guest runtime: QuickJS-NG compiled to WASI, run under wasmtime."""

from __future__ import annotations

from ._guest import Guest, GuestTrap, JSException, StepResult
from ._module import compiled_reactor
from ._pool import GuestPool

__all__ = ["Guest", "GuestPool", "GuestTrap", "JSException", "StepResult", "compiled_reactor"]
