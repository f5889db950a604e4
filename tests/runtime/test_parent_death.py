"""A child started for the host dies with it, including when the host dies before the child
has set its parent-death signal.

Each case runs a small program (`MIDDLE`) as the stand-in host: it forks a child that calls
`die_with_parent(<middle's pid>)` and reports on a pipe, then waits on a pipe that only the
test can end; the test controls when the middle process dies. A pipe's end (not a timer)
tells that a process has ended.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap

WAIT_S = 20.0

MIDDLE = textwrap.dedent(
    """
    import os, select, sys
    from clawcell.runtime import die_with_parent

    early = sys.argv[1] == "early"
    report, hold = int(sys.argv[2]), int(sys.argv[3])
    host = os.getpid()
    if os.fork() == 0:
        if early:  # the parent's pidfd is readable once it has exited and handed its children on
            select.select([os.pidfd_open(host)], [], [])
        die_with_parent(host)
        os.write(report, b"armed\\n")
        os.read(hold, 1)  # only the test ends it (or the parent-death signal)
        os.write(report, b"outlived\\n")
        os._exit(0)
    os.close(report)
    print("forked", flush=True)
    if early:
        os._exit(0)  # dies before its child has set the signal
    sys.stdin.read()  # until the test kills it
    """
)


def _child_says(early: bool) -> tuple[bytes, int]:
    """What the child reported before it ended, and the middle process's exit status."""
    report_read, report_write = os.pipe()
    hold_read, hold_write = os.pipe()
    command = [sys.executable, "-c", MIDDLE, "early" if early else "late"]
    middle = subprocess.Popen(
        [*command, str(report_write), str(hold_read)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        pass_fds=(report_write, hold_read),
    )
    os.close(report_write)
    os.close(hold_read)
    try:
        assert middle.stdout is not None
        assert middle.stdout.readline() == b"forked\n"
        said = _read_to_end(report_read, middle)
        return said, middle.wait()
    finally:
        os.close(hold_write)  # a child still waiting (a failure) ends now
        os.close(report_read)
        middle.kill()
        middle.wait()
        for stream in (middle.stdin, middle.stdout):
            if stream is not None:
                stream.close()


def _read_to_end(fd: int, middle: subprocess.Popen[bytes]) -> bytes:
    """The child's reports until its end of the pipe closes; the middle process is killed
    once the child has armed its signal."""
    said = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while poller.poll(WAIT_S * 1000):
        chunk = os.read(fd, 64)
        if not chunk:
            return said
        said += chunk
        if said == b"armed\n":
            middle.kill()  # the host dies after the signal was set
    raise AssertionError(f"the child still runs after {WAIT_S} s, it said {said!r}")


def test_a_child_whose_host_died_before_it_set_the_signal_exits_at_once() -> None:
    said, status = _child_says(early=True)
    assert (said, status) == (b"", 0)


def test_a_child_is_killed_when_its_host_dies_later() -> None:
    said, status = _child_says(early=False)
    assert (said, status) == (b"armed\n", -9)
