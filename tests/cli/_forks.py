"""Runs the command line in new processes forked from one that has already imported it.

A command that fails at the command line exits before it does much: most of the cost of running
it in a new interpreter is the interpreter's start and the import of `clawcell.cli`. `Forks`
starts one interpreter that imports the entry point once (and does nothing else: no thread, no
event loop), then forks a child per command. The child is a new process like any other: it
gets the command's environment, working directory, arguments and a closed stdin, runs `main`,
and exits the way `python -c "...; sys.exit(main(sys.argv[1:]))"` exits (`SystemExit` out of
the interpreter's top level: exit handlers run, threads are joined, streams flushed), so its
exit status and its stdout and stderr bytes are those of a real process. Nothing the child does
reaches the parent, and the next command forks from the same untouched parent.

Tests where the process's own life is the point (signals, a server that keeps running) start
a process of their own.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The forking interpreter. It reads one request per line; the child it forks for a request
# leaves the loop by `SystemExit` (from `sys.exit(main(...))`) and so ends as `python -c`
# ends, while the parent answers with the child's exit status.
_SERVER = r"""
import importlib, json, os, sys
from clawcell.cli._main import main

for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        importlib.invalidate_caches()  # the working directory is on sys.path ("-c")
        if request["without_ui"]:
            sys.modules["nh3"] = None
        sys.argv = ["-c", *request["argv"]]
        sys.exit(main(request["argv"]))
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


@dataclass(frozen=True, kw_only=True)
class Done:
    """What a command did, as `subprocess.run(..., capture_output=True, text=True)` says."""

    returncode: int
    stdout: str
    stderr: str


class Forks:
    """A forking interpreter, started with `env` (its `sys.path` comes from `PYTHONPATH`)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._outputs = Path(tempfile.mkdtemp(prefix="clawcell-forks-"))
        self._server = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            cwd=self._outputs,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        without_ui: bool = False,
        timeout: float = 120.0,
    ) -> Done:
        """Run `clawcell <argv>` in a forked child; fails the test if it takes `timeout`."""
        server = self._server
        assert server.stdin is not None and server.stdout is not None
        out, err = self._outputs / "stdout", self._outputs / "stderr"
        request = {
            "argv": argv,
            "cwd": str(cwd),
            "env": env,
            "without_ui": without_ui,
            "stdout": str(out),
            "stderr": str(err),
        }
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        ready, _, _ = select.select([server.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise AssertionError(f"clawcell {argv!r} did not exit within {timeout} s")
        status = server.stdout.readline()
        assert status, f"the forking interpreter ended: {server.wait()}"
        return Done(
            returncode=int(status),
            stdout=out.read_text("utf-8"),  # as `text=True` reads a pipe: universal newlines
            stderr=err.read_text("utf-8"),
        )

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()  # the end of its requests: it exits
        try:
            self._server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()
        if self._server.stdout is not None:
            self._server.stdout.close()
        for path in self._outputs.iterdir():
            path.unlink()
        self._outputs.rmdir()
