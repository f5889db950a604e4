"""`ShellSettings`: the defaults, caps, resource limits and policy of `exec` and `process`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Final, Literal, cast

from ..._lazy import value_class
from ...errors import ConfigurationError

__all__ = ["DEFAULT_ENV_ALLOW", "DEFAULT_MAX_PROCESSES", "SandboxMode", "ShellSettings"]

SandboxMode = Literal["auto", "required", "off"]

DEFAULT_ENV_ALLOW: Final = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "PATH", "TERM", "TZ")
"""Variables of the host environment a command inherits; everything else is dropped."""

DEFAULT_MAX_PROCESSES: Final = 4096
"""The process bound of a command when `max_processes` is left unset."""

_POSITIVE: Final = (
    "timeout_seconds", "yield_ms", "max_output_chars", "max_sessions", "max_finished_sessions",
    "cpu_seconds", "address_space_bytes", "file_size_bytes", "tmp_bytes", "max_write_bytes",
)  # fmt: skip


@value_class
class ShellSettings:
    """How `exec` runs commands and what `process` keeps.

    Attributes:
        timeout_seconds: Default lifetime of a command (the `timeoutSeconds` input overrides
            it, up to `max_timeout_seconds`); the process group is killed when it expires.
        max_timeout_seconds: Ceiling of the `timeoutSeconds` input.
        yield_ms: Default wait before a running command is handed back as a session.
        max_output_chars: Characters kept per stream (stdout, stderr and the combined log) in
            each session's ring buffer; older output is dropped and reported as truncated.
        max_sessions: Most commands running at once; `exec` refuses more (`too_many_sessions`).
        max_finished_sessions: Finished sessions kept for `poll`/`log`; the oldest go first.
        cpu_seconds: `RLIMIT_CPU` of each command (`SIGXCPU`, then `SIGKILL`).
        address_space_bytes: `RLIMIT_AS` of each command (allocations fail past it).
        file_size_bytes: `RLIMIT_FSIZE` of each command (`SIGXFSZ` past it).
        max_processes: Most processes (threads included) of one command: a pids cgroup per
            command where one can be made; on a root host without one, `RLIMIT_NPROC` under a
            host uid leased to the command (sandboxed commands); on a non-root host,
            `RLIMIT_NPROC` (Linux counts every process of that user, so keep it above what the
            user already runs). `None` (the default) means `DEFAULT_MAX_PROCESSES` where one
            of these binds, and one logged warning where none does; a number set here is a
            requirement: `shell(...)` raises `ConfigurationError` where nothing can enforce it.
        max_write_bytes: How much one command may grow the workspace (allocated bytes,
            measured when it starts and every 0.25 s or more while it runs); past it the
            command is killed (`exitReason: "write_limit"`). A check, not a wall: a fast
            writer passes it by what it writes between two checks.
        tmp_bytes: Size of the sandbox's private `/tmp` and of its `/dev/shm` (each a tmpfs,
            in memory); writes past it fail with `ENOSPC`.
        sandbox: `"auto"` runs in bubblewrap when `bwrap` works, `"required"` refuses to run
            without it, `"off"` never uses it.
        env_allow: Host environment variables a command inherits (the `env` input adds more).
        approval: `"ask"`: `exec` and `process` `write` wait for a person's decision unless
            the command matches `allow_commands`; `"never"`: they run without asking.
        allow_commands: Shell-style patterns (`fnmatch`) of whole commands that run without
            asking, such as `"git status*"` or `"ls *"`.
        shell: The shell that runs each command as `shell -c command`.
    """

    timeout_seconds: float = 600.0
    max_timeout_seconds: float = 3600.0
    yield_ms: int = 10_000
    max_output_chars: int = 200_000
    max_sessions: int = 8
    max_finished_sessions: int = 32
    cpu_seconds: int = 600
    address_space_bytes: int = 4 * 1024**3
    file_size_bytes: int = 1024**3
    max_processes: int | None = None
    tmp_bytes: int = 128 * 1024**2
    max_write_bytes: int = 1024**3
    sandbox: SandboxMode = "auto"
    env_allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    approval: Literal["ask", "never"] = "ask"
    allow_commands: tuple[str, ...] = ()
    shell: str = "/bin/sh"

    def __post_init__(self) -> None:
        for name in _POSITIVE:
            value: object = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigurationError(
                    f"Shell setting `{name}` must be a positive number, got {value!r}."
                )
        bound = cast(object, self.max_processes)  # configuration files may hold any type
        if bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, int) or bound <= 0
        ):
            raise ConfigurationError(
                f"Shell setting `max_processes` must be a positive integer (or unset), got "
                f"{bound!r}."
            )
        if self.max_timeout_seconds < self.timeout_seconds:
            raise ConfigurationError(
                f"Shell setting `max_timeout_seconds` ({self.max_timeout_seconds!r}) must be at "
                f"least `timeout_seconds` ({self.timeout_seconds!r})."
            )
        _choice("sandbox", self.sandbox, ("auto", "required", "off"))
        _choice("approval", self.approval, ("ask", "never"))
        for name in ("env_allow", "allow_commands"):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        shell = cast(object, self.shell)  # configuration files may hold any type here
        if not isinstance(shell, str) or not shell.startswith("/"):
            raise ConfigurationError(
                f"Shell setting `shell` must be an absolute path, got {self.shell!r}."
            )

    @property
    def processes(self) -> int:
        """The process bound in force: `max_processes`, or `DEFAULT_MAX_PROCESSES`."""
        return DEFAULT_MAX_PROCESSES if self.max_processes is None else self.max_processes

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The setting names (the keys `[builtin_tools] shell` accepts)."""
        return tuple(sorted(f.name for f in fields(cls)))


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigurationError(
            f"Shell setting `{name}` must be one of {', '.join(map(repr, allowed))}, got {value!r}."
        )


def _strings(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ConfigurationError(
            f"Shell setting `{name}` must be a list of strings, got {value!r}."
        )
    items = cast(Sequence[object], value)
    out = tuple(item for item in items if isinstance(item, str) and item)
    if len(out) != len(items):
        raise ConfigurationError(
            f"Shell setting `{name}` must hold non-empty strings, got {value!r}."
        )
    return out
