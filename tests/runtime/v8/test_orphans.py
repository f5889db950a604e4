"""A V8 worker dies with its host (issue 34 item 6), whatever it is doing.

Its host is SIGKILLed while the worker boots, while it runs a busy loop, and while it is idle,
and (`held`) while bubblewrap holds the sandbox's first process before it has a parent-death
signal (containers/bubblewrap#633, deterministic through `--userns-block-fd`); then every
process of the worker (`unshare`'s two, bubblewrap's two and Deno, or Deno alone) must end
within a bounded wait (each waited for through a pidfd, not polled).

Each case names its workers by a V8 heap size no live process carries when it starts (a
marker of its own: a leftover of another case, or of another test run, is not counted here,
and cannot make this case fail).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clawcell.runtime import GuestConfig, V8Executor
from clawcell.runtime._v8._guest import V8Guest
from clawcell.runtime._v8._process import spawn
from clawcell.runtime._v8._watch import process_tree
from tests._pidfds import wait_gone

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 20.0


def _workers(marker: bytes) -> list[int]:
    """Live processes whose command line carries `marker` (a worker's heap flag)."""
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if any(marker in arg for arg in cmdline.split(b"\0")):
            found.append(int(name))
    return found


def _unused_marker() -> tuple[int, bytes]:
    """A cell memory size (MiB) whose worker heap flag no live process carries, and that flag.

    Odd sizes from 301 to 899, starting at one drawn from this process and the clock, so
    that parallel test processes rarely try the same one; one a live process carries is
    skipped.
    """
    taken = set(_arguments())
    start = os.getpid() * 7919 + time.monotonic_ns()
    for step in range(300):
        memory_mib = 301 + 2 * ((start + step) % 300)
        marker = f"--max-old-space-size={memory_mib + 32}".encode()
        if all(marker not in arg for arg in taken):
            return memory_mib, marker
    raise AssertionError("every marker is carried by a live process")


def _arguments() -> list[bytes]:
    """The command-line arguments of every live process."""
    found: list[bytes] = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                found += Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
    return found


MOMENTS = [
    pytest.param("boot", True, id="boot-bwrap"),
    pytest.param("boot", False, id="boot-deno_alone"),
    pytest.param("held", True, id="held_at_clone-bwrap"),
    pytest.param("cell", True, id="cell-bwrap"),
    pytest.param("cell", False, id="cell-deno_alone"),
    pytest.param("idle", True, id="idle-bwrap"),
    pytest.param("idle", False, id="idle-deno_alone"),
]


@pytest.mark.parametrize(("moment", "sandbox"), MOMENTS)
def test_a_worker_does_not_outlive_a_killed_host(moment: str, sandbox: bool) -> None:
    memory_mib, marker = _unused_marker()
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.runtime.v8._host",
            moment,
            str(memory_mib),
            str(int(sandbox)),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        assert host.stdout.readline().strip() == "ready"
        workers = _workers(marker)
        assert workers, "the host started no worker"
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()
    deadline = time.monotonic() + WAIT_S
    assert wait_gone(workers, deadline) == []
    assert wait_gone(_workers(marker), deadline) == []  # none started late either


def test_a_worker_started_from_a_thread_that_ended_still_runs_cells() -> None:
    # The parent-death signal follows the thread that forked the worker: started from a
    # caller's short-lived thread, the worker would die with that thread.
    executor = V8Executor(spares=0)
    config = GuestConfig(
        memory_limit_bytes=64 * 1024 * 1024, install_config='{"maxPending":16,"bindings":[]}'
    )
    taken: list[V8Guest] = []
    thread = threading.Thread(target=lambda: taken.append(executor.acquire(config)))
    thread.start()
    thread.join()
    [guest] = taken
    try:
        assert guest.parse_cell("return 6 * 7", time.monotonic() + 60) == 1
        result = guest.run_segment(1, None, time.monotonic() + 60)
        assert getattr(result, "value_json", None) == "42", result
    finally:
        executor.release(guest)
        executor.close()


@pytest.mark.parametrize("sandbox", [True, False], ids=["bwrap", "deno_alone"])
def test_a_worker_whose_stdin_closes_while_it_boots_ends_with_all_its_processes(
    sandbox: bool,
) -> None:
    # The one moment no parent-death signal covers: `unshare` killed between its `fork()`
    # and its child's `prctl` leaves the sandbox running with no signal to come; the host
    # is gone, so the worker's stdin has no writer left, and the worker must end on it.
    process = spawn(96, sandbox=sandbox)
    try:
        tree = process_tree(process.pid)
        assert process.stdin is not None
        process.stdin.close()
        # `unshare`, and bubblewrap without it, ends only once the sandbox's PID 1 has ended
        assert process.wait(WAIT_S) == 0
        assert wait_gone(tree, time.monotonic() + WAIT_S) == []
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
