"""`ProcessTable`: the sessions of one `shell(...)`, who owns each, and their cgroups."""

from __future__ import annotations

import subprocess
import threading
import uuid
from pathlib import Path

from ...errors import ToolError
from ._cgroup import Cgroups, CommandCgroup
from ._launch import Launch
from ._processes import SESSION_ID, ProcessSession
from ._uid_leases import UidLease, UidRange
from ._write_budget import WriteBudget

__all__ = ["ProcessTable"]


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
        uids: UidRange | None = None,
        write_root: Path | None = None,
        max_write_bytes: int = 0,
    ) -> None:
        self._max_sessions = max_sessions
        self._write_root = write_root
        self._max_write_bytes = max_write_bytes
        self._max_processes = max_processes
        self._cgroups = cgroups
        self._uids = uids
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
        started = False
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
                started = True
                self._sessions[session.id] = session
                self._trim()
                return session
        finally:
            if started:
                launch.close_fds()
            else:
                launch.abandon()

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

    def lease(self) -> UidLease | None:
        """A uid of its own for the next command, where processes are bounded by leased uids
        (`None` elsewhere); `Launch.abandon` or the session's end gives it back.

        Raises:
            ToolError: `spawn_failed` (every uid leased, or the workspace mount failed; fail
                closed: the process bound depends on it).
        """
        if self._uids is None or self._write_root is None:
            return None
        try:
            return self._uids.lease(self._write_root)
        except OSError as exc:
            raise ToolError(
                f"Could not lease a uid of its own for the command (it bounds its processes): "
                f"{exc}.",
                code="spawn_failed",
            ) from exc

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
