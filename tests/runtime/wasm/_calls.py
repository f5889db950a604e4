"""Helpers of the wasm tests: a bare QuickJS instance, an eval as a call future, and a
backstop armed for a `with` block."""

from __future__ import annotations

import contextlib
from collections.abc import Generator

from clawcell.runtime import compiled_reactor
from clawcell.runtime._wasm._exports import CallFuture  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]


def bare_instance() -> Instance:
    """A QuickJS instance without a controller, a 64 MiB limit and no interrupt."""
    return Instance(compiled_reactor(), memory_limit_bytes=64 << 20, interrupt=lambda: False)


def eval_future(instance: Instance, source: bytes) -> CallFuture:
    """`source` evaluated as global code, as a call future not yet run."""
    ptr = instance.put_cstring(source)
    filename = instance._filename  # pyright: ignore[reportPrivateUsage]
    return instance._f["JS_Eval"].start(instance.ctx, ptr, len(source), filename, 0)  # pyright: ignore[reportPrivateUsage]


@contextlib.contextmanager
def backstop(instance: Instance, at: float) -> Generator[None]:
    """`instance.arm_backstop(at)` until the block ends."""
    token = instance.arm_backstop(at)
    try:
        yield
    finally:
        instance.disarm_backstop(token)
