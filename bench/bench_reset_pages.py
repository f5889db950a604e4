"""A guest reset that copies only the pages a cell wrote, against today's full copy.

A script, not a test (issue 39). `LinearMemory.reset` copies every non-blank page of the
pristine image back (about 0.65 MB) and drops the image's zero runs (the stack, the free heap);
a cell writes only some of those pages. Three ways to restore a guest's memory, each timed as
*one cell plus the reset after it* (a write-tracking scheme moves cost into the cell, as page
faults), alternated cell by cell on one guest:

- `full`: today's reset.
- `compare`: `memcmp` the copied region with the image, 64 KiB at a time, page by page inside a
  chunk that differs, and copy only the differing pages; the zero runs are dropped as before.
- `uffd`: the copied region write-protected with userfaultfd in asynchronous mode (Linux 6.7+,
  `UFFD_USER_MODE_ONLY`, no privilege): the kernel resolves the cell's first write to each page
  itself and marks it written; after the cell, one `PAGEMAP_SCAN` returns the written pages and
  protects them again, they are copied back, and a second scan protects them once more (the
  copy wrote them). Skipped where the kernel refuses.

Times are the thread's CPU time (`time.thread_time_ns`: the kernel's page-fault work included),
which the load on a shared machine disturbs less than wall time.

Each mode's reset is checked: the memory must equal the image outside the zero runs. Prints the
medians (µs per cell + reset, and the reset alone), the paired ratios against `full`, the pages
the cells wrote, and the load average; writes `bench/results/reset_pages.{json,md}`.

    .venv/bin/python bench/bench_reset_pages.py [--cells 400]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from clawcell.runtime import GuestPool
from clawcell.runtime._guest import Guest  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._linear_memory import LinearMemory  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._pages import CHUNK_BYTES, PAGE_BYTES, same_bytes

RESULTS = Path(__file__).resolve().parent / "results"
INSTALL = '{"maxPending":16,"bindings":[],"bench":"reset_pages"}'
CELLS = {
    "return 1": "return 1;",
    "200 KB of strings": (
        "const a = [];\nfor (let i = 0; i < 2000; i++) a.push('x' + i + 'y'.repeat(90));\n"
        "return a.length;"
    ),
}
MODES = ("full", "compare", "uffd")


class _Uffd:
    """userfaultfd write-protection (async) of a range, and PAGEMAP_SCAN of its written pages."""

    class _Region(ctypes.Structure):
        _fields_ = [("start", ctypes.c_uint64), ("end", ctypes.c_uint64), ("cat", ctypes.c_uint64)]

    class _Scan(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in [
                "size",
                "flags",
                "start",
                "end",
                "walk_end",
                "vec",
                "vec_len",
                "max_pages",
                "category_inverted",
                "category_mask",
                "category_anyof_mask",
                "return_mask",
            ]
        ]

    def __init__(self, start: int, length: int, runs: list[tuple[int, int]]) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
        self._ioctl = libc.ioctl
        fd = libc.syscall(323, os.O_CLOEXEC | 1)  # userfaultfd(UFFD_USER_MODE_ONLY), x86-64
        if fd < 0:
            raise OSError(ctypes.get_errno(), "userfaultfd")
        api = (ctypes.c_uint64 * 3)(0xAA, 1 << 15, 0)  # UFFD_FEATURE_WP_ASYNC
        register = (ctypes.c_uint64 * 4)(start, length, 2, 0)  # UFFDIO_REGISTER_MODE_WP
        # Only the copied runs are protected (and scanned): the zero runs are dropped anyway.
        protect = [(ctypes.c_uint64 * 3)(start + o, n, 1) for o, n in runs]  # MODE_WP
        for request, arg in [(0xC018AA3F, api), (0xC020AA00, register)] + [
            (0xC018AA06, p) for p in protect
        ]:
            if libc.ioctl(fd, request, ctypes.byref(arg)) != 0:
                raise OSError(ctypes.get_errno(), f"userfaultfd ioctl {request:#x}")
        self._runs = [(start + o, start + o + n) for o, n in runs]
        self._fd = fd
        self._pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
        self._vec = (self._Region * 256)()
        written = 1 << 1  # PAGE_IS_WRITTEN
        self._scan = self._Scan(96, 3, start, start + length, 0, ctypes.addressof(self._vec), 256)
        self._scan.category_mask = self._scan.return_mask = written
        self._scan_ref = ctypes.byref(self._scan)
        self._start = start

    def written(self) -> list[tuple[int, int]]:
        """(address, length) of each run written since the last scan; protected again."""
        found, vec, scan = list[tuple[int, int]](), self._vec, self._scan
        for start, end in self._runs:
            scan.start, scan.end, scan.walk_end = start, end, 0
            count = self._ioctl(self._pagemap, 0xC0606610, self._scan_ref)  # PAGEMAP_SCAN
            if count < 0:
                raise OSError(ctypes.get_errno(), "PAGEMAP_SCAN")
            found += [(vec[i].start, vec[i].end - vec[i].start) for i in range(count)]
        return found


def _copied_runs(memory: LinearMemory) -> list[tuple[int, int]]:
    """(offset, length) of the image's regions a reset copies (all but its zero runs)."""
    runs, at = list[tuple[int, int]](), 0
    for offset, length in memory._zero_runs:  # pyright: ignore[reportPrivateUsage]
        runs.append((at, offset - at))
        at = offset + length
    runs.append((at, len(memory.image) - at))
    return [(o, n) for o, n in runs if n]


def _drop_runs_and_finish(memory: LinearMemory) -> None:
    """The rest of a reset once the copied region is the image's: drop the zero runs, set the
    stack pointer and epoch (what `reset` does around its copy)."""
    from clawcell.runtime._wasm._pages import drop_pages

    base = memory.base
    for offset, length in memory._zero_runs:  # pyright: ignore[reportPrivateUsage]
        if not drop_pages(base + offset, length):
            ctypes.memset(base + offset, 0, length)
    memory._replace(start=len(memory.image))  # pyright: ignore[reportPrivateUsage]


def _reset_compare(memory: LinearMemory, runs: list[tuple[int, int]]) -> int:
    here, there, copied = memory.base, memory._image_address, 0  # pyright: ignore[reportPrivateUsage]
    for offset, length in runs:
        for chunk in range(offset, offset + length, CHUNK_BYTES):
            size = min(CHUNK_BYTES, offset + length - chunk)
            if same_bytes(here + chunk, there + chunk, size):
                continue
            for page in range(chunk, chunk + size, PAGE_BYTES):
                if not same_bytes(here + page, there + page, PAGE_BYTES):
                    ctypes.memmove(here + page, there + page, PAGE_BYTES)
                    copied += 1
    _drop_runs_and_finish(memory)
    return copied


def _reset_uffd(memory: LinearMemory, uffd: _Uffd) -> int:
    here, there, copied = memory.base, memory._image_address, 0  # pyright: ignore[reportPrivateUsage]
    for address, length in uffd.written():
        ctypes.memmove(address, there + (address - here), length)
        copied += length // PAGE_BYTES
    uffd.written()  # the copy wrote them: protect them again
    _drop_runs_and_finish(memory)
    return copied


def _pristine(memory: LinearMemory, runs: list[tuple[int, int]]) -> bool:
    here, there = memory.base, memory._image_address  # pyright: ignore[reportPrivateUsage]
    return all(same_bytes(here + o, there + o, n) for o, n in runs)


def _run_cell(guest: Guest, code: str) -> None:
    later = time.monotonic() + 30
    script = guest.parse_cell(code, later)
    assert isinstance(script, int), script
    report = guest.run_segment(script, None, later)
    assert not hasattr(report, "kind"), report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cells", type=int, default=400, help="cells per mode and kind")
    args = parser.parse_args()
    guest = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL).acquire()
    memory = guest.instance.memory
    runs = _copied_runs(memory)
    copied_bytes = sum(n for _, n in runs)
    modes: list[str] = list(MODES)
    uffd: _Uffd | None = None
    try:
        start, end = runs[0][0], runs[-1][0] + runs[-1][1]
        uffd = _Uffd(memory.base + start, end - start, [(o - start, n) for o, n in runs])
        uffd.written()
    except OSError as exc:
        print(f"uffd mode skipped: {exc}")
        modes.remove("uffd")
    load = os.getloadavg()[0]
    results: dict[str, Any] = {"copied_bytes": copied_bytes, "load": [load], "kinds": {}}
    for kind, code in CELLS.items():
        samples: dict[str, list[tuple[float, float, int]]] = {m: [] for m in modes}
        for i in range(args.cells * len(modes)):
            mode = modes[(i + i // len(modes)) % len(modes)]  # rotate the order each lap
            t0 = time.thread_time_ns()
            _run_cell(guest, code)
            t1 = time.thread_time_ns()
            if mode == "full":
                memory.reset()
                pages = -1
            elif mode == "compare":
                pages = _reset_compare(memory, runs)
            else:
                assert uffd is not None
                pages = _reset_uffd(memory, uffd)
            t2 = time.thread_time_ns()
            assert _pristine(memory, runs), (mode, kind)
            if uffd is not None and mode != "uffd":
                uffd.written()  # untimed: the other modes' copies count as writes
            guest._stale = False  # pyright: ignore[reportPrivateUsage]
            samples[mode].append(((t2 - t0) / 1000, (t2 - t1) / 1000, pages))
        results["kinds"][kind] = {
            m: {
                "cell_and_reset_us": statistics.median(s[0] for s in samples[m]),
                "reset_us": statistics.median(s[1] for s in samples[m]),
                "pages_copied": statistics.median(s[2] for s in samples[m]),
                "paired_ratio_to_full": statistics.median(
                    a[0] / b[0] for a, b in zip(samples[m], samples["full"], strict=True)
                ),
            }
            for m in modes
        }
    results["load"].append(os.getloadavg()[0])
    lines = [
        f"copied region of the image: {copied_bytes} bytes ({copied_bytes // PAGE_BYTES} pages); "
        f"load average {results['load'][0]:.1f} → {results['load'][1]:.1f}; {args.cells} cells "
        "per mode and kind, alternated",
        "",
        "| cell | mode | cell + reset µs | reset µs | pages copied | paired ratio to full |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, by_mode in results["kinds"].items():
        for mode, row in by_mode.items():
            pages = "all" if row["pages_copied"] < 0 else f"{row['pages_copied']:.0f}"
            lines.append(
                f"| {kind} | {mode} | {row['cell_and_reset_us']:.1f} | {row['reset_us']:.1f} "
                f"| {pages} | {row['paired_ratio_to_full']:.2f} |"
            )
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reset_pages.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "reset_pages.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
