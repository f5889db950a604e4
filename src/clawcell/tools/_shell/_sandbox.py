"""The OS sandbox of `exec`: bubblewrap (`bwrap`) around every command, when it works.

Threat model: a command the model wrote (or a page it read talked it into) tries to reach the
network, read or change files outside the workspace, gain privileges, signal or inspect host
processes, exhaust the host, or outlive its host. This must hold whoever starts clawcell,
root included (CI, containers). Inside bubblewrap a command gets:

* a new user namespace in which it runs as the unprivileged uid/gid `SANDBOX_UID` (1000),
  with every capability dropped (`--cap-drop ALL`, an empty bounding set) and `no_new_privs`;
* a seccomp filter (`_seccomp`) refusing new namespaces, mounts, handle-based opens, tracing,
  kernel modules and `kexec`, BPF, keyrings, perf events, `io_uring` and the clock;
* no network (`--unshare-net`: only a loopback device of its own);
* the workspace root bind-mounted read-write at its own path, and nothing else writable but
  two private size-capped tmpfs (`/tmp`, `/dev/shm`: `tmp_bytes` each); the sandbox's own
  root and `/dev` are remounted read-only, so nothing else takes memory;
* `/usr` and `/opt` read-only (with the `/bin`, `/lib*`, `/sbin` links); of `/etc` only the
  entries in `ETC_ENTRIES` (no `shadow`, `ssh`, `ssl/private`, credentials files), and a
  `passwd`/`group` naming only `root`, the sandbox user and `nobody`; home directories,
  `/work`, `/var`, `/root` and the rest are absent;
* its own `/proc` and a minimal `/dev`; new PID, IPC, UTS and (where possible) cgroup
  namespaces, a new session (no terminal injection) and `--die-with-parent`; bubblewrap
  itself runs as PID 1 of a PID namespace of its own (`clawcell.runtime.pid_guard`), so a
  sandbox whose bubblewrap is killed before it has set its parent-death signal
  (containers/bubblewrap#633) is ended by the kernel, not left waiting forever.

Limits, honestly: the sandbox shares the host kernel, so a kernel exploit escapes it. Without a
privileged helper, bubblewrap can map the sandbox uid only onto the uid that started it: when
that is root, files the command writes are root's on the host, and files it can reach (only
the read-only mounts above and the workspace) are checked as their owner would be, which is
why `/etc` is an allow list. For the same reason `RLIMIT_NPROC` does not bind a root host; the
process bound then comes from a pids cgroup (`_cgroup`) or, where none can be made, from a host
uid leased to the command (`_uid_leases`), which bubblewrap is started as (then the sandbox uid
is that unprivileged uid outside, and `source` is an idmapped mount of the workspace).
Without bubblewrap (`sandbox = "off"`, or `"auto"` where it cannot run) commands run as the
host user, confined only by their working directory, environment scrubbing and resource
limits.

Floors: bubblewrap older than 0.12.0 can follow a symbolic link in a parent of a mount target
onto the host while it builds the new root (CVE-2026-87766); clawcell warns once when it
finds one. Every mount target here lies outside the workspace, in the sandbox's fresh root or
its fresh `/tmp` (`check_root_visible` refuses a workspace that would contain one), so no
earlier command can have planted such a link.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

from ..._lazy import value_class
from ...errors import ConfigurationError
from ...runtime import bwrap_binary, pid_guard
from . import _seccomp
from ._shell_settings import SandboxMode

__all__ = ["ETC_ENTRIES", "FIXED_BWRAP", "SANDBOX_UID", "Sandbox", "SandboxArgv"]

SANDBOX_UID: Final = 1000
"""The uid and gid commands run as inside the sandbox's user namespace."""

FIXED_BWRAP: Final = (0, 12, 0)
"""The first bubblewrap without CVE-2026-87766."""

ETC_ENTRIES: Final = (
    "alternatives", "bash.bashrc", "ca-certificates", "ca-certificates.conf", "debian_version",
    "fonts", "gai.conf", "host.conf", "hostname", "hosts", "inputrc", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "locale.alias", "localtime", "magic", "magic.mime",
    "mime.types", "nsswitch.conf", "os-release", "perl", "profile", "protocols", "python3",
    "services", "shells", "ssl/certs", "ssl/openssl.cnf", "terminfo", "timezone", "vim",
)  # fmt: skip
"""The entries of the host's `/etc` bound read-only into the sandbox (those that exist)."""

_SYSTEM: Final = ("/usr", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_HIDDEN: Final = (*_SYSTEM, "/etc", "/proc", "/dev")
_TARGETS: Final = (*_HIDDEN, "/tmp")
_REAPER: Final = Path(__file__).with_name("_reaper.py")
_log = logging.getLogger("clawcell.tools")


@value_class
class SandboxArgv:
    """A wrapped command and the descriptors it reads at start (the caller closes them).

    Attributes:
        argv: The argument vector.
        fds: Read ends of pipes bubblewrap reads (seccomp program, `passwd`, `group`); pass
            them to the child (`pass_fds`) and close them in the parent once it started.
    """

    argv: list[str]
    fds: tuple[int, ...] = ()


@value_class
class Sandbox:
    """How commands under `root` are wrapped.

    Attributes:
        root: The resolved workspace root (bind-mounted read-write).
        bwrap: The `bwrap` binary, or `None` when commands run unwrapped.
        tmp_bytes: The size of each private tmpfs (`/tmp`, `/dev/shm`).
        reaper: Whether unsandboxed commands run under `_reaper` (needed where no pids
            cgroup names their processes; it costs a Python start per command).
    """

    root: Path
    bwrap: str | None
    tmp_bytes: int = 128 * 1024**2
    reaper: bool = True

    @classmethod
    def choose(
        cls, root: Path, mode: SandboxMode, *, tmp_bytes: int, reaper: bool = True
    ) -> Sandbox:
        """The sandbox `mode` asks for.

        Raises:
            ConfigurationError: `mode` is `"required"` and bubblewrap cannot run here.
        """
        if mode == "off":
            return cls(root=root, bwrap=None, tmp_bytes=tmp_bytes, reaper=reaper)
        found = bwrap_binary()
        if found is not None and not _user_namespaces_work(found):
            _warn_no_user_namespaces(found, mode)
            found = None
        if found is None and mode == "required":
            raise ConfigurationError(
                'Shell setting `sandbox = "required"`, but bubblewrap (`bwrap`) is not '
                "installed or cannot create user namespaces here: install it (`apt-get install "
                'bubblewrap`), allow user namespaces, or set `sandbox = "auto"` or `"off"`.'
            )
        if found is not None:
            warn_if_vulnerable(found)
        return cls(root=root, bwrap=found, tmp_bytes=tmp_bytes, reaper=reaper)

    @property
    def reaped(self) -> bool:
        """Whether commands run under `_reaper` (unsandboxed), which `SIGTERM` stops."""
        return self.bwrap is None and self.reaper

    @property
    def kind(self) -> str:
        """`"bwrap"` or `"none"`, as results report it."""
        return "bwrap" if self.bwrap else "none"

    def argv(self, command: list[str], workdir: Path, *, source: Path | None = None) -> SandboxArgv:
        """`command` wrapped to run in `workdir` (inside the sandbox when there is one);
        `source` is what is mounted at the workspace root (the root itself by default; an
        idmapped mount of it for a command under a leased uid, `_uid_leases`)."""
        if self.bwrap is None:
            reaper = [sys.executable, "-I", "-S", str(_REAPER)] if self.reaper else []
            return SandboxArgv(argv=[*reaper, *command])
        fds: list[int] = []
        try:
            wrapped = [self.bwrap, *_namespaces()]
            for path in _SYSTEM:
                wrapped += _system_mount(path)
            wrapped += _etc_mounts()
            for name, text in _identity(self.root).items():
                fds.append(_pipe(text.encode()))
                wrapped += ["--ro-bind-data", str(fds[-1]), f"/etc/{name}"]
            size = str(self.tmp_bytes)
            # bubblewrap leaves `/proc/sys` writable in a user namespace, and a uid that maps
            # onto host root passes its permission checks: bind it read-only.
            wrapped += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
            wrapped += ["--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm"]
            wrapped += ["--size", size, "--tmpfs", "/tmp"]
            wrapped += ["--bind", str(source or self.root), str(self.root)]
            wrapped += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", str(workdir)]
            program = _seccomp.program()
            if program is not None:
                fds.append(_pipe(program))
                wrapped += ["--seccomp", str(fds[-1])]
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        guard = pid_guard(self.bwrap)  # bubblewrap as PID 1: its death ends the sandbox
        return SandboxArgv(argv=[*guard, *wrapped, "--", *command], fds=tuple(fds))


def _namespaces() -> list[str]:
    uid = str(SANDBOX_UID)
    return [
        "--unshare-user", "--uid", uid, "--gid", uid, "--disable-userns", "--cap-drop", "ALL",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--new-session", "--die-with-parent", "--hostname", "clawcell",
    ]  # fmt: skip


def _system_mount(path: str) -> list[str]:
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    if os.path.isdir(path):
        return ["--ro-bind", path, path]
    return []


def _etc_mounts() -> list[str]:
    out: list[str] = []
    for name in ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.lexists(path):
            out += ["--ro-bind", path, path]
    return out


def _identity(root: Path) -> dict[str, str]:
    uid = SANDBOX_UID
    return {
        "passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"clawcell:x:{uid}:{uid}:clawcell:{root}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nclawcell:x:{uid}:\nnogroup:x:65534:\n",
    }


def _pipe(data: bytes) -> int:
    """A pipe's read end holding `data` (small enough for the pipe buffer)."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


@functools.cache
def _user_namespaces_work(bwrap: str) -> bool:
    """Whether bubblewrap can map an unprivileged uid in a new user namespace here."""
    probe = [bwrap, "--unshare-user", "--uid", str(SANDBOX_UID), "--cap-drop", "ALL",
             "--ro-bind", "/", "/", "--", "/bin/true"]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def bwrap_version(bwrap: str) -> tuple[int, ...] | None:
    """The version `bwrap --version` prints, or `None` when it prints none."""
    try:
        done = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", done.stdout)
    return tuple(int(part or 0) for part in found.groups()) if found else None


@functools.cache
def _warn_no_user_namespaces(bwrap: str, mode: str) -> None:
    if mode == "auto":
        _log.warning(
            "bubblewrap at %r cannot create a user namespace here (unprivileged user "
            "namespaces are off, or a container forbids them), so shell commands run without "
            'the sandbox (`sandbox: "none"`); allow user namespaces, or set `sandbox = '
            '"required"` to refuse running without it.',
            bwrap,
        )


@functools.cache
def warn_if_vulnerable(bwrap: str) -> bool:
    """Log one warning when `bwrap` is older than `FIXED_BWRAP`; whether it is."""
    version = bwrap_version(bwrap)
    if version is None or version >= FIXED_BWRAP:
        return False
    _log.warning(
        "bubblewrap %s at %r is older than 0.12.0 (CVE-2026-87766: building the new root "
        "can follow a symbolic link in a mount target's parent onto the host). clawcell "
        "places no mount target where a command could have written; upgrade bubblewrap "
        "when your distribution offers 0.12.0 or later.",
        ".".join(map(str, version)),
        bwrap,
    )
    return True


def check_root_visible(root: Path) -> None:
    """Refuse a root the sandbox would hide, or one that would hold a mount target."""
    for path in _TARGETS:
        target = Path(path)
        if path in _HIDDEN and (root == target or target in root.parents):
            raise ConfigurationError(
                f"The shell workspace root {str(root)!r} is inside {path!r}, which the "
                "sandbox mounts read-only or replaces; choose a root elsewhere."
            )
        if root in target.parents:
            raise ConfigurationError(
                f"The shell workspace root {str(root)!r} contains {path!r}: the sandbox "
                "would mount system directories inside the writable workspace. Choose a "
                "root that is a project directory."
            )
