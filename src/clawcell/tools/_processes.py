"""`ProcessTable`: the commands `exec` started, each a `ProcessSession` with bounded output.

Each command runs in its own process group (`start_new_session`) with resource limits set
between fork and exec (`preexec_fn`: `RLIMIT_CPU`, `RLIMIT_AS`, `RLIMIT_FSIZE`, `RLIMIT_NPROC`
and, on Linux, a parent-death `SIGKILL`). Two reader threads per command move its stdout and
stderr into ring buffers; a watcher thread enforces the lifetime and, when the command's
leader exits, kills what is left of its group, so nothing it started outlives it.

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
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final

from ..errors import ToolError
from ._cgroup import Cgroups, CommandCgroup
from ._launch import Launch
from ._output_ring import OutputRing
from ._process_exit import EndReason, ExitInfo, exit_info
from ._write_budget import WriteBudget

__all__ = ["SESSION_ID", "ProcessSession", "ProcessTable"]

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


class ProcessTable:
    """The sessions of one `shell(...)`: at most `max_sessions` running, bounded history."""

    def __init__(
        self,
        *,
        max_sessions: int,
        max_finished: int,
        capacity: int,
        max_processes: int = 4096,
        cgroups: Cgroups | None = None,
        write_root: Path | None = None,
        max_write_bytes: int = 0,
    ) -> None:
        self._max_sessions = max_sessions
        self._write_root = write_root
        self._max_write_bytes = max_write_bytes
        self._max_processes = max_processes
        self._cgroups = cgroups
        self._max_finished = max_finished
        self._capacity = capacity
        self._sessions: dict[str, ProcessSession] = {}
        self._lock = threading.Lock()
        self.instance = uuid.uuid4().hex[:8]
        """Names this table's sessions (`sh_<instance>_<n>`): an id with another instance
        belongs to an earlier host process or other tools, so it is reported lost."""
        self._counter = 0

    def start(self, launch: Launch, *, owner: str | None = None) -> ProcessSession:
        """Start `launch` as a new session of `owner` (the calling session's id).

        Raises:
            ToolError: `too_many_sessions` or `spawn_failed`.
        """
        try:
            with self._lock:
                running = [s for s in self._sessions.values() if s.running]
                if len(running) >= self._max_sessions:
                    raise ToolError(
                        f"{len(running)} commands are already running (the most is "
                        f"{self._max_sessions}); `process kill` or `remove` one, or wait for it.",
                        code="too_many_sessions",
                    )
                self._counter += 1
                session_id = f"sh_{self.instance}_{self._counter}"
                cgroup = self._cgroup()
                try:
                    session = ProcessSession(
                        launch,
                        self._capacity,
                        session_id=session_id,
                        owner=owner,
                        cgroup=cgroup,
                        budget=self._budget(),
                    )
                except (OSError, subprocess.SubprocessError) as exc:
                    if cgroup is not None:
                        cgroup.kill()
                    reason = exc.strerror if isinstance(exc, OSError) else None
                    raise ToolError(
                        f"Could not start {launch.argv[0]!r}: {reason or exc}.",
                        code="spawn_failed",
                    ) from exc
                self._sessions[session.id] = session
                self._trim()
                return session
        finally:
            launch.close_fds()

    def _cgroup(self) -> CommandCgroup | None:
        """The new command's cgroup; where cgroups work, none is an error (fail closed: the
        process bound and the exact kill depend on it)."""
        if self._cgroups is None:
            return None
        made = self._cgroups.make(self.instance, self._counter, self._max_processes)
        if made is None:
            raise ToolError(
                f"Could not make a pids cgroup under {str(self._cgroups.parent)!r} for the "
                "command (it bounds its processes); check that cgroup directory is writable "
                "and not at its `cgroup.max.descendants`.",
                code="spawn_failed",
            )
        return made

    def _budget(self) -> WriteBudget | None:
        if self._write_root is None:
            return None
        return WriteBudget(root=self._write_root, limit=self._max_write_bytes)

    def _trim(self) -> None:
        finished = [s for s in self._sessions.values() if not s.running]
        for session in finished[: max(0, len(finished) - self._max_finished)]:
            del self._sessions[session.id]

    def is_foreign(self, session_id: str) -> bool:
        """Whether `session_id` is a session id of another table (an earlier process)."""
        return SESSION_ID.fullmatch(session_id) is not None and not session_id.startswith(
            f"sh_{self.instance}_"
        )

    def get(self, session_id: str, *, owner: str | None = None) -> ProcessSession | None:
        """The session with this id when `owner` started it, or `None` (another session's
        command is indistinguishable from one that does not exist)."""
        with self._lock:
            found = self._sessions.get(session_id)
        return found if found is not None and found.owner == owner else None

    def sessions(self, *, owner: str | None = None) -> list[ProcessSession]:
        """The sessions `owner` started, oldest first."""
        with self._lock:
            return [s for s in self._sessions.values() if s.owner == owner]

    def forget(self, session_id: str) -> ProcessSession | None:
        """Drop a session (killing it if it runs); the session, or `None`."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.kill()
        return session

    def close(self) -> None:
        """Kill every running command (idempotent). The table stays usable: a later
        `CodeMode` over the same tools starts commands of its own."""
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            session.kill()
        for session in sessions:
            session.wait_blocking(5.0)
        if self._cgroups is not None:
            self._cgroups.sweep(self.instance)
