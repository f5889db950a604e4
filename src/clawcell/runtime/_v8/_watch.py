"""The host's memory watchdog of a V8 worker: its resident memory, sampled while it runs a cell.

V8 bounds its own heap (`--max-old-space-size`) and the worker's memory guard accounts for
ArrayBuffer backing stores, but neither sees everything a process can hold (memory a cell
reaches by a path the guard does not wrap, the heap and the buffers together, allocator
slack). The watchdog needs no privileges: while the host waits for a worker's reply, every
`SAMPLE_S` it reads the anonymous resident memory (`/proc/<pid>/statm`: resident minus
file-backed and shared pages, which is `RssAnon` in `status`) of the worker's process tree
(bubblewrap's two small processes and Deno), and the channel kills the worker when the sum
passes its bound: the cell's `memoryLimitBytes` plus `OVERHEAD_MB`. File-backed pages (the
Deno binary) are not counted; nor is shared memory, which a worker without permissions
cannot create (its `SharedArrayBuffer`s are private anonymous memory).

How far a flood can overshoot between two samples is measured in
`bench/bench_v8_memory.py` (docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import os
from typing import Final

__all__ = ["OVERHEAD_MB", "SAMPLE_S", "ResidentWatch", "process_tree", "resident_bytes"]

OVERHEAD_MB: Final = 128
"""Resident memory a worker may hold beyond its cell's limit: Deno itself (about 14 MiB
anonymous when fresh), the worker's 32 MiB of heap beside the cell's, V8's young generation
and code space (outside `--max-old-space-size`), and garbage not yet collected."""
SAMPLE_S: Final = 0.002
"""How often the resident memory is read while a cell runs (one `/proc` read per process)."""
_PAGE: Final = os.sysconf("SC_PAGE_SIZE")


def resident_bytes(pids: list[int]) -> int:
    """The anonymous resident bytes of `pids` (a process that ended counts 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as statm:
                total += _anonymous(statm.read())
        except OSError:
            continue
    return total


def _anonymous(statm: bytes) -> int:
    """Resident minus file-backed and shared pages (`statm`'s 2nd and 3rd fields), in bytes."""
    fields = statm.split(maxsplit=3)
    return (int(fields[1]) - int(fields[2])) * _PAGE


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants, from `/proc/<pid>/task/<tid>/children` (else a scan of
    every process's parent)."""
    tree = [pid]
    index = 0
    while index < len(tree):
        tree += _children(tree[index])
        index += 1
    return tree


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as children:
                found += [int(child) for child in children.read().split()]
        except FileNotFoundError:
            return _children_by_scan(pid)  # a kernel without CONFIG_PROC_CHILDREN
        except OSError:
            continue
    return found


def _children_by_scan(pid: int) -> list[int]:
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(name))
    return found


class ResidentWatch:
    """The resident-memory bound of one worker process (tree).

    Once the worker has started, its processes' `statm` files stay open and each sample is
    one `pread` per process (three with bubblewrap): about 10 µs, not a `/proc` walk.
    """

    def __init__(self, pid: int, limit_bytes: int) -> None:
        self.pid = pid
        self.limit_bytes = limit_bytes
        self._files: list[int] = []

    def over(self) -> int | None:
        """The tree's resident bytes when they pass the bound, else `None`."""
        if not self._files:
            tree = process_tree(self.pid)
            if _name(tree[-1]) == b"bwrap":  # Deno has not started yet
                return _over(resident_bytes(tree), self.limit_bytes)
            self._open(tree)
        resident = 0
        for fd in self._files:
            try:
                resident += _anonymous(os.pread(fd, 256, 0))
            except (OSError, ValueError, IndexError):
                continue  # the process ended
        return _over(resident, self.limit_bytes)

    def _open(self, tree: list[int]) -> None:
        for pid in tree:
            with contextlib.suppress(OSError):
                self._files.append(os.open(f"/proc/{pid}/statm", os.O_RDONLY | os.O_CLOEXEC))

    def close(self) -> None:
        """Close the open `statm` files (idempotent)."""
        files, self._files = self._files, []
        for fd in files:
            with contextlib.suppress(OSError):
                os.close(fd)


def _over(resident: int, limit: int) -> int | None:
    return resident if resident > limit else None


def _name(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/comm", "rb") as comm:
            return comm.read().strip()
    except OSError:
        return b""
