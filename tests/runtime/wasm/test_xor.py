"""`xor_bytes`: the wasm SIMD XOR that snapshots diff pages with, against Python's own."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clawcell.runtime._wasm._xor as xor_module
from clawcell.runtime._wasm._xor import xor_bytes


def _reference(left: bytes, right: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(left, right, strict=True))


@given(st.integers(min_value=0, max_value=200).flatmap(
    lambda n: st.tuples(st.binary(min_size=n, max_size=n), st.binary(min_size=n, max_size=n))
))  # fmt: skip
def test_xor_matches_byte_by_byte_xor_at_every_length(pair: tuple[bytes, bytes]) -> None:
    assert xor_bytes(*pair) == _reference(*pair)


@pytest.mark.parametrize("size", [4096, 288 * 1024 + 7, 3 * 65_536, 40_000, 5])
def test_operands_larger_than_the_memory_grow_it_and_later_smaller_ones_are_not_mixed_up(
    size: int,
) -> None:
    left, right = os.urandom(size), os.urandom(size)
    assert xor_bytes(left, right) == _reference(left, right)
    assert xor_bytes(left, left) == bytes(size)


def test_operands_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="XOR needs operands of one length, got 3 and 2"):
        xor_bytes(b"abc", b"ab")


def test_threads_parking_at_once_each_get_their_own_result() -> None:
    pairs = [(os.urandom(20_000 + i), os.urandom(20_000 + i)) for i in range(8)]
    results: dict[int, bytes] = {}

    def work(index: int) -> None:
        for _ in range(20):
            results[index] = xor_bytes(*pairs[index])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: _reference(*pair) for i, pair in enumerate(pairs)}


def test_an_engine_that_cannot_build_the_module_falls_back_to_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A module this engine refuses (a truncated code section stands in for SIMD it lacks).
    monkeypatch.setattr(xor_module, "_WASM", xor_module._WASM[:60])  # pyright: ignore[reportPrivateUsage]
    fallback = xor_module._make()  # pyright: ignore[reportPrivateUsage]
    left, right = os.urandom(300), os.urandom(300)
    assert fallback(left, right) == _reference(left, right)
    assert fallback is xor_module._python_xor  # pyright: ignore[reportPrivateUsage]


def test_the_shipped_binary_is_the_text_module_assembled() -> None:
    # The binary is shipped so no text is parsed at run time; it must stay the text's.
    import wasmtime  # here: clawcell itself never imports wasmtime-py

    shipped = xor_module._WASM  # pyright: ignore[reportPrivateUsage]
    assert shipped == bytes(wasmtime.wat2wasm(xor_module._WAT))  # pyright: ignore[reportPrivateUsage]
