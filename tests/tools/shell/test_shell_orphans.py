"""A shell sandbox whose bubblewrap dies before the sandbox has its parent-death signal ends too.

Bubblewrap's first sandboxed process waits on an eventfd, with no parent-death signal yet,
until the outer bubblewrap has written its uid maps (containers/bubblewrap#633). The host's
death reaches the top process of a command (its parent-death `SIGKILL`): here that process is
SIGKILLed while bubblewrap is held at that moment (`--userns-block-fd`, never released), and
every process below it must end. The command line is the shell tool's own, less
`--disable-userns` (which bubblewrap refuses beside `--userns-block-fd`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from clawcell.runtime._v8._watch import process_tree
from clawcell.tools._shell._sandbox import Sandbox
from tests._pidfds import wait_gone

WAIT_S = 20.0


def _held(argv: list[str]) -> tuple[list[str], int, int]:
    """`argv` with bubblewrap told to wait on a pipe; the pipe's read and write ends."""
    block, release = os.pipe()
    at = next(i for i, arg in enumerate(argv) if arg.endswith("bwrap"))
    held = [arg for arg in argv if arg != "--disable-userns"]
    held[at + 1 : at + 1] = ["--info-fd", "1", "--userns-block-fd", str(block)]
    return held, block, release


def test_a_sandbox_held_at_its_clone_ends_when_the_top_process_is_killed(root: Path) -> None:
    sandbox = Sandbox.choose(root, "required", tmp_bytes=1024**2)
    wrapped = sandbox.argv(["/bin/sleep", "600"], root)
    argv, block, release = _held(wrapped.argv)
    try:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, pass_fds=(block, *wrapped.fds), start_new_session=True
        )
    finally:
        for fd in (block, *wrapped.fds):
            os.close(fd)
    try:
        assert process.stdout is not None
        text = b""
        while not text.endswith(b"}\n"):  # written just before bubblewrap blocks
            line = process.stdout.readline()
            assert line, text
            text += line
        assert "child-pid" in json.loads(text)
        tree = process_tree(process.pid)
        assert len(tree) >= 2, tree  # bubblewrap's sandboxed process is there, waiting
        process.kill()  # what the host's death does to it (its parent-death signal)
        process.wait()
        assert wait_gone(tree, time.monotonic() + WAIT_S) == []
    finally:
        os.close(release)
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
