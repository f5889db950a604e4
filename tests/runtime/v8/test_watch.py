"""The host's memory watchdog of V8 workers: resident memory read from `/proc`, and a worker
past its bound killed by its channel, without any privilege and without Deno."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from clawcell.runtime._v8._process import Channel, WorkerDied
from clawcell.runtime._v8._watch import ResidentWatch, process_tree, resident_bytes

MIB = 1024 * 1024
# A child that writes 200 MiB (so the pages are resident), says so, and waits.
HOLDER = "import sys, time\nb = b'x' * (200 << 20)\nprint('{}', flush=True)\ntime.sleep(60)\n"


@pytest.fixture
def holder() -> Iterator[subprocess.Popen[bytes]]:
    process = _python(HOLDER)
    assert process.stdout is not None
    assert process.stdout.readline() == b"{}\n"
    yield process
    _end(process)


def _python(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def test_resident_bytes_count_written_anonymous_memory(holder: subprocess.Popen[bytes]) -> None:
    assert resident_bytes([holder.pid]) > 200 * MIB
    assert resident_bytes([]) == 0
    assert resident_bytes([2**22 + 17]) == 0  # no such process: nothing, no error


def test_a_process_tree_lists_the_process_and_its_descendants() -> None:
    parent = _python(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\ntime.sleep(60)\n"
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        try:
            assert process_tree(parent.pid) == [parent.pid, child]
        finally:
            os.kill(child, signal.SIGKILL)
    finally:
        _end(parent)


def test_the_watch_reports_a_tree_over_its_bound_only(holder: subprocess.Popen[bytes]) -> None:
    over = ResidentWatch(holder.pid, 100 * MIB).over()
    assert over is not None and over > 200 * MIB
    assert ResidentWatch(holder.pid, 1024 * MIB).over() is None


def test_a_channel_kills_a_worker_past_its_bound_while_it_waits() -> None:
    flood = _python("import time\nb = b'x' * (300 << 20)\ntime.sleep(60)\n")
    channel = Channel(flood, watch=ResidentWatch(flood.pid, 100 * MIB))
    try:
        with pytest.raises(WorkerDied, match=r"out of memory: the worker held \d+ MiB"):
            channel.receive(time.monotonic() + 60)
        assert channel.over_memory
        assert flood.wait(timeout=10) != 0
    finally:
        channel.close()


def test_a_channel_within_its_bound_reads_replies() -> None:
    worker = _python("import sys\nsys.stdout.write(sys.stdin.readline())\nsys.stdout.flush()\n")
    channel = Channel(worker, watch=ResidentWatch(worker.pid, 1024 * MIB))
    try:
        channel.send({"op": "echo"}, time.monotonic() + 30)
        assert channel.receive(time.monotonic() + 30) == {"op": "echo"}
        assert not channel.over_memory
    finally:
        channel.close()
