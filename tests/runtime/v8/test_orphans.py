"""A V8 worker dies with its host (issue 34 item 6), whatever it is doing.

Its host is SIGKILLed while the worker boots, while it runs a busy loop, and while it is idle;
then every process of the worker (bubblewrap's two and Deno, or Deno alone) must end within a
bounded wait (each waited for through a pidfd, not polled).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clawcell.runtime import GuestConfig, V8Executor
from clawcell.runtime._v8._guest import V8Guest

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


def _wait_gone(pids: list[int], deadline: float) -> list[int]:
    """The pids of `pids` still running at `deadline` (each watched through a pidfd)."""
    poller = select.poll()
    fds: dict[int, int] = {}
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        fds[fd] = pid
        poller.register(fd, select.POLLIN)
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("sandbox", [True, False], ids=["bwrap", "deno_alone"])
@pytest.mark.parametrize("moment", ["boot", "cell", "idle"])
def test_a_worker_does_not_outlive_a_killed_host(moment: str, sandbox: bool) -> None:
    memory_mib = 601 + 2 * (os.getpid() % 150)  # an odd size of its own names its workers
    marker = f"--max-old-space-size={memory_mib + 32}".encode()
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
    assert _wait_gone(workers, deadline) == []
    assert _wait_gone(_workers(marker), deadline) == []  # none started late either


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
