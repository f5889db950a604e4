"""The `process` tool: list, poll, page, feed, kill and remove the sessions `exec` started.

Every action answers with a result; a missing or unknown session is `{status: "failed",
error}` (as the original does), so a cell checks `status` instead of catching.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from ...approvals import ApprovalRule
from ...catalog import Tool, call_session
from ...errors import ToolError
from ._processes import IDLE_INPUT_MS, ProcessSession
from ._shell_exec import TAIL_CHARS, ShellContext, checked_text, exit_fields
from ._shell_schemas import PROCESS_INPUT, PROCESS_OUTPUT

__all__ = ["process_tool"]

MAX_POLL_WAIT_MS: Final = 30_000
DEFAULT_LOG_LINES: Final = 200
_DESCRIPTION = (
    "Manage the commands `exec` left running (`sessionId`). `list`: every session; `poll`: "
    "new output since the last poll (or `cursor`) and the exit status, waiting up to "
    "`timeout` ms for the end; `log`: lines `offset`.. of the kept output; `write`: send "
    "`data` to stdin (`eof` closes it), answers the bytes accepted; `kill`: stop the process "
    "group; `remove`: kill and forget. Failures are results: check `status === 'failed'`."
)

Action = Callable[[ShellContext, ProcessSession, Mapping[str, Any]], Any]


def _failed(error: str) -> dict[str, Any]:
    return {"status": "failed", "error": error}


def _lost(session_id: str) -> dict[str, Any]:
    return {
        "status": "failed",
        "error": f"Session {session_id!r} belonged to an earlier host process (a restart, or "
        "tools that were closed); its command was killed with that host, so whether it "
        "finished its work is unknown. Check its effects before running it again.",
        "sessionId": session_id,
        "effectStatus": "unknown",
    }


def _state(session: ProcessSession) -> dict[str, Any]:
    if session.running:
        idle = session.idle_ms()
        writable = session.stdin_writable
        return {
            "status": "running",
            "stdinWritable": writable,
            "waitingForInput": writable and idle >= IDLE_INPUT_MS,
            "idleMs": idle,
            "lastOutputAt": session.last_output_at * 1000,
        }
    assert session.exit is not None
    return {"status": "completed" if session.exit.ok else "failed", **exit_fields(session)}


def _listed(session: ProcessSession) -> dict[str, Any]:
    end = session.exit.ended_at if session.exit is not None else time.time()
    item: dict[str, Any] = {
        "sessionId": session.id,
        "startedAt": session.started_at * 1000,
        "runtimeMs": int((end - session.started_at) * 1000),
        "cwd": session.launch.shown_cwd,
        "command": session.launch.command,
        "tail": session.combined.tail(TAIL_CHARS),
        "truncated": session.combined.truncated,
        **_state(session),
    }
    if session.running:
        item["pid"] = session.pid
    else:
        item["endedAt"] = end * 1000
    return item


async def _poll(_: ShellContext, session: ProcessSession, params: Mapping[str, Any]) -> Any:
    wait_ms = min(int(params.get("timeout", 0)), MAX_POLL_WAIT_MS)
    if wait_ms > 0:
        await session.wait(wait_ms / 1000)
    cursor = int(params.get("cursor", session.poll_cursor))
    read = session.combined.read(cursor)
    session.poll_cursor = read.end
    result = {
        "sessionId": session.id,
        **_state(session),
        "aggregated": read.text,
        "cursor": read.end,
        "dropped": read.dropped,
    }
    if session.running:
        result["retryInMs"] = 1000
    return result


async def _log(_: ShellContext, session: ProcessSession, params: Mapping[str, Any]) -> Any:
    lines = session.combined.read().text.splitlines(keepends=True)
    limit = int(params.get("limit", DEFAULT_LOG_LINES))
    start = int(params["offset"]) if "offset" in params else max(0, len(lines) - limit)
    page = lines[start : start + limit]
    return {
        "sessionId": session.id,
        "output": "".join(page),
        "offset": min(start, len(lines)),
        "total": len(lines),
        "totalLines": session.combined.lines,
        "totalChars": session.combined.written,
        "truncated": session.combined.truncated or start + limit < len(lines),
        **_state(session),
    }


async def _write(_: ShellContext, session: ProcessSession, params: Mapping[str, Any]) -> Any:
    if not session.stdin_writable:
        return _failed(
            f"Session {session.id!r} does not accept input: it ended or stdin is closed."
        )
    data = checked_text("data", params.get("data", ""), nul=True)
    accepted = session.write(data.encode(), eof=params.get("eof") is True)
    return {
        "status": "running",
        "sessionId": session.id,
        "bytes": accepted,
        "stdinWritable": session.stdin_writable,
    }


async def _kill(_: ShellContext, session: ProcessSession, params: Mapping[str, Any]) -> Any:
    was_running = session.running
    session.kill()
    await session.wait(5.0)
    return {"status": "completed", "sessionId": session.id, "wasRunning": was_running}


async def _remove(context: ShellContext, session: ProcessSession, params: Mapping[str, Any]) -> Any:
    was_running = session.running
    context.table.forget(session.id)
    await session.wait(5.0)
    return {"status": "completed", "sessionId": session.id, "wasRunning": was_running}


_ACTIONS: Final[dict[str, Any]] = {
    "poll": _poll, "log": _log, "write": _write, "kill": _kill, "remove": _remove,
}  # fmt: skip


def process_approval(approval: str) -> ApprovalRule:
    """Ask before `write` (it drives a running command) unless approval is `"never"`."""
    if approval == "never":
        return "never"

    def rule(params: dict[str, Any]) -> str | bool:
        if params.get("action") != "write":
            return False
        data = params.get("data", "")
        return f"`process write` sends input to session {params.get('sessionId')!r}: {data!r}"

    return rule


def process_tool(context: ShellContext) -> Tool:
    """The `process` tool over `context`."""

    async def execute(params: dict[str, Any]) -> Any:
        action = str(params["action"])
        if action == "list":
            return {
                "status": "completed",
                "sessions": [_listed(s) for s in context.table.sessions(owner=call_session.get())],
            }
        session_id = params.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            return _failed(f"`process {action}` needs the `sessionId` that `exec` returned.")
        session = context.table.get(session_id, owner=call_session.get())
        if session is None and context.table.is_foreign(session_id):
            return _lost(session_id)
        if session is None:
            return _failed(
                f"No session {session_id!r}: it never existed, was removed, or ended before "
                "`exec` returned (its output was in that result)."
            )
        try:
            return await _ACTIONS[action](context, session, params)
        except ToolError as exc:
            return _failed(str(exc))

    return Tool(
        name="process",
        description=_DESCRIPTION,
        parameters=PROCESS_INPUT,
        output_schema=PROCESS_OUTPUT,
        execute=execute,
        approval=process_approval(context.settings.approval),
    )
