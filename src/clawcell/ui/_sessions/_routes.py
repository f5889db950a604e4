"""The session drawer's API: a bounded, searchable session list, rename / pin / archive /
delete, and search of every transcript's text.

The truth is the store every worker shares (`clawcell.store.SessionDirectory` on the agent's
`store`), so what one worker changes is what the next request to any worker lists; nothing is
kept in this process. A store without a session list (a bare test double) answers these
routes with 404 and the page keeps its plain list of ids.

Deleting refuses a session whose turn runs, here or on another worker: the route holds the
session's turn lease (`clawcell.store.SessionTurns`) while it deletes, so no turn can start
in between, and a lease held by a running turn is a 409 that says what to do.

Transcript search is the store's own (`TranscriptSearch`: FTS5, PostgreSQL text search, or
the memory store's bounded scan); a store without one answers it with 404.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import InputError
from ...store import (
    SessionDirectory,
    SessionRecord,
    SessionStore,
    SessionTurns,
    TranscriptHit,
    TranscriptSearch,
)
from .._chat._live_rows import INDEX as RUNNING_TURNS
from .._chat._turns import TurnRegistry
from .._protocol import ChatAgent, agent_store
from .._responses import bad_request, json_body
from .._subagent_rows import stored_runs
from ._paths import path_session

__all__ = ["MAX_HITS", "SessionList", "directory_of"]

MAX_HITS: Final = 20
"""Transcript search hits one request returns at most."""


def directory_of(agent: ChatAgent) -> SessionDirectory | None:
    """The agent's store when it keeps a session list."""
    store = agent_store(agent)
    return store if isinstance(store, SessionDirectory) else None


class SessionList:
    """The routes of the session drawer over the agent's store."""

    def __init__(self, agent: ChatAgent, turns: TurnRegistry) -> None:
        self.agent, self.turns = agent, turns
        self.directory = directory_of(agent)

    def _missing(self) -> Response:
        return JSONResponse(
            {"error": "this agent's store keeps no session list; give the agent a "
                      "`clawcell.store` backend (memory, SQLite or PostgreSQL)."},
            status_code=404,
        )  # fmt: skip

    async def page(self, request: Request) -> Response:
        """`GET /api/session-list?q=&archived=1&limit=&after=`: one page of the list."""
        if self.directory is None:
            return self._missing()
        params = request.query_params
        limit = params.get("limit", "50")
        if not limit.isdigit():
            return bad_request(f"`limit` must be a count from 1 to 100, got {limit!r:.40}.")
        try:
            page = await self.directory.session_page(
                query=params.get("q", "")[:200],
                archived=params.get("archived") == "1",
                limit=int(limit),
                after=params.get("after"),
            )
        except InputError as exc:
            return bad_request(str(exc))
        sessions = [record.to_json() for record in page.sessions]
        return JSONResponse({"sessions": sessions, "next": page.next})

    async def update(self, request: Request) -> Response:
        """`PATCH /api/sessions/{session}` with `{title?, pinned?, archived?}`."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        if self.directory is None:
            return self._missing()
        change = _change(await json_body(request))
        if isinstance(change, str):
            return bad_request(change)
        try:
            record = await self.directory.update_session(session_id, **change)
        except InputError as exc:
            return bad_request(str(exc))
        if record is None:
            return _unknown(session_id)
        return JSONResponse(record.to_json())

    async def delete(self, request: Request) -> Response:
        """`DELETE /api/sessions/{session}`: the transcript, record, state and derived rows,
        and its entry in the index of running turns; 409 while a turn runs (or messages wait
        in its queue) or a sub-agent run it started runs (its heartbeat would write the
        session's rows again)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        if self.directory is None:
            return self._missing()
        if await self.turns.current(session_id) is not None or await self.turns.queue(session_id):
            return _running(session_id)
        if any(run.get("status") == "running" for run in await stored_runs(self.agent, session_id)):
            return _subagents_running(session_id)
        store = agent_store(self.agent)
        hold = None
        if isinstance(store, SessionStore):
            hold = await SessionTurns(store).hold(session_id, wait=0)
            if hold is None:
                return _running(session_id)
        try:
            deleted = await self.directory.delete_session(session_id)
            if isinstance(store, SessionStore):  # no turn of it runs: an entry left is stale
                await store.delete(RUNNING_TURNS, session_id)
        finally:
            if hold is not None:
                await hold.release()
        if not deleted:
            return _unknown(session_id)
        return JSONResponse({"deleted": session_id})

    async def search(self, request: Request) -> Response:
        """`GET /api/search?q=<words>[&session=<id>]`: the transcript entries holding every
        word, best first, at most `MAX_HITS`, each with its session's title and a link."""
        if self.directory is None:
            return self._missing()
        query, only = request.query_params.get("q", ""), request.query_params.get("session")
        tokens = query.casefold().split()[:8]
        if not tokens or len(query) > 200:
            return bad_request(f"`q` must be 1 to 200 characters of words, got {query!r:.40}.")
        sessions = None if only is None else [only]
        store = agent_store(self.agent)
        if not isinstance(store, TranscriptSearch):
            return _unsearchable()
        found = await store.search_transcripts(tokens, limit=MAX_HITS, sessions=sessions)
        hits, truncated = list(found.hits), found.truncated
        titles = await _titles(self.directory, {hit.session_id for hit in hits})
        return JSONResponse(
            {"hits": [_hit(hit, titles.get(hit.session_id)) for hit in hits],
             "truncated": truncated}
        )  # fmt: skip

    def routes(self) -> list[Route]:
        return [
            Route("/api/session-list", self.page, methods=["GET"]),
            Route("/api/search", self.search, methods=["GET"]),
            Route("/api/sessions/{session}", self.update, methods=["PATCH"]),
            Route("/api/sessions/{session}", self.delete, methods=["DELETE"]),
        ]


async def _titles(directory: SessionDirectory, session_ids: set[str]) -> dict[str, SessionRecord]:
    found = await asyncio.gather(*(directory.session_record(s) for s in session_ids))
    return {record.session_id: record for record in found if record is not None}


def _change(body: dict[str, Any] | None) -> dict[str, Any] | str:
    """The fields a `PATCH` changes, or why the body is refused."""
    fields = {"title": str, "pinned": bool, "archived": bool}
    if body is None or not body or not set(body) <= set(fields):
        return (
            "the body must be a JSON object with `title` (text), `pinned` or `archived` "
            f"(true or false), got {body!r:.80}."
        )
    for name, kind in fields.items():
        if name in body and not isinstance(body[name], kind):
            wanted = "text" if kind is str else "true or false"
            return f"`{name}` must be {wanted}, got {body[name]!r:.80}."
    return body


def _hit(hit: TranscriptHit, record: SessionRecord | None) -> dict[str, Any]:
    return {
        "sessionId": hit.session_id,
        "title": record.title if record is not None else "",
        "index": hit.index,
        "role": hit.role,
        "snippet": hit.snippet,
    }


def _unsearchable() -> Response:
    return JSONResponse(
        {"error": "this agent's store does not search transcripts; give the agent a "
                  "`clawcell.store` backend (memory, SQLite or PostgreSQL)."},
        status_code=404,
    )  # fmt: skip


def _running(session_id: str) -> Response:
    return JSONResponse(
        {"error": f"session {session_id!r:.80} has a turn running (or messages queued): stop it "
                  "or wait for it to end, then delete the session.", "code": "turn_running"},
        status_code=409,
    )  # fmt: skip


def _subagents_running(session_id: str) -> Response:
    return JSONResponse(
        {"error": f"session {session_id!r:.80} has sub-agent runs running: wait for them to "
                  "end, then delete the session.", "code": "subagents_running"},
        status_code=409,
    )  # fmt: skip


def _unknown(session_id: str) -> Response:
    return JSONResponse(
        {"error": f"there is no session {session_id!r:.80} (it has no messages, or it was "
                  "deleted): reload the session list.", "code": "unknown_session"},
        status_code=404,
    )  # fmt: skip
