"""Resetting a guest drops the image's zero pages instead of copying them, and stays exact."""

from __future__ import annotations

import ctypes
import mmap
import resource
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawcell.runtime import Guest, compiled_reactor
from clawcell.runtime._wasm import _linear_memory as memory_module  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._pages import (
    MIN_RUN_BYTES,
    PAGE_BYTES,
    address_of,
    bit_runs,
    blank_pages,
    drop_pages,
    run_bits,
    same_bytes,
    touched_pages,
    zero_runs,
)

INSTALL = '{"maxPending":16,"bindings":[],"test":"pages"}'
DEEP = "function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } f(100)"
P = PAGE_BYTES
ON_LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise is Linux's")


def _pages(*spec: tuple[int, int]) -> bytes:
    """Pages of `byte` values: `(count, byte)` each."""
    return b"".join(bytes([byte]) * (count * P) for count, byte in spec)


def _blank(data: bytes) -> int:
    return blank_pages(address_of(data), len(data))


def test_blank_pages_sets_a_bit_for_each_whole_page_of_zeros() -> None:
    assert _blank(_pages((2, 0), (1, 7), (1, 0)) + b"\x00" * 100) == 0b1011
    assert _blank(_pages((1, 7))) == 0
    assert _blank(b"") == 0


def test_blank_pages_looks_inside_chunks_and_across_their_ends() -> None:
    data = _pages((16, 0), (15, 0), (1, 3), (16, 0), (2, 0), (1, 9), (3, 0))
    expected = (1 << 54) - 1 & ~(1 << 31) & ~(1 << 50)
    assert _blank(data) == expected
    assert _blank(data[P:]) == expected >> 1  # chunks that start elsewhere


def test_bit_runs_lists_each_run_of_set_bits_up_to_the_last_page() -> None:
    assert bit_runs(0b0111_0011, 8) == [(0, 2), (4, 3)]
    assert bit_runs(0b1100_0000, 8) == [(6, 2)]  # a run that ends with the pages
    assert bit_runs(0b1111_0000, 6) == [(4, 2)]  # bits past `pages` are not counted
    assert bit_runs(0, 8) == []


@given(st.integers(min_value=-(1 << 80), max_value=1 << 80), st.integers(0, 90))
def test_bit_runs_are_the_runs_of_set_bits_read_one_by_one(bits: int, pages: int) -> None:
    expected: list[tuple[int, int]] = []
    for page in range(pages):
        if bits >> page & 1:
            if expected and sum(expected[-1]) == page:
                expected[-1] = (expected[-1][0], expected[-1][1] + 1)
            else:
                expected.append((page, 1))
    assert bit_runs(bits, pages) == expected


def test_zero_runs_finds_only_runs_of_at_least_16_whole_pages() -> None:
    image = _pages((16, 0), (1, 7), (15, 0), (2, 7), (20, 0)) + b"\x00" * 100
    assert zero_runs(_blank(image), len(image) // P) == [(0, 16 * P), (34 * P, 20 * P)]
    assert zero_runs(_blank(_pages((3, 1))), 3) == []
    assert zero_runs(0, 0) == []


@ON_LINUX
def test_dropped_anonymous_pages_read_back_as_zeros() -> None:
    region = mmap.mmap(-1, 32 * P, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.write(b"\xa5" * (32 * P))
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert drop_pages(address + 8 * P, 16 * P)
    assert region[8 * P : 24 * P] == bytes(16 * P)
    assert region[: 8 * P] == b"\xa5" * (8 * P)
    assert region[24 * P :] == b"\xa5" * (8 * P)


def _dirtied_guest() -> Guest:
    guest = Guest(compiled_reactor(), memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    inst = guest.instance
    assert inst.take_string(inst.eval(DEEP)) == "100"  # writes deep into the shadow stack
    offset, length = inst.memory._zero_runs[0] if inst.memory._zero_runs else (0, 0)  # pyright: ignore[reportPrivateUsage]
    stack = inst.memory.copy()[offset : offset + length]
    assert stack.count(0) < len(stack) or not length  # the zero run was written to
    assert inst.memory.copy() != inst.memory.image
    return guest


@ON_LINUX
def test_the_image_holds_only_the_non_blank_pages_of_the_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The image as captured from a built guest: with the cache on, a guest may load one a
    # previous process stored, and loading resets the memory, which reads the image's blank
    # pages (the kernel's shared zero page, but resident to the page map).
    monkeypatch.setenv("CLAWCELL_NO_MODULE_CACHE", "1")
    guest = Guest(compiled_reactor(), memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    memory = guest.instance.memory
    size = len(memory.image)
    address = memory._image_address  # pyright: ignore[reportPrivateUsage]
    resident = touched_pages(address, size)  # before anything reads the image
    blank = blank_pages(address, size)
    assert resident is not None and blank
    assert resident & blank == 0  # blank pages of the image were never written
    assert resident | blank == (1 << (size // P)) - 1
    memory.reset()
    assert memory.copy() == memory.image


@ON_LINUX
def test_a_reset_after_deep_recursion_is_the_image_byte_for_byte() -> None:
    guest = _dirtied_guest()
    memory = guest.instance.memory
    assert memory._zero_runs  # pyright: ignore[reportPrivateUsage]
    memory.reset()
    assert memory.copy() == memory.image
    assert memory.stack_pointer == memory.image_sp


def test_a_reset_is_exact_when_the_kernel_refuses_to_drop_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guest = _dirtied_guest()

    def refuse(address: int, length: int) -> bool:
        return False

    monkeypatch.setattr(memory_module, "drop_pages", refuse)
    memory = guest.instance.memory
    memory.reset()
    assert memory.copy() == memory.image


def test_images_are_copied_whole_where_dropped_pages_do_not_read_back_as_zeros(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory_module, "_drops_checked", [False])
    guest = _dirtied_guest()
    memory = guest.instance.memory
    assert memory._zero_runs == []  # pyright: ignore[reportPrivateUsage]
    memory.reset()
    assert memory.copy() == memory.image


@ON_LINUX
def test_the_probe_of_dropped_pages_does_not_fault_them_in_again() -> None:
    # The probe writes, drops and reads back pages at both ends of each zero run: a write
    # and a read fault per page. Pages that read back as zeros need no zeroing, which would
    # be a third fault per page (a new page, zeroed) and leave them resident for nothing.
    memory = _dirtied_guest().instance.memory
    runs = memory._zero_runs  # pyright: ignore[reportPrivateUsage]
    assert runs
    memory.reset()  # the runs dropped: every probed page faults afresh
    probed = len(runs) * 2 * MIN_RUN_BYTES // P
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    assert memory._drops_to_zeros(runs)  # pyright: ignore[reportPrivateUsage]
    faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before
    # Two per page, and room for a few of the interpreter's own; zeroing would add a third.
    assert probed <= faults < 2 * probed + probed // 2
    assert memory.copy() == memory.image


@ON_LINUX
def test_touched_pages_tells_written_and_read_pages_from_untouched_and_dropped_ones() -> None:
    region = mmap.mmap(-1, 8 * P, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert touched_pages(address, 8 * P) == 0
    region[P : P + 1] = b"x"  # written
    assert region[3 * P] == 0  # read
    assert touched_pages(address, 8 * P) == 0b1010
    assert touched_pages(address + P, 4 * P) == 0b101
    assert drop_pages(address, 8 * P)
    assert touched_pages(address, 8 * P) == 0


def test_run_bits_sets_a_bit_for_each_page_inside_the_runs() -> None:
    assert run_bits([(P, 2 * P), (5 * P, P)], 8 * P) == 0b100110
    assert run_bits([(6 * P, 4 * P)], 8 * P) == 0b11000000  # cut at the memory's size
    assert run_bits([], 8 * P) == 0


def test_same_bytes_compares_memory_in_place() -> None:
    left, right = (
        ctypes.create_string_buffer(b"abcd" * 1024),
        ctypes.create_string_buffer(b"abcd" * 1024),
    )
    assert same_bytes(ctypes.addressof(left), ctypes.addressof(right), 4096)
    right[4000] = b"z"
    assert not same_bytes(ctypes.addressof(left), ctypes.addressof(right), 4096)
    assert same_bytes(ctypes.addressof(left), ctypes.addressof(right), 4000)


def test_the_stack_pointer_is_set_through_the_raw_call_and_reset_to_the_image_s() -> None:
    guest = Guest(compiled_reactor(), memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    memory = guest.instance.memory
    pristine = memory.image_sp
    memory.set_stack_pointer(pristine - 4096)
    assert memory.stack_pointer == pristine - 4096
    memory.set_stack_pointer(0x8000_0010)  # an i32 global: the high bit reads back as a sign
    assert memory.stack_pointer & 0xFFFF_FFFF == 0x8000_0010
    memory.reset()
    assert memory.stack_pointer == pristine
    pages = memory._memory.pages()  # pyright: ignore[reportPrivateUsage]
    assert memory.size == pages * 65_536 >= len(memory.image)
    assert guest.instance.take_string(guest.instance.eval("String(6 * 7)")) == "42"
