"""What running bubblewrap as PID 1 of a PID namespace of its own costs (`runtime.pid_guard`).

A script, not a test. The guard (`unshare --user --map-current-user --pid --fork
--kill-child` before `bwrap`) closes the window in which a sandbox outlives a killed host
(containers/bubblewrap#633). In alternated rounds (guard, none, none, guard, …, so drift on a
shared machine lands on both) it times, in one process:

* `bwrap`: `bwrap --unshare-all --ro-bind / / -- /bin/true` run to its end, with and without
  the guard before it (the process cost alone), in wall time and in CPU time (`bwrap CPU`:
  user and system time of the processes, the kernel's namespace work included, less at the
  mercy of a loaded machine);
* `v8 boot`: a V8 worker from spawn to its first cell's result (`V8Executor(spares=0)`, one
  `acquire` and `return 1`, then `close`);
* `shell exec`: one `exec({command: "true"})` of the shell tool in its bubblewrap sandbox.

Prints a table of medians (milliseconds) and the guard/none ratio, with the load average
before and after; writes `bench/results/pid_guard.{json,md}`.

    .venv/bin/python bench/bench_pid_guard.py [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import clawcell.runtime._v8._process as v8_process
import clawcell.tools._shell._sandbox as shell_sandbox
from _common import machine_meta, timed_true_commands, write_results
from clawcell.runtime import GuestConfig, V8Executor, bwrap_binary, pid_guard

ARMS = ("guard", "none")
CONFIG = GuestConfig(
    memory_limit_bytes=64 * 1024 * 1024, install_config='{"maxPending":16,"bindings":[]}'
)


def _bwrap_argv(guard: tuple[str, ...], bwrap: str) -> list[str]:
    return [*guard, bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"]


def _bwrap_once(guard: tuple[str, ...], bwrap: str) -> float:
    start = time.perf_counter()
    subprocess.run(_bwrap_argv(guard, bwrap), check=True)
    return time.perf_counter() - start


def _bwrap_cpu(guard: tuple[str, ...], bwrap: str) -> float:
    """The CPU time (user and system, the kernel's namespace work included) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(_bwrap_argv(guard, bwrap), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _v8_once() -> float:
    start = time.perf_counter()
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        assert guest.parse_cell("return 1", time.monotonic() + 60) == 1
        guest.run_segment(1, None, time.monotonic() + 60)
        executor.release(guest)
    finally:
        executor.close()
    return time.perf_counter() - start


def _shell_once(workspace: str) -> float:
    from clawcell.tools import ShellSettings, shell

    tools = shell(workspace, settings=ShellSettings(approval="never", sandbox="required"))
    return statistics.median(asyncio.run(timed_true_commands(tools, 5)))


def _with_guard(
    arm: str, guard: Callable[[str], tuple[str, ...]], run: Callable[[], float]
) -> float:
    chosen = guard if arm == "guard" else _no_guard
    # a bench: both arms in one process, through the modules' own names
    v8_process.pid_guard = chosen  # pyright: ignore[reportAttributeAccessIssue]
    shell_sandbox.pid_guard = chosen  # pyright: ignore[reportAttributeAccessIssue]
    try:
        return run()
    finally:
        v8_process.pid_guard = guard  # pyright: ignore[reportAttributeAccessIssue]
        shell_sandbox.pid_guard = guard  # pyright: ignore[reportAttributeAccessIssue]


def _no_guard(_bwrap: str) -> tuple[str, ...]:
    return ()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    rounds = parser.parse_args().rounds
    bwrap = bwrap_binary()
    assert bwrap is not None and pid_guard(bwrap), "needs bubblewrap and util-linux unshare"
    load_before = os.getloadavg()[0]
    samples: dict[str, dict[str, list[float]]] = {
        name: {arm: [] for arm in ARMS} for name in ("bwrap", "bwrap CPU", "v8 boot", "shell exec")
    }
    with tempfile.TemporaryDirectory() as workspace:
        cases: dict[str, Callable[[], float]] = {
            "bwrap": lambda: _bwrap_once(v8_process.pid_guard(bwrap), bwrap),
            "bwrap CPU": lambda: _bwrap_cpu(v8_process.pid_guard(bwrap), bwrap),
            "v8 boot": _v8_once,
            "shell exec": lambda: _shell_once(workspace),
        }
        for round_ in range(rounds):
            order = ARMS if round_ % 2 == 0 else ARMS[::-1]
            for arm in (*order, *order[::-1]):
                for name, run in cases.items():
                    samples[name][arm].append(_with_guard(arm, pid_guard, run))
    load_after = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    lines = ["| case | guard ms | none ms | guard/none |", "| --- | ---: | ---: | ---: |"]
    for name, arms in samples.items():
        guarded, bare = statistics.median(arms["guard"]), statistics.median(arms["none"])
        rows.append({"case": name, "guard_ms": guarded * 1e3, "none_ms": bare * 1e3})
        lines.append(f"| {name} | {guarded * 1e3:.1f} | {bare * 1e3:.1f} | {guarded / bare:.2f} |")
    lines.append(
        f"\nload average (1 min) {load_before:.1f} before, {load_after:.1f} after; "
        f"{rounds} rounds, {2 * rounds} samples per arm"
    )
    table = "\n".join(lines) + "\n"
    print(table)
    meta = machine_meta(rounds=rounds, load_average_after=round(load_after, 2))
    write_results("pid_guard", {"meta": meta, "rows": rows, "samples": samples}, table)


if __name__ == "__main__":
    main()
