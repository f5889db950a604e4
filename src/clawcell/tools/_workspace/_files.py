"""Writing inside the workspace: atomic replacement, size caps and unified diffs."""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import stat
from pathlib import Path

from ...errors import ToolError
from .._beneath import open_directory
from ._confinement import Confinement, not_a_file, not_found
from ._workspace_limits import WorkspaceLimits

__all__ = [
    "decode_text",
    "encode_text",
    "remove_directory",
    "remove_file",
    "unified_diff",
    "write_bytes",
]

_NO_NEWLINE = "\\ No newline at end of file\n"


def write_bytes(
    confinement: Confinement,
    path: object,
    data: bytes,
    limits: WorkspaceLimits,
    *,
    mode: int | None = None,
    made: list[tuple[str, ...]] | None = None,
) -> tuple[Path, bool]:
    """Store `data` at `path` atomically; the resolved path and whether the file is new.

    Directories are created and the file is written and renamed relative to descriptors opened
    beneath the root (`_beneath`), never through a symlink. An existing file keeps its mode
    unless `mode` is given; directories created are appended to `made`.
    """
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
    parts = confinement.parts(real)
    try:
        directory = open_directory(confinement.root, parts[:-1], create=True, made=made)
    except OSError as exc:
        raise ToolError(
            f"Cannot create the directory for {path!r}: {exc.strerror}. A part of the path "
            "may be a file or a symbolic link.",
            code="write_failed",
        ) from exc
    try:
        _replace_at(directory, parts[-1], data, mode)
    except OSError as exc:
        raise ToolError(f"Cannot write {path!r}: {exc.strerror}.", code="write_failed") from exc
    finally:
        os.close(directory)
    return real, kind is None


def _replace_at(directory: int, name: str, data: bytes, mode: int | None) -> None:
    if mode is None:
        try:
            found = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
        except FileNotFoundError:
            found = 0
        mode = found & 0o7777 if stat.S_ISREG(found) else 0o644
    temporary = f".clawcell-{secrets.token_hex(8)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, 0o600, dir_fd=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise


def remove_file(confinement: Confinement, path: object) -> tuple[Path, int]:
    """Delete the regular file at `path` (never a directory, never through a symlink out).

    Returns its resolved path and the mode it had.
    """
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if kind is None:
        raise not_found(path)
    if kind != "file":
        raise not_a_file(path, "a directory" if kind == "dir" else "a device, FIFO or socket")
    parts = confinement.parts(real)
    try:
        directory = open_directory(confinement.root, parts[:-1])
        try:
            found = os.stat(parts[-1], dir_fd=directory, follow_symlinks=False).st_mode
            if not stat.S_ISREG(found):
                raise not_a_file(path, "not a regular file any more")
            os.unlink(parts[-1], dir_fd=directory)
        finally:
            os.close(directory)
    except FileNotFoundError as exc:
        raise not_found(path) from exc
    except OSError as exc:
        raise ToolError(f"Cannot delete {path!r}: {exc.strerror}.", code="write_failed") from exc
    return real, found & 0o7777


def remove_directory(confinement: Confinement, parts: tuple[str, ...]) -> None:
    """Remove the empty directory `parts` below the root (beneath it, never through a link)."""
    directory = open_directory(confinement.root, parts[:-1])
    try:
        os.rmdir(parts[-1], dir_fd=directory)
    finally:
        os.close(directory)


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
