"""What every route shares: reading a JSON body safely, the id pattern, refusals, SSE
(session ids: `_sessions/_paths.py`)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

__all__ = [
    "MAX_JSON_BODY",
    "RUN_OR_APPROVAL_ID",
    "bad_request",
    "json_body",
    "read_capped",
    "sse",
]

RUN_OR_APPROVAL_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
MAX_JSON_BODY: Final = 4 * 1024 * 1024
"""The largest JSON body a route reads (a message is at most 100,000 characters; even
escaped as `\\uXXXX` each, that is 600 KB)."""


async def read_capped(request: Request, cap: int) -> bytes | None:
    """The body, or `None` when it declares or passes more than `cap` bytes: a declared
    `Content-Length` over the cap is refused before a byte is read, and a body without one is
    read in chunks that stop at the one passing the cap (the rest is never read)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, with every string valid UTF-8; `None` when the body is not
    a JSON object (or nests past what the parser can take, or is over `MAX_JSON_BODY`)."""
    data = await read_capped(request, MAX_JSON_BODY)
    if data is None:
        return None
    try:
        body = json.loads(data)
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
