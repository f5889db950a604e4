"""Writing inside the workspace: atomic replacement, size caps and unified diffs."""

from __future__ import annotations

import contextlib
import difflib
import os
import tempfile
from pathlib import Path

from ..errors import ToolError
from ._confinement import Confinement, not_a_file, not_found
from ._limits import WorkspaceLimits

__all__ = ["decode_text", "encode_text", "remove_file", "unified_diff", "write_bytes"]

_NO_NEWLINE = "\\ No newline at end of file\n"


def write_bytes(
    confinement: Confinement, path: object, data: bytes, limits: WorkspaceLimits
) -> tuple[Path, bool]:
    """Store `data` at `path` atomically; the resolved path and whether the file is new."""
    if len(data) > limits.max_write_bytes:
        raise ToolError(
            f"Content for {path!r} has {len(data)} bytes, more than the "
            f"{limits.max_write_bytes}-byte write cap. Write smaller files.",
            code="content_too_large",
        )
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if real == confinement.root or kind in ("dir", "other"):
        raise not_a_file(path, "a directory" if kind == "dir" else "a device, FIFO or socket")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(
            f"Cannot create the directory for {path!r}: {exc.strerror}. A part of the path "
            "may be a file.",
            code="write_failed",
        ) from exc
    if confinement.resolve(confinement.relative(real.parent)) != real.parent:
        raise ToolError(f"Path {path!r} moved while writing; try again.", code="invalid_path")
    mode = os.stat(real).st_mode & 0o7777 if kind == "file" else 0o644
    try:
        _replace_atomically(real, data, mode)
    except OSError as exc:
        raise ToolError(f"Cannot write {path!r}: {exc.strerror}.", code="write_failed") from exc
    return real, kind is None


def _replace_atomically(real: Path, data: bytes, mode: int) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=real.parent, prefix=".clawcell-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def remove_file(confinement: Confinement, path: object) -> Path:
    """Delete the regular file at `path` (never a directory, never through a symlink out)."""
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if kind is None:
        raise not_found(path)
    if kind != "file":
        raise not_a_file(path, "a directory" if kind == "dir" else "a device, FIFO or socket")
    real.unlink()
    return real


def decode_text(path: object, data: bytes) -> str:
    """`data` as UTF-8 text, or a `ToolError` saying the file is not text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"File {path!r} is not UTF-8 text (byte {exc.start}); it cannot be edited as text.",
            code="binary_file",
        ) from exc


def encode_text(path: object, text: str) -> bytes:
    """`text` as UTF-8, or a `ToolError` when it holds a lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"Content for {path!r} has a lone surrogate at index {exc.start}; "
            "send valid Unicode text.",
            code="invalid_text",
        ) from exc


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of `old` → `new` with `a/` and `b/` prefixes (git style)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}" for line in lines)
