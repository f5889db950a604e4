"""A guest's pristine image kept on disk beside the compiled engine, for the next process.

Building a process's first guest evaluates the controller, installs the catalog and captures
the image (about a tenth of a cold start); every later guest of the same configuration is a
copy of that image. The image hardly depends on the process: the controller and catalog are
the same text and QuickJS allocates deterministically. What differs is set when the context
is created: QuickJS's random seed, which no cell reads (`Math.random` is the controller's,
seeded by the host at each cell's start), and the origin of `performance.now()`, which a
copy of an image already takes from the store that made it (docs/runtime.md). So the first
process of a configuration writes its image here and later processes load it instead.

The file's name is a digest of everything the image depends on (the engine cache's name,
which carries the wasm digest, the export patch and the wasmtime build; the controller's
digest; the install configuration; the heap limit and headroom; this format), so a change of
any of them is another file. Only the image's non-blank pages are stored (about 0.5 MiB of a
6.6 MiB memory). A file that is truncated, damaged (its CRC-32 disagrees) or malformed (page
runs or buffer addresses outside the memory) is ignored: the guest is built as before and the
file written again. The directory is the engine cache's, trusted as that cache is (whoever can
write there can replace the compiled engine's native code already);
`CLAWCELL_NO_MODULE_CACHE` turns both off.

Layout (little-endian): magic `CLAWIMG1` | u32 meta bytes | u32 CRC-32 of what follows |
meta JSON (size, stack pointer, page runs, host-held handles) | the runs' pages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import struct
import threading
import zlib
from typing import Any, Final, cast

from ..._lazy import value_class
from ._engine import engine_cache_file, files_named, keep_newest
from ._pages import PAGE_BYTES

__all__ = [
    "StoredImage",
    "flush_writes",
    "guest_image_path",
    "image_path",
    "read_image",
    "write_image",
    "write_image_soon",
]

MAGIC: Final = b"CLAWIMG1"
_HEADER = struct.Struct("<8sII")
_KEPT_IMAGES: Final = 16
"""Image files kept per cache directory (the newest; one per configuration in use)."""
_POINTERS: Final = ("rt", "ctx", "scratch", "argv", "staging", "filename")
"""Handles that are addresses in linear memory (the others are JS values and table slots)."""


@value_class
class StoredImage:
    """A pristine image as stored: the memory's size and stack pointer, its non-blank pages
    as `(first page, count)` runs with their bytes one after another, and the host-held
    values that point into it (the runtime, context, buffers, callback slots and entry
    points, by name)."""

    size: int
    stack_pointer: int
    runs: list[tuple[int, int]]
    pages: bytes | memoryview
    """(A read image's is a view of its file's mapping.)"""
    handles: dict[str, int]


def guest_image_path(*parts: str) -> str | None:
    """Where the pristine image of the guest configuration `parts` describe (the
    controller's digest, the install configuration, the heap limit and headroom) is stored,
    or `None` when the engine's cache is off."""
    cache = engine_cache_file()
    if cache is None:
        return None
    directory, name = os.path.split(cache)
    return image_path(directory, name, *parts, str(PAGE_BYTES))


def image_path(directory: str, *parts: str) -> str:
    """The file of the image that `parts` (everything it depends on) describe."""
    digest = hashlib.sha256("\0".join(("image-format-1", *parts)).encode()).hexdigest()
    return os.path.join(directory, f"img-{digest[:32]}.bin")


def read_image(path: str, *, max_size: int) -> StoredImage | None:
    """The image stored at `path`, or `None` when there is none or it cannot be trusted to
    be whole (truncated, damaged, malformed, or larger than `max_size` bytes of memory).

    The file is mapped, not read: its pages are the page cache's, mapped a few dozen
    kilobytes per fault, where a read copied them into fresh memory (a zeroed page per 4 KiB,
    twice with the copy of the pages out of it), a fifth of loading a first guest. The
    file is replaced by renaming, never rewritten in place, so a mapping keeps the file it
    was made of; the directory is trusted as the engine cache is, whose compiled code
    wasmtime maps the same way.
    """
    try:
        with open(path, "rb") as handle:
            blob = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, or empty (nothing to map)
        return None
    try:
        return _decode(blob, max_size)
    except (ValueError, TypeError, KeyError, struct.error):
        return None


def _decode(blob: mmap.mmap, max_size: int) -> StoredImage | None:
    magic, meta_bytes, crc = _HEADER.unpack_from(blob)
    body = memoryview(blob)[_HEADER.size :]
    if magic != MAGIC or zlib.crc32(body) != crc:
        return None
    meta = json.loads(bytes(body[:meta_bytes]))
    size, sp = int(meta["size"]), int(meta["sp"])
    runs = [(int(first), int(count)) for first, count in meta["runs"]]
    handles = {str(k): int(v) for k, v in cast(dict[str, Any], meta["handles"]).items()}
    pages = body[meta_bytes:]  # a view of the mapping: loading the image copies from it
    total = sum(count for _, count in runs)
    if not 0 < size <= max_size or size % PAGE_BYTES or len(pages) != total * PAGE_BYTES:
        return None
    if any(not 0 <= value < 1 << 64 for value in handles.values()):
        return None
    if any(not 0 <= handles.get(name, 0) < size for name in _POINTERS):
        return None  # the host writes through these: they must lie inside the memory
    end = -1
    for first, count in runs:  # ascending, disjoint, inside the memory
        if first <= end or count <= 0 or (first + count) * PAGE_BYTES > size:
            return None
        end = first + count - 1
    return StoredImage(size=size, stack_pointer=sp, runs=runs, pages=pages, handles=handles)


def write_image(path: str, image: StoredImage) -> None:
    """Store `image` at `path` atomically (written aside, then renamed), and remove the
    oldest image files beyond the newest few; a directory that cannot be written is left
    alone (the next process builds its guest, as without the file)."""
    meta = {
        "size": image.size,
        "sp": image.stack_pointer,
        "runs": image.runs,
        "handles": image.handles,
    }
    packed = json.dumps(meta, separators=(",", ":")).encode()
    body = packed + image.pages
    blob = _HEADER.pack(MAGIC, len(packed), zlib.crc32(body)) + body
    directory, name = os.path.split(path)
    aside = os.path.join(directory, f".{name}.{os.urandom(6).hex()}.tmp")
    with contextlib.suppress(OSError):
        os.makedirs(directory, exist_ok=True)
        with open(aside, "wb") as file:
            file.write(blob)
        os.replace(aside, path)
    with contextlib.suppress(OSError):
        os.unlink(aside)  # (gone once renamed)
    _prune(directory)


_writers: list[threading.Thread] = []


def write_image_soon(path: str, image: StoredImage) -> None:
    """`write_image` on a thread of its own: the guest that made the image does not wait for
    the disk (about 1.3 ms of CPU and several of wall time on a loaded machine). The thread is
    not a daemon, so a process that ends right after its first cell still stores the image
    (the interpreter waits for it at exit)."""
    writer = threading.Thread(target=write_image, args=(path, image), name="clawcell-image")
    _writers[:] = [w for w in _writers if w.is_alive()] + [writer]
    writer.start()


def flush_writes() -> None:
    """Wait until every image `write_image_soon` started is written (or given up)."""
    for writer in list(_writers):
        writer.join()


def _prune(directory: str) -> None:
    with contextlib.suppress(OSError):
        keep_newest(files_named(directory, "img-", ".bin"), _KEPT_IMAGES)
