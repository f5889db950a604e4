"""`ProcessSession`: one command `exec` started, with bounded output (`ProcessTable` keeps them).

Each command runs in its own process group (`start_new_session`) with resource limits set
between fork and exec (`preexec_fn`: joining its pids cgroup when there is one, `RLIMIT_CPU`,
`RLIMIT_AS`, `RLIMIT_FSIZE`, `RLIMIT_NPROC` and, on Linux, a parent-death `SIGKILL`). Two
reader threads per command move its stdout and stderr into ring buffers; a watcher thread
enforces the lifetime and the workspace write budget and, when the command's leader exits,
kills what is left (its cgroup, its group, its leased uid's processes; unsandboxed without a
cgroup, `_reaper` already did), so nothing it started outlives it. A command with a leased uid
(`_uid_leases`) starts as that uid (set by `Popen` before `preexec_fn`, so the limits and the
parent-death signal apply to it).

Threads rather than asyncio subprocesses: a session outlives the event loop of the call that
started it (a parked cell resumes on another loop; `process` may poll from anywhere).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Final

from ...errors import ToolError
from ._cgroup import CommandCgroup
from ._launch import Launch
from ._output_ring import OutputRing
from ._process_exit import EndReason, ExitInfo, exit_info
from ._write_budget import WriteBudget

__all__ = ["SESSION_ID", "ProcessSession"]

IDLE_INPUT_MS: Final = 1_000
"""A running command with open stdin and no output for this long counts as waiting for input."""

SESSION_ID: Final = re.compile(r"sh_[0-9a-f]{8}_[0-9]+")


class ProcessSession:
    """One running or finished command and its output."""

    def __init__(
        self,
        launch: Launch,
        capacity: int,
        *,
        session_id: str,
        owner: str | None = None,
        cgroup: CommandCgroup | None = None,
        budget: WriteBudget | None = None,
    ) -> None:
        self.id = session_id
        self.owner = owner
        """The id of the Code Mode session whose call started it (`None`: a host call)."""
        self.launch = launch
        self.stdout = OutputRing(capacity)
        self.stderr = OutputRing(capacity)
        self.combined = OutputRing(capacity)
        self.started_at = time.time()
        self.last_output_at = self.started_at
        self.poll_cursor = 0
        self.exit: ExitInfo | None = None
        self._kill_reason: EndReason | None = None
        self._done = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()
        self._cgroup = cgroup
        self._budget = budget
        if budget is not None:
            budget.start()
        preexec = launch.limits.preexec(cgroup.joiner() if cgroup is not None else None)
        uid = -1 if launch.lease is None else launch.lease.uid  # set before `preexec` runs
        self._proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=dict(launch.env),
            start_new_session=True,
            preexec_fn=preexec,  # noqa: PLW1509 - only setrlimit, prctl and a cgroup join run in it
            close_fds=True,
            pass_fds=launch.fds,
            user=None if uid < 0 else uid,
            group=None if uid < 0 else uid,
            extra_groups=None if uid < 0 else [],
        )
        self.pid = self._proc.pid
        assert self._proc.stdin is not None
        os.set_blocking(self._proc.stdin.fileno(), False)
        self._readers = [
            _thread(self._read, self._proc.stdout, self.stdout),
            _thread(self._read, self._proc.stderr, self.stderr),
        ]
        _thread(self._watch)

    @property
    def running(self) -> bool:
        """Whether the command has not ended yet."""
        return not self._done.is_set()

    @property
    def stdin_writable(self) -> bool:
        """Whether `write` can still reach the command."""
        stdin = self._proc.stdin
        return self.running and stdin is not None and not stdin.closed

    def idle_ms(self) -> int:
        """Milliseconds since the last output (or the start)."""
        return int((time.time() - self.last_output_at) * 1000)

    def write(self, data: bytes, *, eof: bool) -> int:
        """Write what the stdin pipe accepts now (never blocks); the count of bytes accepted."""
        stdin = self._proc.stdin
        if not self.stdin_writable or stdin is None:
            raise ToolError(
                f"Session {self.id!r} has no open stdin (it ended or its input was closed).",
                code="stdin_closed",
            )
        accepted = 0
        with self._lock:
            try:
                accepted = os.write(stdin.fileno(), data) if data else 0
            except BlockingIOError:
                accepted = 0
            except (BrokenPipeError, ValueError, OSError):
                self._close_stdin()
                return accepted
            if eof and accepted == len(data):
                self._close_stdin()
        return accepted

    def feed(self, data: bytes) -> None:
        """Write all of `data` to stdin from a thread, then close stdin."""
        _thread(self._feed, data)

    def _feed(self, data: bytes) -> None:
        view = memoryview(data)
        stdin = self._proc.stdin
        assert stdin is not None
        with contextlib.suppress(ToolError, OSError, ValueError):
            while view and self.stdin_writable:
                select.select([], [stdin], [], 0.5)
                view = view[self.write(bytes(view[:65536]), eof=False) :]
        with self._lock:
            self._close_stdin()

    def _close_stdin(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()

    def kill(self, reason: EndReason = "killed") -> None:
        """Kill the command and everything it started (idempotent)."""
        if self._done.is_set():
            return
        if self._kill_reason is None:
            self._kill_reason = reason
        if self._cgroup is not None:
            self._cgroup.kill()
        if self.launch.reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)  # the reaper kills its tree, then itself
                os.kill(self.pid, signal.SIGCONT)  # even if the command stopped it
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        if self._cgroup is not None:
            self._cgroup.kill(wait=5.0)  # the watcher thread: waiting is fine here

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the end; whether it ended."""
        if self._done.is_set():
            return True
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiters.append((loop, future))
        if self._done.is_set():
            return True
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return self._done.is_set()
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove((loop, future))
        return True

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Block this thread until the end (for closing hosts); whether it ended."""
        return self._done.wait(timeout)

    def _wait_within_bounds(self) -> int:
        """The exit status; kills the command at its timeout or past its write budget."""
        deadline = time.monotonic() + self.launch.timeout_seconds
        budget = self._budget
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill("timeout")
                return self._proc.wait()
            try:
                return self._proc.wait(
                    remaining if budget is None else min(remaining, budget.interval)
                )
            except subprocess.TimeoutExpired:
                if budget is not None and budget.exceeded():
                    self.kill("write_limit")
                    return self._proc.wait()

    def _read(self, pipe: IO[bytes] | None, ring: OutputRing) -> None:
        if pipe is None:
            return
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = pipe.fileno()
        while chunk := _read_chunk(fd):
            self._output(ring, decoder.decode(chunk))
        self._output(ring, decoder.decode(b"", final=True))
        pipe.close()

    def _output(self, ring: OutputRing, text: str) -> None:
        if text:
            ring.append(text)
            self.combined.append(text)
            self.last_output_at = time.time()

    def _watch(self) -> None:
        code = self._wait_within_bounds()
        self._signal_group(signal.SIGKILL)  # whatever the command left behind
        for reader in self._readers:
            reader.join(timeout=2.0)
        if self._cgroup is not None:
            self._cgroup.kill(wait=5.0)  # returns once every member has ended
        if self.launch.lease is not None:
            self.launch.lease.release()  # kills what still runs as its uid
        self._close_stdin()
        self.exit = exit_info(code, self._kill_reason)
        self._done.set()
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _read_chunk(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


def _thread(target: Callable[..., None], *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True, name="clawcell-shell")
    thread.start()
    return thread
