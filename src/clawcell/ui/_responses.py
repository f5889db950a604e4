"""What every route shares: reading a JSON body safely, the id pattern, refusals, SSE
(session ids: `_session_paths`)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

__all__ = [
    "RUN_OR_APPROVAL_ID",
    "bad_request",
    "json_body",
    "sse",
]

RUN_OR_APPROVAL_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


async def json_body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, with every string valid UTF-8; `None` when the body is not
    a JSON object (or nests past what the parser can take)."""
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict):
        return None
    return cast(dict[str, Any], _valid_text(cast(dict[str, Any], body)))


def _valid_text(body: object) -> object:
    """`body` with lone surrogates (`"\\ud800"` escapes in the JSON) replaced by U+FFFD, so no
    text that is stored, rendered or sent can fail to encode."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return json.loads(fixed)
    return body


def bad_request(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


def sse(events: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
