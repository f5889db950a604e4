"""The input and output contracts of `exec` and `process`.

`process` selects its result by the input `action` (`x-openclaw-input-discriminator`), in the
shape of the original's process tool: every branch admits `{status: "failed", error}`, a
failure reported as a result rather than thrown. `tests/tools/data/openclaw_process_schemas.json`
holds the original's declared schema; a test checks these branches carry its fields.
"""

from __future__ import annotations

from typing import Any, Final

from ...catalog import define_output_schema
from .._schema import array, boolean, integer, literal, obj, string

__all__ = ["EXEC_INPUT", "EXEC_OUTPUT", "PROCESS_ACTIONS", "PROCESS_INPUT", "PROCESS_OUTPUT"]

_NUMBER: Final = {"type": "number"}
_SANDBOX: Final = literal("bwrap", "none")
_REASON: Final = literal(
    "exited", "signal", "timeout", "killed", "cpu_limit", "file_size_limit", "write_limit"
)
_EXIT: Final = {
    "exitCode": {"anyOf": [integer(), {"type": "null"}]},
    "exitReason": _REASON,
    "message": string(),
}
_EXIT_OPTIONAL: Final = {"exitSignal": string(), "timedOut": boolean()}
_TERMINAL: Final = literal("completed", "failed")

EXEC_INPUT: Final = obj(
    {"command": string("Shell command, run as `sh -c command` in the workspace.", minLength=1)},
    {
        "workdir": string("Working directory relative to the workspace root (default: root)."),
        "env": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Environment variables added to the scrubbed environment.",
        },
        "timeoutSeconds": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Lifetime in seconds; the process group is killed when it expires.",
        },
        "yieldMs": integer("Wait this long before returning a running `sessionId`.", minimum=0),
        "background": boolean("Return a `sessionId` at once; the timeout still applies."),
        "input": string("Text written to stdin, which is then closed."),
    },
)
_EXEC_DONE: Final = obj(
    {
        "status": _TERMINAL,
        **_EXIT,
        "stdout": string(),
        "stderr": string(),
        "stdoutChars": integer(),
        "stderrChars": integer(),
        "stdoutTruncated": boolean(),
        "stderrTruncated": boolean(),
        "durationMs": integer(),
        "sandbox": _SANDBOX,
    },
    _EXIT_OPTIONAL,
)
_EXEC_RUNNING: Final = obj(
    {
        "status": literal("running"),
        "sessionId": string(),
        "pid": integer(),
        "startedAt": _NUMBER,
        "tail": string(),
        "sandbox": _SANDBOX,
    }
)
EXEC_OUTPUT: Final = {"anyOf": [_EXEC_DONE, _EXEC_RUNNING]}

PROCESS_ACTIONS: Final = ("list", "poll", "log", "write", "kill", "remove")
PROCESS_INPUT: Final = obj(
    {"action": literal(*PROCESS_ACTIONS, description="What to do.")},
    {
        "sessionId": string("The session `exec` returned; every action but `list` needs it."),
        "cursor": integer("`poll`: read output from here (default: where the last poll ended).",
                          minimum=0),
        "timeout": integer("`poll`: wait up to this many ms (at most 30000) for the end.",
                           minimum=0),
        "offset": integer("`log`: first line (0-based; default: the last `limit` lines).",
                          minimum=0),
        "limit": integer("`log`: most lines (default 200).", minimum=1),
        "data": string("`write`: text sent to stdin."),
        "eof": boolean("`write`: close stdin after the data."),
    },
)  # fmt: skip

_FAILED: Final = obj(
    {"status": literal("failed"), "error": string()},
    {"sessionId": string(), "effectStatus": literal("unknown")},
)
_SESSION: Final = {"sessionId": string()}
_INPUT_STATE: Final = {
    "stdinWritable": boolean(),
    "waitingForInput": boolean(),
    "idleMs": _NUMBER,
    "lastOutputAt": _NUMBER,
}
_LISTED: Final = {
    **_SESSION,
    "startedAt": _NUMBER,
    "runtimeMs": _NUMBER,
    "cwd": string(),
    "command": string(),
    "tail": string(),
    "truncated": boolean(),
}
_LIST: Final = {
    "anyOf": [
        _FAILED,
        obj(
            {
                "status": literal("completed"),
                "sessions": array(
                    {
                        "anyOf": [
                            obj({**_LISTED, "status": literal("running"), "pid": integer(),
                                 **_INPUT_STATE}),
                            obj({**_LISTED, "status": _TERMINAL, "endedAt": _NUMBER, **_EXIT},
                                _EXIT_OPTIONAL),
                        ]
                    }
                ),
            }
        ),
    ]
}  # fmt: skip
_READ: Final = {"aggregated": string(), "cursor": integer(), "dropped": integer()}
_POLL: Final = {
    "anyOf": [
        _FAILED,
        obj({"status": literal("running"), **_SESSION, **_INPUT_STATE, **_READ},
            {"retryInMs": _NUMBER}),
        obj({"status": _TERMINAL, **_SESSION, **_EXIT, **_READ}, _EXIT_OPTIONAL),
    ]
}  # fmt: skip
_PAGE: Final = {
    **_SESSION,
    "output": string(),
    "offset": integer(),
    "total": integer(),
    "totalLines": integer(),
    "totalChars": integer(),
    "truncated": boolean(),
}
_LOG: Final = {
    "anyOf": [
        _FAILED,
        obj({**_PAGE, "status": literal("running"), **_INPUT_STATE}),
        obj({**_PAGE, "status": _TERMINAL, **_EXIT}, _EXIT_OPTIONAL),
    ]
}
_WRITE: Final = {
    "anyOf": [
        _FAILED,
        obj({"status": literal("running"), **_SESSION, "bytes": integer(),
             "stdinWritable": boolean()}),
    ]
}  # fmt: skip
_CONTROL: Final = {
    "anyOf": [_FAILED, obj({"status": literal("completed"), **_SESSION, "wasRunning": boolean()})]
}
PROCESS_OUTPUT: Final[dict[str, Any]] = define_output_schema(
    input_property="action",
    variants={
        "list": _LIST,
        "poll": _POLL,
        "log": _LOG,
        "write": _WRITE,
        "kill": _CONTROL,
        "remove": _CONTROL,
    },
)
