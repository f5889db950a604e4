"""How a command ended: its wait status read as an exit code, a signal or a limit."""

from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING, Final, Literal

from ..._lazy import value_class

if TYPE_CHECKING:
    from ._launch import Launch

__all__ = ["EndReason", "ExitInfo", "exit_info"]

EndReason = Literal[
    "exited", "signal", "timeout", "killed", "cpu_limit", "file_size_limit", "write_limit"
]
_LIMIT_SIGNALS: Final[dict[int, EndReason]] = {
    int(signal.SIGXCPU): "cpu_limit",
    int(signal.SIGXFSZ): "file_size_limit",
}


@value_class
class ExitInfo:
    """How a command ended."""

    exit_code: int | None
    exit_signal: str | None
    reason: EndReason
    ended_at: float

    @property
    def ok(self) -> bool:
        """Exit status 0."""
        return self.exit_code == 0

    def message(self, launch: Launch) -> str:
        """One sentence a model can act on."""
        return _MESSAGES[self.reason].format(
            code=self.exit_code, signal=self.exit_signal, launch=launch
        )


_MESSAGES: Final[dict[str, str]] = {
    "exited": "The command exited with status {code}.",
    "signal": "The command was ended by {signal}.",
    "timeout": "The command ran past its {launch.timeout_seconds:g} s timeout and was killed "
    "with its process group; pass a larger `timeoutSeconds` or run it with `background: true`.",
    "killed": "The command was killed by `process kill`, `remove` or the closing host.",
    "cpu_limit": "The command used its {launch.limits.cpu_seconds} s of CPU time and was "
    "stopped ({signal}); the limit is the `cpu_seconds` shell setting.",
    "file_size_limit": "The command tried to write a file larger than "
    "{launch.limits.file_size_bytes} bytes and was stopped ({signal}); the limit is the "
    "`file_size_bytes` shell setting.",
    "write_limit": "The command grew the workspace by more than {launch.limits.write_bytes} "
    "bytes and was killed with everything it started; the limit is the `max_write_bytes` "
    "shell setting (remove what it wrote, or raise the setting).",
}


def exit_info(code: int, kill_reason: EndReason | None) -> ExitInfo:
    """Read a wait status: negative is a signal; 128+n from a shell or bwrap is one too."""
    number = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else None
    name = _signal_name(number) if number is not None else None
    reason: EndReason = "exited" if code >= 0 and name is None else "signal"
    if number is not None and number in _LIMIT_SIGNALS:
        reason = _LIMIT_SIGNALS[number]
    if kill_reason is not None:
        reason = kill_reason
    return ExitInfo(
        exit_code=code if code >= 0 else None,
        exit_signal=name,
        reason=reason,
        ended_at=time.time(),
    )


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None
