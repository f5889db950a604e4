"""Compressed bodies for the decoding tests: small on the wire, huge once decoded."""

from __future__ import annotations

import functools
import gzip
import tracemalloc
import zlib
from collections.abc import Callable
from typing import TypeVar

import zstandard

BOMB_MB = 64
_MIB = b"\0" * (1 << 20)
T = TypeVar("T")


def _gzip_stream(chunks: int, data: bytes = _MIB) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join(packer.compress(data) for _ in range(chunks)) + packer.flush()


@functools.cache
def gzip_gzip_bomb() -> bytes:
    """`Content-Encoding: gzip, gzip`: a few hundred bytes that decode to `BOMB_MB` MiB."""
    return gzip.compress(_gzip_stream(BOMB_MB), 9)


@functools.cache
def gzip_bomb() -> bytes:
    """`Content-Encoding: gzip`: about 64 KB that decode to `BOMB_MB` MiB."""
    return _gzip_stream(BOMB_MB)


@functools.cache
def zstd_bomb() -> bytes:
    """`Content-Encoding: zstd`: a few KB that decode to `BOMB_MB` MiB (one streamed frame)."""
    packer = zstandard.ZstdCompressor(level=3).compressobj()
    return b"".join(packer.compress(_MIB) for _ in range(BOMB_MB)) + packer.flush()


def traced_peak(action: Callable[[], T]) -> tuple[T, int]:
    """`action()`'s result and the peak of Python allocations while it ran, in bytes."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@functools.cache
def empty_blocks_bomb() -> bytes:
    """`gzip, gzip` whose inner stream is 20 MB of empty deflate blocks (decodes to nothing)."""
    header = gzip.compress(b"")[:10]
    trailer = gzip.compress(b"")[10:]  # the final empty block, CRC and size of nothing
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    empty = b"\x00\x00\x00\xff\xff" * (1 << 18)
    body = packer.compress(header) + b"".join(packer.compress(empty) for _ in range(16))
    return body + packer.compress(trailer) + packer.flush()
