"""Guest snapshots: a parked cell's whole VM as bytes.

A snapshot is the guest's linear memory and stack pointer plus the few host-held values
that point into it (the controller's entry points and the tracked rejections). Memory is
diffed page by page against the *canonical image* — the memory every instance has right after the
controller was evaluated — and then compressed, so an idle parked cell takes a few tens of
kilobytes.

That image is the same in every process except for a few dozen *volatile* bytes (QuickJS
seeds `Math.random` and its clocks when a context is created). Those bytes are found by
comparing two fresh images, widened to aligned 16-byte blocks and zeroed in the canonical
image (their pages always travel in the snapshot), and the digest of the normalised image
proves that two processes diff against the same base.

Layout (little-endian):

```text
magic "CLAWSNAP" | u16 format | 32-byte wasm sha256 | 32-byte canonical-image sha256
| u32 memory bytes | u32 stack pointer | u32 meta bytes | meta JSON
| zlib(u32 page count | u32 page numbers… | the 4 KiB pages that differ from the image)
```

Snapshot bytes are refused with `SnapshotError` when the magic, format, reactor build or
canonical image differ. They are trusted input otherwise: whoever can write a snapshot can
run code in the guest (never more than the guest can do), so store them where only the
host writes.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast

from ..._lazy import value_class
from ...errors import SnapshotError
from ._reactor import WASM_SHA256
from ._xor import xor_bytes

__all__ = [
    "CanonicalImage",
    "GuestState",
    "PageSource",
    "SnapshotError",
    "decode",
    "encode",
    "encoded_size_bound",
    "meta_ints",
    "meta_list",
]

MAGIC: Final = b"CLAWSNAP"
FORMAT: Final = 1
_HEADER = struct.Struct("<8sH32s32sIII")


@dataclass(frozen=True)
class CanonicalImage:
    """The memory image every snapshot is diffed against (volatile bytes zeroed)."""

    data: bytes
    digest: bytes

    @classmethod
    def of(cls, first: bytes, second: bytes) -> CanonicalImage:
        """Normalise two fresh images of the same build into one canonical image."""
        data = bytearray(first)
        for start in _volatile_blocks(first, second):
            data[start : start + _BLOCK] = bytes(len(data[start : start + _BLOCK]))
        frozen = bytes(data)
        return cls(frozen, hashlib.sha256(frozen).digest())


_BLOCK: Final = 16


def _volatile_blocks(first: bytes, second: bytes) -> list[int]:
    size = min(len(first), len(second))
    blocks: set[int] = set()
    step = 4096
    for page in range(0, size, step):
        if first[page : page + step] == second[page : page + step]:
            continue
        for offset in range(page, min(page + step, size)):
            if first[offset] != second[offset]:
                block = offset - offset % _BLOCK
                blocks.update((block - _BLOCK, block, block + _BLOCK))
    return sorted(b for b in blocks if 0 <= b < size)


class PageSource(Protocol):
    """A memory to snapshot, read in place (see `LinearMemory`)."""

    @property
    def size(self) -> int: ...

    def differing_pages(self, base: bytes) -> list[int]:
        """Numbers of the 4 KiB pages unlike `base`'s (zero pages past its end)."""
        ...

    def read_pages(self, pages: list[int]) -> bytes:
        """The contents of `pages`, one after another."""
        ...


@value_class
class GuestState:
    """Everything a guest needs to continue: the memory's size and the pages that differ
    from the canonical image, the stack pointer and host-held values."""

    size: int
    pages: list[int]
    contents: bytes
    """The pages' bytes, `PAGE_BYTES` each, in the order of `pages`."""
    stack_pointer: int
    meta: dict[str, Any]

    # A decoded state is a `PageSource` again (against the image it was decoded with), so it
    # can be encoded anew.
    def differing_pages(self, base: bytes) -> list[int]:
        return list(self.pages)

    def read_pages(self, pages: list[int]) -> bytes:
        at = {page: i for i, page in enumerate(self.pages)}
        return b"".join(self.contents[at[p] * _PAGE : (at[p] + 1) * _PAGE] for p in pages)


_PAGE: Final = 4096
_INDEX = struct.Struct("<I")


def _pages(data: bytes, pages: list[int]) -> bytes:
    view = memoryview(data)
    return b"".join(bytes(view[p * _PAGE : (p + 1) * _PAGE]).ljust(_PAGE, b"\0") for p in pages)


def encode(
    memory: PageSource,
    image: CanonicalImage,
    *,
    stack_pointer: int,
    meta: dict[str, Any],
    level: int = 1,
) -> bytes:
    """Serialize and compress a guest's memory: the pages that differ from the image."""
    dirty = memory.differing_pages(image.data)
    body = xor_bytes(memory.read_pages(dirty), _pages(image.data, dirty))
    index = b"".join(_INDEX.pack(p) for p in dirty)
    packed_meta = json.dumps(meta, separators=(",", ":")).encode()
    header = _HEADER.pack(
        MAGIC,
        FORMAT,
        bytes.fromhex(WASM_SHA256),
        image.digest,
        memory.size,
        stack_pointer,
        len(packed_meta),
    )
    packed = _INDEX.pack(len(dirty)) + index + body
    return header + packed_meta + zlib.compress(packed, level)


def encoded_size_bound(memory_bytes: int, meta_bytes: int) -> int:
    """The most bytes `encode` can produce for a memory of this size: every page dirty and
    incompressible (zlib's own `compressBound`), plus the header and metadata."""
    pages = -(-memory_bytes // _PAGE)
    packed = _INDEX.size * (1 + pages) + pages * _PAGE
    compressed = packed + (packed >> 12) + (packed >> 14) + (packed >> 25) + 13
    return _HEADER.size + meta_bytes + compressed


def decode(blob: bytes, image: CanonicalImage, *, max_memory_bytes: int) -> GuestState:
    """Restore a guest state from `encode` output.

    `max_memory_bytes` is checked before any memory is built, so a damaged size field
    cannot make the host allocate gigabytes.

    Raises:
        SnapshotError: wrong magic or format, another reactor build or canonical image,
            a memory larger than `max_memory_bytes`, or corrupt data.
    """
    if len(blob) < _HEADER.size:
        raise SnapshotError("snapshot is truncated: it is shorter than its header")
    magic, fmt, wasm, digest, size, stack_pointer, meta_len = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise SnapshotError("not a clawcell snapshot (bad magic)")
    if fmt != FORMAT:
        raise SnapshotError(f"snapshot format {fmt} is not supported (this build reads {FORMAT})")
    if wasm.hex() != WASM_SHA256:
        raise SnapshotError("snapshot was taken with another QuickJS reactor build")
    if digest != image.digest:
        raise SnapshotError("snapshot was taken with another guest controller image")
    if size > max_memory_bytes:
        raise SnapshotError(
            f"snapshot needs {size} bytes of guest memory; this guest allows at most "
            f"{max_memory_bytes} (raise `memory_limit_bytes` to restore it)"
        )
    start = _HEADER.size
    try:
        meta = json.loads(blob[start : start + meta_len])
        pages, contents = _unpack_pages(_inflate(blob[start + meta_len :], size), image.data, size)
    except (ValueError, zlib.error, struct.error) as exc:
        raise SnapshotError(f"snapshot is corrupt: {exc}") from exc
    if not isinstance(meta, dict):
        raise SnapshotError("snapshot is corrupt: its metadata is not an object")
    return GuestState(
        size=size,
        pages=pages,
        contents=contents,
        stack_pointer=stack_pointer,
        meta=meta,  # pyright: ignore[reportUnknownArgumentType]
    )


def _inflate(data: bytes, size: int) -> bytes:
    """The packed pages, inflated no further than a memory of `size` bytes can need: a
    small damaged stream (a zlib bomb) cannot make the host allocate more than that."""
    pages = size // _PAGE
    bound = _INDEX.size * (1 + pages) + pages * _PAGE
    inflater = zlib.decompressobj()
    packed = inflater.decompress(data, bound + 1)
    if len(packed) > bound:
        raise ValueError(f"its pages inflate past the {bound} bytes a {size}-byte memory needs")
    if not inflater.eof:
        raise ValueError("its page data is truncated")
    return packed


def _unpack_pages(packed: bytes, base: bytes, size: int) -> tuple[list[int], bytes]:
    """The page numbers and the restored contents of the pages a snapshot carries."""
    (count,) = _INDEX.unpack_from(packed)
    pages = [_INDEX.unpack_from(packed, 4 + 4 * i)[0] for i in range(count)]
    body = 4 + 4 * count
    if len(packed) != body + count * _PAGE or size % _PAGE:
        raise ValueError("page data does not match its index")
    if any((page + 1) * _PAGE > size for page in pages):
        raise ValueError("a page lies outside the memory size")
    # Each page is stored as its difference from the image's page (a page past the image's
    # end: from zeros), whatever the order of the index.
    restored = xor_bytes(packed[body:], _pages(base, pages))
    return pages, restored


def meta_list(value: object) -> list[object]:
    """`value` of a decoded snapshot's metadata, which must be a list."""
    if not isinstance(value, list):
        raise SnapshotError("snapshot is corrupt: a list was expected in its metadata")
    return cast(list[object], value)


def meta_ints(value: object, count: int) -> list[int]:
    """`value` of a decoded snapshot's metadata, which must be a list of `count` integers."""
    items = meta_list(value)
    if len(items) != count or not all(isinstance(i, int) for i in items):
        raise SnapshotError("snapshot is corrupt: its host values are malformed")
    return [int(cast(int, i)) for i in items]
