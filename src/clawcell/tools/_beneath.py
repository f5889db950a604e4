"""Opening workspace paths so that no component can lead outside the root, even in a race.

`Confinement` checks a path with `os.path.realpath` first; what it opens is that real path's
components, relative to a descriptor of the root, with no symbolic link allowed anywhere. So a
directory swapped for a symlink by another process between the check and the open is refused
(`ELOOP`/`ENOTDIR`), never followed:

* on Linux ≥ 5.6, one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS` (through `ctypes`; Python has no binding);
* elsewhere, or where a seccomp filter refuses `openat2`, a walk that opens each directory with
  `O_DIRECTORY | O_NOFOLLOW` relative to the previous one, and the last component with
  `O_NOFOLLOW`.

Directories that `write` creates are created the same way (`mkdir` relative to the parent's
descriptor), and files are written, renamed and deleted relative to their directory's
descriptor.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["open_beneath", "open_directory", "use_openat2"]

_SYS_OPENAT2: Final = 437  # the same number on every Linux architecture (asm-generic)
_RESOLVE: Final = 0x02 | 0x04 | 0x08  # NO_MAGICLINKS | NO_SYMLINKS | BENEATH
_DIRECTORY: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64))


class _Openat2:
    """The `openat2` system call, or `None` where it does not exist or is refused."""

    def __init__(self) -> None:
        self.available = sys.platform == "linux"
        self._syscall = ctypes.CDLL(None, use_errno=True).syscall if self.available else None

    def __call__(self, dir_fd: int, path: str, flags: int, mode: int) -> int | None:
        if not self.available or self._syscall is None:
            return None
        # The kernel refuses a mode unless the call may create the file.
        mode = mode if flags & os.O_CREAT else 0
        how = _OpenHow(flags=flags | os.O_CLOEXEC, mode=mode, resolve=_RESOLVE)
        fd = int(
            self._syscall(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_long(dir_fd),
                ctypes.c_char_p(os.fsencode(path)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if fd >= 0:
            return fd
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EPERM, errno.E2BIG):
            self.available = False  # old kernel or a seccomp filter: walk from now on
            return None
        raise OSError(code, os.strerror(code), path)


_openat2 = _Openat2()


def use_openat2(enabled: bool) -> None:
    """Turn the `openat2` path on or off (tests use it to exercise the portable walk)."""
    _openat2.available = enabled and sys.platform == "linux"


def _walk(root_fd: int, parts: Sequence[str], flags: int, mode: int) -> int:
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    finally:
        os.close(fd)


def _root_fd(root: Path) -> int:
    return os.open(root, _DIRECTORY)


def open_beneath(root: Path, parts: Sequence[str], flags: int, mode: int = 0o644) -> int:
    """A descriptor of `root/parts...`, never through a symlink; `OSError` otherwise.

    `parts` empty opens the root itself.
    """
    root_fd = _root_fd(root)
    try:
        if not parts:
            return os.dup(root_fd)
        fd = _openat2(root_fd, "/".join(parts), flags, mode)
        return fd if fd is not None else _walk(root_fd, parts, flags, mode)
    finally:
        os.close(root_fd)


def open_directory(
    root: Path,
    parts: Sequence[str],
    *,
    create: bool = False,
    made: list[tuple[str, ...]] | None = None,
) -> int:
    """A descriptor of the directory `root/parts...`, created (like `mkdir -p`) when asked.

    Every component is opened with `O_NOFOLLOW` relative to its parent, so a symlink anywhere is
    refused (`ELOOP` or `ENOTDIR`) and new directories are made where the check said. The
    directories created are appended to `made` (as component tuples), so they can be undone.
    """
    fd = _root_fd(root)
    try:
        for depth, part in enumerate(parts, start=1):
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                else:
                    if made is not None:
                        made.append(tuple(parts[:depth]))
            inner = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd
