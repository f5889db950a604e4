"""The OS sandbox of `exec`: bubblewrap (`bwrap`) around every command, when it works.

Threat model: a command the model wrote (or a page it read talked it into) tries to reach the
network, read or change files outside the workspace, signal or inspect host processes, or
outlive its host. Inside bubblewrap a command gets:

* no network (`--unshare-net`: only a loopback device of its own);
* the workspace root bind-mounted read-write at its own path, and nothing else writable;
* the system directories (`/usr`, `/etc`, `/opt` and the `/bin`, `/lib*`, `/sbin` links)
  read-only; home directories, `/work`, `/var`, `/root` and the rest are simply absent;
* a private `/tmp` (tmpfs), its own `/proc` and a minimal `/dev`;
* new PID, IPC and UTS namespaces (it sees only its own processes), a new session (no
  terminal injection) and `--die-with-parent`.

Limits, honestly: `/etc` is readable (as it is to any local user); the sandbox shares the
host kernel, so a kernel exploit escapes it; resource limits come from `setrlimit`, not from
cgroups, so memory is bounded per process (address space), not per command tree. Without
bubblewrap (`sandbox = "off"`, or `"auto"` where it cannot run) commands run as the host user,
confined only by their working directory, environment scrubbing and resource limits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..errors import ConfigurationError
from ..runtime import bwrap_binary
from ._shell_settings import SandboxMode

__all__ = ["Sandbox"]

_READ_ONLY: Final = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True, kw_only=True)
class Sandbox:
    """How commands under `root` are wrapped.

    Attributes:
        root: The resolved workspace root (bind-mounted read-write).
        bwrap: The `bwrap` binary, or `None` when commands run unwrapped.
    """

    root: Path
    bwrap: str | None

    @classmethod
    def choose(cls, root: Path, mode: SandboxMode) -> Sandbox:
        """The sandbox `mode` asks for.

        Raises:
            ConfigurationError: `mode` is `"required"` and bubblewrap cannot run here.
        """
        if mode == "off":
            return cls(root=root, bwrap=None)
        found = bwrap_binary()
        if found is None and mode == "required":
            raise ConfigurationError(
                'Shell setting `sandbox = "required"`, but bubblewrap (`bwrap`) is not '
                "installed or cannot create namespaces here: install it (`apt-get install "
                'bubblewrap`) or set `sandbox = "auto"` or `"off"`.'
            )
        return cls(root=root, bwrap=found)

    @property
    def kind(self) -> str:
        """`"bwrap"` or `"none"`, as results report it."""
        return "bwrap" if self.bwrap else "none"

    def argv(self, command: list[str], workdir: Path) -> list[str]:
        """`command` wrapped to run in `workdir` (inside the sandbox when there is one)."""
        if self.bwrap is None:
            return command
        wrapped = [
            self.bwrap,
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--new-session", "--die-with-parent", "--hostname", "clawcell",
        ]  # fmt: skip
        for path in _READ_ONLY:
            wrapped += _system_mount(path)
        wrapped += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        wrapped += ["--bind", str(self.root), str(self.root), "--chdir", str(workdir)]
        return [*wrapped, "--", *command]


def _system_mount(path: str) -> list[str]:
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    if os.path.isdir(path):
        return ["--ro-bind", path, path]
    return []


def check_root_visible(root: Path) -> None:
    """Refuse a root the sandbox would hide behind a read-only system mount."""
    for path in _READ_ONLY:
        if root == Path(path) or Path(path) in root.parents:
            raise ConfigurationError(
                f"The shell workspace root {str(root)!r} is inside the system directory "
                f"{path!r}, which the sandbox mounts read-only; choose a root elsewhere."
            )
