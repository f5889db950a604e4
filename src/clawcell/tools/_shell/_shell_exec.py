"""The `exec` tool: run a shell command in the workspace; finished output or a `sessionId`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final, cast

from ..._lazy import value_class
from ...approvals import ApprovalRule
from ...catalog import Tool, call_session
from ...errors import ToolError
from .._workspace._confinement import Confinement
from ._command_rule import rule_matches
from ._launch import Launch
from ._process_table import ProcessTable
from ._processes import ProcessSession
from ._rlimits import Rlimits
from ._sandbox import Sandbox
from ._shell_schemas import EXEC_INPUT, EXEC_OUTPUT
from ._shell_settings import ShellSettings

__all__ = ["ShellContext", "exec_tool", "running_result"]

TAIL_CHARS: Final = 2_000
_ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOADER: Final = ("LD_", "DYLD_")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_DEFAULT_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
_DESCRIPTION = (
    "Run a shell command in the workspace (a sandbox without network when bubblewrap is "
    "available). A command that ends within `yieldMs` returns `{status: 'completed' | 'failed', "
    "exitCode, exitReason, stdout, stderr, durationMs}` (output bounded, with `*Truncated`); "
    "one still running, or started with `background: true`, returns `{status: 'running', "
    "sessionId}` for `process` (`poll`, `log`, `write`, `kill`, `remove`)."
)


@value_class
class ShellContext:
    """What `exec` and `process` share: the workspace, settings, sandbox and sessions."""

    confinement: Confinement
    settings: ShellSettings
    sandbox: Sandbox
    table: ProcessTable

    def environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        """The scrubbed environment plus `extra` (validated)."""
        env = {k: os.environ[k] for k in self.settings.env_allow if k in os.environ}
        # Only absolute directories: an empty or relative entry would run workspace files
        # in place of the programs an approval named.
        path = [d for d in env.get("PATH", "").split(":") if d.startswith("/")]
        env["PATH"] = ":".join(path) or _DEFAULT_PATH
        root = str(self.confinement.root)
        env |= {"HOME": root, "TMPDIR": "/tmp", "CLAWCELL_SHELL": "exec"}
        for name, value in extra.items():
            _check_variable(name, value)
            env[name] = value
        return env

    def rlimits(self) -> Rlimits:
        """The resource limits of every command."""
        s = self.settings
        return Rlimits(
            cpu_seconds=s.cpu_seconds,
            address_space_bytes=s.address_space_bytes,
            file_size_bytes=s.file_size_bytes,
            max_processes=s.processes,
            write_bytes=s.max_write_bytes,
        )


def _check_variable(name: object, value: object) -> None:
    if not isinstance(name, str) or not _ENV_NAME.match(name):
        raise ToolError(
            f"`env` name {name!r} is not a valid variable name (letters, digits and `_`).",
            code="invalid_env",
        )
    if name.startswith(_LOADER):
        raise ToolError(
            f"`env` may not set the loader variable {name!r}; loader overrides are refused.",
            code="invalid_env",
        )
    if not isinstance(value, str) or "\x00" in value or _SURROGATE.search(value):
        raise ToolError(
            f"`env.{name}` must be a string without NUL or lone surrogates, got {value!r}.",
            code="invalid_env",
        )


def checked_text(name: str, value: object, *, nul: bool = False) -> str:
    """`value` as text a process can take: a string without lone surrogates (and, unless
    `nul`, without NUL); checked before anything starts, so a bad input leaves nothing behind.

    Raises:
        ToolError: `invalid_input`.
    """
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string, got {value!r}.", code="invalid_input")
    if not nul and "\x00" in value:
        raise ToolError(
            f"`{name}` contains a NUL character, which a command line cannot hold: "
            f"{_excerpt(value)!r}. Remove it.",
            code="invalid_input",
        )
    if _SURROGATE.search(value):
        raise ToolError(
            f"`{name}` contains a lone surrogate, which is not Unicode text: "
            f"{_excerpt(value)!r}. Pass valid UTF-16 (pair each surrogate).",
            code="invalid_input",
        )
    return value


def _excerpt(value: str) -> str:
    return value if len(value) <= 80 else value[:80] + "…"


def _launch(context: ShellContext, params: Mapping[str, Any]) -> Launch:
    command = checked_text("command", params["command"])
    if not command.strip():
        raise ToolError("`command` is empty; pass the shell command to run.", code="invalid_input")
    workdir = checked_text("workdir", params.get("workdir") or ".")
    real = context.confinement.root if workdir == "." else context.confinement.resolve(workdir)
    if not real.is_dir():
        raise ToolError(
            f"`workdir` {workdir!r} is not a directory of the workspace.", code="invalid_workdir"
        )
    settings = context.settings
    timeout = float(params.get("timeoutSeconds", settings.timeout_seconds))
    if timeout > settings.max_timeout_seconds:
        raise ToolError(
            f"`timeoutSeconds` {timeout:g} is over the ceiling of "
            f"{settings.max_timeout_seconds:g}; pass at most that.",
            code="invalid_input",
        )
    env = context.environment(cast(Mapping[str, str], params.get("env") or {}))
    lease = context.table.lease()
    try:
        source = None if lease is None else lease.source
        wrapped = context.sandbox.argv([settings.shell, "-c", command], real, source=source)
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    return Launch(
        command=command,
        argv=wrapped.argv,
        cwd=real,
        shown_cwd=context.confinement.relative(real) or ".",
        env=env,
        timeout_seconds=timeout,
        limits=context.rlimits(),
        fds=wrapped.fds,
        reaped=context.sandbox.reaped,
        lease=lease,
    )


def running_result(session: ProcessSession, sandbox: Sandbox) -> dict[str, Any]:
    """The `status: "running"` result of `exec`."""
    return {
        "status": "running",
        "sessionId": session.id,
        "pid": session.pid,
        "startedAt": session.started_at * 1000,
        "tail": session.combined.tail(TAIL_CHARS),
        "sandbox": sandbox.kind,
    }


def exit_fields(session: ProcessSession) -> dict[str, Any]:
    """`exitCode`, `exitReason`, `message` and the optional `exitSignal` / `timedOut`."""
    ended = session.exit
    assert ended is not None
    fields: dict[str, Any] = {
        "exitCode": ended.exit_code,
        "exitReason": ended.reason,
        "message": ended.message(session.launch),
    }
    if ended.exit_signal is not None:
        fields["exitSignal"] = ended.exit_signal
    if ended.reason == "timeout":
        fields["timedOut"] = True
    return fields


def finished_result(session: ProcessSession, sandbox: Sandbox) -> dict[str, Any]:
    """The result of a command that ended while `exec` waited."""
    ended = session.exit
    assert ended is not None
    return {
        "status": "completed" if ended.ok else "failed",
        **exit_fields(session),
        "stdout": session.stdout.read().text,
        "stderr": session.stderr.read().text,
        "stdoutChars": session.stdout.written,
        "stderrChars": session.stderr.written,
        "stdoutTruncated": session.stdout.truncated,
        "stderrTruncated": session.stderr.truncated,
        "durationMs": int((ended.ended_at - session.started_at) * 1000),
        "sandbox": sandbox.kind,
    }


def approval_text(params: Mapping[str, Any]) -> str:
    """What a person is asked: the whole command, its `env` and `workdir` (never cut)."""
    text = f"`exec` runs a shell command: {str(params.get('command', ''))!r}"
    if params.get("env"):
        text += f" with environment {dict(params['env'])!r}"
    if params.get("workdir") not in (None, "", "."):
        text += f" in {params['workdir']!r}"
    return text


def exec_approval(settings: ShellSettings) -> ApprovalRule:
    """`"never"`, or a rule that asks unless the command matches `allow_commands`."""
    if settings.approval == "never":
        return "never"

    def rule(params: dict[str, Any]) -> str | bool:
        if rule_matches(settings.allow_commands, params):
            return False
        return approval_text(params)

    return rule


def exec_tool(context: ShellContext) -> Tool:
    """The `exec` tool over `context`."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        stdin = checked_text("input", params["input"], nul=True) if "input" in params else None
        launch = _launch(context, params)
        session = context.table.start(launch, owner=call_session.get())
        if stdin is not None:
            session.feed(stdin.encode())
        if params.get("background") is True:
            return running_result(session, context.sandbox)
        wait_ms = int(params.get("yieldMs", context.settings.yield_ms))
        try:
            ended = await session.wait(wait_ms / 1000)
        except BaseException:
            context.table.forget(session.id)  # a cancelled call leaves nothing running
            raise
        if ended:
            context.table.forget(session.id)
            return finished_result(session, context.sandbox)
        return running_result(session, context.sandbox)

    return Tool(
        name="exec",
        description=_DESCRIPTION,
        parameters=EXEC_INPUT,
        output_schema=EXEC_OUTPUT,
        execute=execute,
        approval=exec_approval(context.settings),
    )
