"""Process-wide singletons: made once per process, made again in a forked child."""

from __future__ import annotations

import itertools
import os

import pytest

from clawcell.runtime._process import PerProcess  # pyright: ignore[reportPrivateUsage]
from tests.conftest import in_forked_child


def test_a_value_is_made_once_per_process_and_again_in_a_forked_child() -> None:
    made = itertools.count()
    value = PerProcess(lambda: next(made))
    first = value.get()

    def child() -> bytes:
        return f"{value.get()} {value.get()}".encode()

    out = in_forked_child(child)
    assert out is not None, "the child hung"
    assert out.decode().split() == [str(first + 1)] * 2  # a new value, then kept
    assert value.get() == first  # the parent keeps its own


def test_get_asks_the_kernel_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    value = PerProcess(object)
    first = value.get()

    def no_getpid() -> int:
        raise AssertionError("get() called os.getpid")

    monkeypatch.setattr(os, "getpid", no_getpid)
    assert value.get() is first
