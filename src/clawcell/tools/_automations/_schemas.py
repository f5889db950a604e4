"""The input and output contracts of the `automations` tool (discriminated by `action`)."""

from __future__ import annotations

from typing import Any, Final

from ...catalog import define_output_schema

__all__ = ["ACTIONS", "AUTOMATIONS_INPUT", "AUTOMATIONS_OUTPUT"]

Schema = dict[str, Any]


def obj(required: Schema, optional: Schema | None = None) -> Schema:
    """A closed object (the same shape `clawcell.tools` declares)."""
    properties = {**required, **(optional or {})}
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}  # fmt: skip


def string(description: str = "") -> Schema:
    return {"type": "string", **({"description": description} if description else {})}


def integer(description: str = "", **bounds: int) -> Schema:
    return {"type": "integer", **({"description": description} if description else {}), **bounds}


def boolean() -> Schema:
    return {"type": "boolean"}


def literal(*values: str, description: str = "") -> Schema:
    base: Schema = {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
    return {"type": "string", **base, **({"description": description} if description else {})}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


ACTIONS: Final = (
    "status", "list", "get", "add", "update", "remove", "run", "runs", "pause", "resume",
)  # fmt: skip
_NUMBER: Final = {"type": "number"}
_MAYBE_NUMBER: Final = {"anyOf": [_NUMBER, {"type": "null"}]}
_MAYBE_STRING: Final = {"anyOf": [string(), {"type": "null"}]}
_SCHEDULE: Final = {
    "anyOf": [
        obj({"kind": literal("cron"), "expr": string(), "tz": string()}),
        obj({"kind": literal("every"), "everyMs": integer()}),
        obj({"kind": literal("at"), "at": string()}),
    ]
}
_PAYLOAD: Final = {
    "anyOf": [
        obj({"kind": literal("cell"), "code": string()},
            {"timeoutMs": integer(), "maxToolCalls": integer()}),
        obj({"kind": literal("agentTurn"), "prompt": string()}, {"sessionId": string()}),
    ]
}  # fmt: skip
_JOB: Final = obj(
    {
        "id": string(),
        "name": string(),
        "enabled": boolean(),
        "schedule": _SCHEDULE,
        "payload": _PAYLOAD,
        "catchUp": literal("one", "skip"),
        "maxHistory": integer(),
        "createdAtMs": _NUMBER,
        "updatedAtMs": _NUMBER,
        "nextRunAtMs": _MAYBE_NUMBER,
    },
    {"declarationKey": string()},
)
_PAGE: Final = {
    "total": integer(minimum=0),
    "offset": integer(minimum=0),
    "limit": integer(minimum=0),
    "hasMore": boolean(),
    "nextOffset": {"anyOf": [integer(minimum=0), {"type": "null"}]},
}
_SUMMARY: Final = obj(
    {
        "id": string(),
        "name": string(),
        "enabled": boolean(),
        "scheduleKind": literal("cron", "every", "at"),
        "nextRunAtMs": _MAYBE_NUMBER,
        "nextRunAt": _MAYBE_STRING,
    }
)
_RUN: Final = obj(
    {
        "runId": string(),
        "jobId": string(),
        "trigger": literal("schedule", "manual"),
        "status": literal("queued", "running", "ok", "error", "lost"),
        "dueAtMs": _MAYBE_NUMBER,
        "queuedAtMs": _NUMBER,
        "startedAtMs": _MAYBE_NUMBER,
        "endedAtMs": _MAYBE_NUMBER,
        "envelopeStatus": _MAYBE_STRING,
        "summary": _MAYBE_STRING,
        "error": _MAYBE_STRING,
    }
)
_STATUS: Final = obj(
    {
        "enabled": boolean(),
        "jobs": integer(minimum=0),
        "activeRuns": integer(minimum=0),
        "nextWakeAtMs": _MAYBE_NUMBER,
    },
    {"workerId": string()},
)
_TRUE: Final = {"type": "boolean", "const": True}
_FALSE: Final = {"type": "boolean", "const": False}
_ADD: Final = {
    "anyOf": [
        _JOB,
        obj({"ok": _TRUE, "declarationKey": string(), "created": boolean(), "job": _JOB}),
    ]
}
_REMOVE: Final = {
    "anyOf": [
        obj({"ok": _TRUE, "removed": boolean()}, {"sessionCleanup": literal("pending")}),
        obj({"ok": _FALSE, "removed": _FALSE}),
    ]
}
_RUN_NOW: Final = {
    "anyOf": [
        obj({"ok": _TRUE, "enqueued": _TRUE, "runId": string()}),
        obj({"ok": _TRUE, "ran": _FALSE, "reason": literal("disabled", "already-running")}),
    ]
}
AUTOMATIONS_OUTPUT: Final[dict[str, Any]] = define_output_schema(
    input_property="action",
    variants={
        "status": _STATUS,
        "list": obj({"jobs": array(_SUMMARY), **_PAGE}),
        "get": _JOB,
        "add": _ADD,
        "update": _JOB,
        "remove": _REMOVE,
        "run": _RUN_NOW,
        "runs": obj({"entries": array(_RUN), **_PAGE}),
        "pause": _JOB,
        "resume": _JOB,
    },
)
AUTOMATIONS_INPUT: Final = obj(
    {"action": literal(*ACTIONS, description="What to do.")},
    {
        "jobId": string("The job of get, update, remove, run, runs, pause and resume."),
        "job": {
            "type": "object",
            "description": "`add`: {name?, schedule: {kind:'cron',expr,tz} | {kind:'every',"
            "everyMs} | {kind:'at',at}, payload: {kind:'cell',code,timeoutMs?,maxToolCalls?} | "
            "{kind:'agentTurn',prompt,sessionId?}, enabled?, catchUp?: 'one'|'skip', "
            "maxHistory?, declarationKey?}",
        },
        "patch": {"type": "object", "description": "`update`: the fields to change."},
        "offset": integer("`list`/`runs`: first entry.", minimum=0),
        "limit": integer("`list`/`runs`: most entries (default 50).", minimum=1, maximum=200),
    },
)
