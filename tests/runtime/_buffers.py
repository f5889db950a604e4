"""A spy on the guest buffers `Instance.stage` allocates and the pointers `Instance.free` frees
(the runtime tests check a large batch or source is freed exactly once)."""

from __future__ import annotations

import pytest

from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]


def spy_buffers(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """The buffers `stage` allocated, and every pointer freed, from now on."""
    staged: list[int] = []
    freed: list[int] = []
    stage, free = Instance.stage, Instance.free

    def spy_stage(self: Instance, text: str | None) -> tuple[int, int, int]:
        placed = stage(self, text)
        if placed[2]:
            staged.append(placed[2])
        return placed

    def spy_free(self: Instance, ptr: int) -> None:
        freed.append(ptr)
        free(self, ptr)

    monkeypatch.setattr(Instance, "stage", spy_stage)
    monkeypatch.setattr(Instance, "free", spy_free)
    return staged, freed
