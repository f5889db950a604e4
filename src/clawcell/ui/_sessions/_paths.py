"""Session ids in the Control UI's URLs: every id the agent accepts, each one path segment.

A session id may hold any character but a control character (`check_session_id`): `/` (a
sub-agent's session is `<parent>/sub/<n>`), `%`, `?`, `#`, spaces and any script included. The
page writes it into a URL percent-encoded as one segment (`encodeURIComponent`), and in a query
(`?session=`) the same way. A server decodes `%2F` to `/` before routing, which would split the
id; `SessionSegments` therefore routes on the raw path: after `/api/sessions/` and
`/api/playground/` it leaves the next segment encoded, and `path_session` decodes it once.

Refused, each with the reason: an empty id, one of more than `MAX_SESSION_ID_CHARS`, one with a
control character or invalid UTF-8, and the ids `.` and `..`, which no URL path can carry (a
browser resolves them as dot segments before it sends the request).
"""

from __future__ import annotations

import unicodedata
from typing import Final
from urllib.parse import quote, quote_from_bytes, unquote, unquote_to_bytes

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..._session_ids import check_session_id
from ...errors import ConfigurationError
from .._responses import bad_request

__all__ = [
    "MAX_SESSION_ID_CHARS",
    "SessionSegments",
    "bad_session",
    "path_session",
    "session_problem",
]

MAX_SESSION_ID_CHARS: Final = 1024
"""The longest session id the UI takes (a child nested five deep under a long parent fits)."""
_PREFIXES: Final = ("/api/sessions/", "/api/playground/")


def session_problem(session_id: object) -> str | None:
    """Why `session_id` cannot be a session id in the UI, or `None` when it can."""
    if not isinstance(session_id, str) or not session_id:
        return "a session id is a non-empty string"
    if len(session_id) > MAX_SESSION_ID_CHARS:
        return f"a session id has at most {MAX_SESSION_ID_CHARS} characters"
    if session_id in (".", ".."):
        return "`.` and `..` cannot travel in a URL path"
    try:
        check_session_id(session_id)
    except ConfigurationError as exc:
        char = next((c for c in session_id if unicodedata.category(c) in ("Cc", "Cs")), None)
        return f"it holds the control character {char!r}" if char else exc.message
    return None


def bad_session(session_id: object, problem: str | None = None) -> Response:
    """The 400 answer for a session id the UI does not take."""
    reason = problem or session_problem(session_id) or "it is not a session id"
    return bad_request(f"session id {session_id!r:.80} is not allowed: {reason}.")


def path_session(request: Request) -> str | Response:
    """The session id of a route's `{session}` segment (kept encoded by `SessionSegments`),
    or the 400 answer saying why it is not one."""
    raw = request.path_params["session"]
    try:
        session_id = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return bad_session(unquote(raw), "it is not valid UTF-8")
    problem = session_problem(session_id)
    return session_id if problem is None else bad_session(session_id, problem)


class SessionSegments:
    """ASGI middleware: the session segment of `/api/sessions/…` and `/api/playground/…`
    paths reaches the router still percent-encoded (canonically), so an id with `/` stays
    one segment; the rest of the path is decoded as usual."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = _encoded_session_path(scope)
            if path is not None:
                scope = {**scope, "path": path}
        await self.app(scope, receive, send)


def _encoded_session_path(scope: Scope) -> str | None:
    raw = _raw_path(scope)
    prefix = next((p for p in _PREFIXES if raw.startswith(p.encode())), None)
    if prefix is None:
        return None
    segment, slash, rest = raw[len(prefix) :].partition(b"/")
    if not segment:
        return None
    canonical = quote_from_bytes(unquote_to_bytes(segment), safe="")
    return prefix + canonical + slash.decode() + unquote(rest.decode("utf-8", "replace"))


def _raw_path(scope: Scope) -> bytes:
    """The request path as it came, percent-encoding kept."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes):  # a server without `raw_path`: the decoded path re-encoded
        return quote(str(scope["path"]), safe="/").encode()
    root = str(scope.get("root_path", "")).encode()
    return raw[len(root) :] if root and raw.startswith(root) else raw
