"""A guest instance's backstop armed for a `with` block (tests arm it around plain calls)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]


@contextlib.contextmanager
def backstop(instance: Instance, at: float) -> Iterator[None]:
    """`instance.arm_backstop(at)` until the block ends."""
    token = instance.arm_backstop(at)
    try:
        yield
    finally:
        instance.disarm_backstop(token)
