"""Input and output schemas of the session tools."""

from __future__ import annotations

from typing import Final

from .._schema import array, boolean, integer, literal, obj, string

__all__ = [
    "HISTORY_INPUT", "HISTORY_OUTPUT", "LIST_INPUT", "LIST_OUTPUT", "SEARCH_INPUT",
    "SEARCH_OUTPUT", "SEND_INPUT", "SEND_OUTPUT", "STATUS_INPUT", "STATUS_OUTPUT",
]  # fmt: skip

_ID = string("A session id (from `sessions_list`).", minLength=1)
LIST_INPUT: Final = obj(
    {},
    {
        "limit": integer("Most sessions (default 20, at most 100).", minimum=1, maximum=100),
        "offset": integer("Sessions to skip, most recent first.", minimum=0),
    },
)
LIST_OUTPUT: Final = obj(
    {
        "sessions": array(
            obj(
                {
                    "sessionId": string(),
                    "title": string(),
                    "updatedAt": string(),
                    "messages": integer(),
                    "parkedRuns": integer(),
                    "current": boolean(),
                }
            )
        ),
        "total": integer(),
    },
    {"nextOffset": integer()},
)
HISTORY_INPUT: Final = obj(
    {"sessionId": _ID},
    {
        "offset": integer("First message index.", minimum=0),
        "limit": integer("Most messages (default 50, at most 200).", minimum=1, maximum=200),
        "maxChars": integer("Most characters per message (default 2000).", minimum=1),
    },
)
_MESSAGE = obj(
    {"index": integer(), "role": string(), "text": string(), "truncated": boolean()},
    {"toolName": string(), "turnId": string()},
)
HISTORY_OUTPUT: Final = obj(
    {"sessionId": string(), "messages": array(_MESSAGE), "total": integer()},
    {"nextOffset": integer()},
)
SEARCH_INPUT: Final = obj(
    {"query": string("Words to find (all of them, any case).", minLength=1)},
    {"limit": integer("Most hits (default 20, at most 100).", minimum=1, maximum=100)},
)
SEARCH_OUTPUT: Final = obj(
    {
        "results": array(
            obj({"sessionId": string(), "index": integer(), "role": string(), "snippet": string()})
        ),
        "engine": literal("fts5", "postgres", "scan"),
        "truncated": boolean(),
    }
)
SEND_INPUT: Final = obj(
    {"sessionId": _ID, "text": string("The user message to post.", minLength=1)},
)
SEND_OUTPUT: Final = obj(
    {"sessionId": string(), "status": literal("started", "queued")}, {"turnId": string()}
)
STATUS_INPUT: Final = obj({})
STATUS_OUTPUT: Final = obj(
    {
        "sessionId": string(),
        "model": string(),
        "messages": integer(),
        "usage": obj({"input": integer(), "output": integer()}),
        "parkedRuns": array(string()),
        "pendingApprovals": integer(),
    }
)
