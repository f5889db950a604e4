"""The host's memory watchdog of a V8 worker: its resident memory, sampled while it runs a cell.

V8 bounds its own heap (`--max-old-space-size`) and the worker's memory guard accounts for
ArrayBuffer backing stores, but neither sees everything a process can hold (memory a cell
reaches by a path the guard does not wrap, the heap and the buffers together, allocator
slack). The watchdog needs no privileges: while the host waits for a worker's reply, every
`SAMPLE_S` it reads the anonymous and shared resident memory (`RssAnon` + `RssShmem` in
`/proc/<pid>/status`) of the worker's process tree (bubblewrap's two small processes and Deno),
and the channel kills the worker when the sum passes its bound: the cell's
`memoryLimitBytes` plus `OVERHEAD_MB`. File-backed pages (the Deno binary) are not counted.

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
_FIELDS: Final = (b"RssAnon:", b"RssShmem:")


def resident_bytes(pids: list[int]) -> int:
    """The anonymous and shared resident bytes of `pids` (a process that ended counts 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", "rb") as status:
                text = status.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(_FIELDS):
                total += int(line.split()[1]) * 1024  # in kB
    return total


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
    """The resident-memory bound of one worker process (tree)."""

    def __init__(self, pid: int, limit_bytes: int) -> None:
        self.pid = pid
        self.limit_bytes = limit_bytes
        self._tree: list[int] = []

    def over(self) -> int | None:
        """The tree's resident bytes when they pass the bound, else `None`."""
        if not self._tree or not os.path.exists(f"/proc/{self._tree[-1]}"):
            tree = process_tree(self.pid)
            if _name(tree[-1]) != b"bwrap":  # Deno has started: the tree is complete
                self._tree = tree
            return _over(resident_bytes(tree), self.limit_bytes)
        return _over(resident_bytes(self._tree), self.limit_bytes)


def _over(resident: int, limit: int) -> int | None:
    return resident if resident > limit else None


def _name(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/comm", "rb") as comm:
            return comm.read().strip()
    except OSError:
        return b""
