"""The declared inputs and results of `agents_list`, `sessions_spawn` and `agents_wait`."""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "LIST_INPUT",
    "LIST_OUTPUT",
    "MAX_WAIT_MS",
    "REPLY_MAX_CHARS",
    "SPAWN_INPUT",
    "SPAWN_OUTPUT",
    "WAIT_INPUT",
    "WAIT_OUTPUT",
]

MAX_WAIT_MS: Final = 3_600_000
"""The longest one `agents_wait` may wait (an hour)."""
REPLY_MAX_CHARS: Final = 20_000
"""The longest reply text `agents_wait` returns per run (the whole reply stays in the child
session's transcript)."""


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


_STRING: Final = {"type": "string"}
_INT: Final = {"type": "integer"}
_NULL_STRING: Final = {"type": ["string", "null"]}
_STATUS: Final = {"enum": ["running", "completed", "failed", "cancelled"]}
_USAGE: Final = _obj(
    {
        "inputTokens": {"type": ["integer", "null"]},
        "outputTokens": {"type": ["integer", "null"]},
        "modelTurns": _INT,
        "cells": _INT,
        "toolCalls": _INT,
        "wallMs": {"type": "number"},
    }
)
_RUN_FIELDS: Final = {
    "runId": _STRING,
    "sessionId": _STRING,
    "profile": _STRING,
    "label": _NULL_STRING,
    "status": _STATUS,
}
"""What names a run, in `agents_list` and in `agents_wait`'s results alike."""
_RUN: Final = _obj({**_RUN_FIELDS, "startedAt": {"type": "number"}})
_RESULT: Final = _obj(
    {
        **_RUN_FIELDS,
        "reply": _NULL_STRING,
        "truncated": {"type": "boolean"},
        "error": _NULL_STRING,
        "usage": {"anyOf": [_USAGE, {"type": "null"}]},
    }
)

LIST_INPUT: Final = _obj({})
LIST_OUTPUT: Final = _obj(
    {
        "profiles": {
            "type": "array",
            "items": _obj(
                {
                    "name": _STRING,
                    "description": _STRING,
                    "model": _STRING,
                    "tools": {"type": "array", "items": _STRING},
                }
            ),
        },
        "runs": {"type": "array", "items": _RUN},
        "depth": _INT,
        "maxDepth": _INT,
        "maxChildren": _INT,
        "canSpawn": {"type": "boolean"},
    }
)
SPAWN_INPUT: Final = _obj(
    {
        "profile": {"type": "string", "description": "The profile name (see `agents_list`)."},
        "task": {
            "type": "string",
            "minLength": 1,
            "description": "The whole brief: the child sees nothing of this conversation.",
        },
    },
    {
        "label": {
            "type": "string",
            "maxLength": 200,
            "description": "A short label to tell runs apart.",
        }
    },
)
SPAWN_OUTPUT: Final = _obj(
    {"runId": _STRING, "sessionId": _STRING, "profile": _STRING, "status": {"const": "running"}}
)
WAIT_INPUT: Final = _obj(
    {},
    {
        "runIds": {
            "type": "array",
            "items": _STRING,
            "description": "Runs to wait for (default: every run this session started).",
        },
        "timeoutMs": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_WAIT_MS,
            "description": "Longest wait in ms (default 60000); 0 only reports.",
        },
    },
)
WAIT_OUTPUT: Final = _obj(
    {
        "runs": {"type": "array", "items": _RESULT},
        "running": {"type": "array", "items": _STRING},
        "timedOut": {"type": "boolean"},
    }
)
