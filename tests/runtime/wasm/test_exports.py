"""`FastExport`, the path of every crossing into the reactor: arguments and results keep
their full 64 bits, and a raw value's tag reads as the signed high half."""

from __future__ import annotations

import ctypes
import json

import pytest

from clawcell.runtime import Guest, compiled_reactor
from clawcell.runtime._wasm._instance import TAG_STRING, _tag  # pyright: ignore[reportPrivateUsage]

INSTALL = json.dumps({"maxPending": 16, "bindings": []})


@pytest.mark.parametrize(
    "value",
    [0, 1 << 32, 3 << 32, (2**32 - 7) << 32, 2**64 - 1, 0x8000_0000 << 32, 0x7FFF_FFFF << 32],
)
def test_a_tag_is_the_signed_high_half(value: int) -> None:
    assert _tag(value) == ctypes.c_int32(value >> 32).value


def test_values_cross_both_ways_at_full_width() -> None:
    guest = Guest(compiled_reactor(), memory_limit_bytes=64 << 20, install_config=INSTALL)
    instance = guest.instance
    exports = instance._f  # pyright: ignore[reportPrivateUsage]
    string = instance.new_string("wide value: é")
    assert string >= 1 << 63 and _tag(string) == TAG_STRING  # an i64 result, sign bit set
    assert exports["JS_DupValue"](instance.ctx, string) == string  # and as an argument
    instance.free_value(string)
    pointer = exports["malloc"](24)  # an i32 result
    assert 0 < pointer < 1 << 32
    exports["free"](pointer)
    assert instance.take_string(string) == "wide value: é"
