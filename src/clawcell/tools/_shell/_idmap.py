"""An idmapped bind mount: the workspace as a command running under a leased uid sees it.

A command that runs as a leased host uid (`_uid_leases`) could not write a workspace that root
owns. The mount made here shows the workspace's files owned by uid 0 as owned by the leased
uid, and writes what that uid creates back as uid 0, so on disk the workspace looks as it does
when root runs the command. Files of any other owner appear as the overflow uid (`nobody`)
and are read-only to the command. Linux 5.12 or later, as root, on a file system that supports
idmapped mounts (ext4, xfs, btrfs, tmpfs from 6.3, …); `mount_idmapped` raises `OSError`
elsewhere, and the probe in `_uid_leases` then reports that this mechanism does not work here.

The three system calls (`open_tree`, `mount_setattr`, `move_mount`) have the same numbers on
every architecture Linux added them to after 5.1, so no table is needed.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Final

__all__ = ["mount_idmapped", "unmount"]

_AT_FDCWD: Final = -100
_AT_EMPTY_PATH: Final = 0x1000
_OPEN_TREE_CLONE: Final = 1
_OPEN_TREE_CLOEXEC: Final = 0o2000000
_MOVE_MOUNT_F_EMPTY_PATH: Final = 0x4
_MOUNT_ATTR_IDMAP: Final = 0x00100000
_MNT_DETACH: Final = 2
_CLONE_NEWUSER: Final = 0x10000000
_SYS_OPEN_TREE: Final = 428
_SYS_MOVE_MOUNT: Final = 429
_SYS_MOUNT_SETATTR: Final = 442


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, what: str, path: Path) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what} of {str(path)!r}: {os.strerror(errno)}")
    return result


def _unshare_user() -> None:
    if _libc().unshare(_CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")


def _holder() -> subprocess.Popen[bytes]:
    """A process in a new user namespace, waiting on its stdin (it has said so on stdout).

    util-linux `unshare` when installed: then CPython can `vfork`, which costs a fraction of
    forking the whole host process for a `preexec_fn` (the fallback)."""
    found = shutil.which("unshare", path="/usr/bin:/bin")
    wait = ["/bin/sh", "-c", "echo; read _"]
    holder = subprocess.Popen(
        [found, "--user", "--", *wait] if found else wait,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=None if found else _unshare_user,  # noqa: PLW1509 - one unshare call
        close_fds=True,
        env={},
    )
    assert holder.stdout is not None
    if holder.stdout.readline() != b"\n":  # it ended without entering its namespace
        holder.wait()
        raise OSError(f"could not create a user namespace (exit status {holder.returncode})")
    return holder


def _user_namespace(uid: int) -> int:
    """A descriptor of a new user namespace whose uid and gid 0 are `uid` outside."""
    holder = _holder()
    try:
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{holder.pid}/{name}").write_text(f"0 {uid} 1\n")
        return os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        holder.kill()
        holder.wait()
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()


def mount_idmapped(source: Path, target: Path, uid: int) -> None:
    """Mount `source` (not its submounts) at the existing directory `target`, its uid/gid 0
    shown as `uid`.

    Raises:
        OSError: the kernel, the file system or the caller's privileges do not allow it.
    """
    libc = _libc()
    userns = _user_namespace(uid)
    tree = -1
    try:
        tree = _check(
            libc.syscall(
                _SYS_OPEN_TREE,
                _AT_FDCWD,
                str(source).encode(),
                ctypes.c_uint(_OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC),
            ),
            "open_tree",
            source,
        )
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", _MOUNT_ATTR_IDMAP, 0, 0, userns))
        _check(
            libc.syscall(
                _SYS_MOUNT_SETATTR,
                tree,
                b"",
                ctypes.c_uint(_AT_EMPTY_PATH),
                attr,
                ctypes.c_size_t(32),
            ),
            "mount_setattr(MOUNT_ATTR_IDMAP)",
            source,
        )
        _check(
            libc.syscall(
                _SYS_MOVE_MOUNT,
                tree,
                b"",
                _AT_FDCWD,
                str(target).encode(),
                ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH),
            ),
            "move_mount",
            target,
        )
    finally:
        os.close(userns)
        if tree >= 0:
            os.close(tree)


def unmount(target: Path) -> None:
    """Detach everything mounted at `target` (nothing when nothing is)."""
    for _ in range(64):  # mounts stacked there by an earlier process that crashed
        try:
            _check(_libc().umount2(str(target).encode(), _MNT_DETACH), "umount2", target)
        except OSError:
            return
