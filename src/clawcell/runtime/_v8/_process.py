"""One V8 worker process: Deno with no permissions, inside bubblewrap when it can run.

The worker (`v8_worker.js`, beside this module) is started as
`deno run --no-prompt <flags> v8_worker.js` without a single `--allow-*` flag: it cannot read
or write files, open sockets, spawn processes or read the environment, whatever a cell does.
When bubblewrap works on this machine the process also runs in its own namespaces: no network
(`--unshare-net`), its own PID/IPC/UTS namespaces, a read-only system (`/usr`, `/etc`, `/lib*`),
a private `/tmp`, and of the host's files only the Deno binary and the worker script,
read-only. The environment is replaced by a few Deno settings. The V8 heap is limited with
`--max-old-space-size`; when a cell exhausts it, V8 ends the process. Buffers outside the heap
are bounded by the worker's memory guard and by the host's watchdog (`_watch`).

The shell tool's sandbox (`clawcell.tools`) sits above the runtime in the layer table and
binds a workspace read-write; this one binds nothing writable, so it is built here. Both use
the one probe, `clawcell.runtime.bwrap_binary`.

A worker never outlives its host, whatever it is doing. Every worker is started from one
long-lived thread of the host (`SPAWNER`) with a parent-death signal (`PR_SET_PDEATHSIG`,
`SIGKILL`) set in the child before it execs: the kernel sends it when the thread that forked
the child ends, so a worker started from a short-lived thread (an event loop's executor
thread) would be killed early, and one started without it (as before) outlived a host that
was killed. Bubblewrap's `--die-with-parent` passes it on to the sandboxed Deno, but not in
the first moments of a sandbox (containers/bubblewrap#633): bubblewrap runs as PID 1 of a
PID namespace of its own (`clawcell.runtime._bwrap.pid_guard`), whose end kills the whole
sandbox. The worker also exits when its stdin closes, even with timers pending.

`Channel` speaks the line-delimited JSON protocol with deadlines: every read and write polls
the pipes, so a worker that computes past a deadline is simply killed. While it waits, the
channel samples the worker's resident memory (`_watch.ResidentWatch`) and kills a worker
that holds more than its bound (`over_memory`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Final

from ..._lazy import install_hint
from ...errors import RuntimeUnavailableError
from .._bwrap import bwrap_binary, pid_guard
from .._parent_death import die_with_parent
from ._watch import SAMPLE_S, ResidentWatch

__all__ = ["INSTALL_HINT", "Channel", "WorkerDied", "WorkerTimeout", "deno_binary", "spawn"]

INSTALL_HINT: Final = (
    f"the V8 executor needs the Deno binary: add the `v8` extra, {install_hint('v8')}, "
    "or put `deno` on PATH"
)
WORKER_SCRIPT: Final = Path(__file__).with_name("v8_worker.js")
HEAP_OVERHEAD_MB: Final = 32
"""V8 heap the worker itself needs beside the cell's limit (its own module, two contexts)."""

_SANDBOX_DIR: Final = "/clawcell"
_READ_ONLY: Final = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_CHUNK: Final = 1 << 16


class WorkerDied(Exception):
    """The worker process ended (crashed, ran out of heap, or was killed); `stderr` is what
    it wrote there."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr


class WorkerTimeout(Exception):
    """The deadline passed before the worker answered (the worker was killed)."""


@functools.cache
def deno_binary() -> str | None:
    """The Deno binary of the `deno` package, else `deno` on PATH, else `None`."""
    try:
        from deno import find_deno_bin  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

        found = str(find_deno_bin())  # pyright: ignore[reportUnknownArgumentType]
        if os.path.isfile(found):
            return found
    except (ImportError, FileNotFoundError):
        pass
    return shutil.which("deno")


def worker_argv(deno: str, heap_mb: int, *, sandbox: bool) -> list[str]:
    """The command line of a worker with a V8 heap of `heap_mb` MiB."""
    script = str(WORKER_SCRIPT)
    bwrap = bwrap_binary() if sandbox else None
    binary = deno
    if bwrap is not None:
        binary, script = f"{_SANDBOX_DIR}/deno", f"{_SANDBOX_DIR}/v8_worker.js"
    command = [
        binary, "run", "--no-prompt", "--no-config", "--no-lock", "--no-npm", "--no-remote",
        "--no-code-cache", f"--v8-flags=--max-old-space-size={heap_mb}", script,
    ]  # fmt: skip
    if bwrap is None:
        return command
    wrapped = [
        bwrap, "--unshare-all", "--new-session", "--die-with-parent", "--hostname", "clawcell",
        "--clearenv",
    ]  # fmt: skip
    for path in _READ_ONLY:
        if os.path.islink(path):
            wrapped += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            wrapped += ["--ro-bind", path, path]
    wrapped += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    wrapped += ["--ro-bind", deno, command[0], "--ro-bind", str(WORKER_SCRIPT), script]
    wrapped += ["--chdir", "/tmp"]
    for name, value in environment().items():
        wrapped += ["--setenv", name, value]
    return [*pid_guard(bwrap), *wrapped, "--", *command]


def environment() -> dict[str, str]:
    """The worker's whole environment (inside bubblewrap, `--setenv` sets it again)."""
    return {
        "DENO_DIR": "/tmp/deno",
        "HOME": "/tmp",
        "NO_COLOR": "1",
        "DENO_NO_UPDATE_CHECK": "1",
        "PATH": "/usr/bin:/bin",
    }


def spawn(heap_mb: int, *, sandbox: bool = True) -> subprocess.Popen[bytes]:
    """Start a worker process (it boots while the caller goes on); it dies with this process.

    Raises:
        RuntimeUnavailableError: Deno is not installed, or the process cannot start.
    """
    deno = deno_binary()
    if deno is None:
        raise RuntimeUnavailableError(INSTALL_HINT)
    argv = worker_argv(deno, heap_mb, sandbox=sandbox)
    env = environment()
    if not argv[0].endswith("bwrap"):
        env["DENO_DIR"] = str(Path(os.environ.get("TMPDIR", "/tmp")) / "clawcell-deno")
    try:
        return SPAWNER.run(argv, env)
    except OSError as exc:
        raise RuntimeUnavailableError(f"the V8 worker could not start ({exc!r})") from exc


class _Spawner:
    """The one host thread that starts workers: it lives as long as the process, so the
    workers' parent-death signal fires when the host dies, not when a caller's thread ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pid = 0

    def run(
        self, argv: list[str], env: dict[str, str], fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes]:
        """Start `argv` (with `env`, and the descriptors `fds` left open in it) from the
        spawning thread."""
        with self._lock:
            if self._pool is None or self._pid != os.getpid():  # none yet, or a forked child
                self._pool = concurrent.futures.ThreadPoolExecutor(1, "clawcell-v8-spawn")
                self._pid = os.getpid()
            pool = self._pool
        return pool.submit(_popen, argv, env, fds, os.getpid()).result()


def _popen(
    argv: list[str], env: dict[str, str], fds: tuple[int, ...], host: int
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd="/tmp",
        start_new_session=True,
        pass_fds=fds,
        # only `prctl`, `getppid` and `_exit` run in the child (`_parent_death`)
        preexec_fn=functools.partial(die_with_parent, host),  # noqa: PLW1509
    )


SPAWNER: Final = _Spawner()


class Channel:
    """The host end of one worker's pipes: requests out, replies in, under deadlines."""

    def __init__(
        self, process: subprocess.Popen[bytes], *, watch: ResidentWatch | None = None
    ) -> None:
        self.process = process
        self._watch = watch
        self.over_memory = False
        """The watchdog killed the worker: it held more resident memory than its bound."""
        assert process.stdin is not None and process.stdout is not None
        self._in = process.stdin.fileno()
        self._out = process.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._buffer = bytearray()
        self._scanned = 0
        """How much of `_buffer` is known to hold no newline (a long reply arrives in many
        chunks; each is searched once, not the whole buffer again)."""
        self._lock = threading.Lock()
        self.killed = False

    def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one request line (raises `WorkerTimeout` or `WorkerDied`)."""
        data = memoryview((json.dumps(message, separators=(",", ":")) + "\n").encode())
        while data:
            try:
                written = os.write(self._in, data)
            except BlockingIOError:
                self._wait(self._in, select.POLLOUT, deadline)
                continue
            except (BrokenPipeError, OSError):
                raise WorkerDied(self.stderr()) from None
            data = data[written:]

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next reply (raises `WorkerTimeout` or `WorkerDied`)."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                return json.loads(line)
            self._scanned = len(self._buffer)
            try:
                chunk = os.read(self._out, _CHUNK)
            except BlockingIOError:
                self._wait(self._out, select.POLLIN, deadline)
                continue
            if not chunk:
                raise WorkerDied(self.stderr())
            self._buffer += chunk

    def _wait(self, fd: int, event: int, deadline: float) -> None:
        poller = select.poll()
        poller.register(fd, event)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerTimeout
            if self._watch is not None:
                left = min(left, SAMPLE_S)
            if poller.poll(min(left, 3600.0) * 1000):
                return
            self._check_memory()

    def _check_memory(self) -> None:
        if self._watch is None:
            return
        resident = self._watch.over()
        if resident is not None:
            self.over_memory = True
            self.kill()
            raise WorkerDied(f"out of memory: the worker held {resident >> 20} MiB (watchdog)")

    def kill(self) -> None:
        """End the worker now (safe from any thread, idempotent)."""
        with self._lock:
            self.killed = True
            if self.process.poll() is None:
                with contextlib.suppress(OSError):
                    self.process.kill()

    def alive(self) -> bool:
        return not self.killed and self.process.poll() is None

    def stderr(self) -> str:
        """What the worker wrote to stderr (read once it is gone)."""
        self.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return ""
        stream = self.process.stderr
        if stream is None:
            return ""
        try:
            os.set_blocking(stream.fileno(), False)
            data = stream.read(_CHUNK) or b""
        except (OSError, ValueError):
            return ""
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        """Kill the worker and close its pipes."""
        self.kill()
        if self._watch is not None:
            self._watch.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
