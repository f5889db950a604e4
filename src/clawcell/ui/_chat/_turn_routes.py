"""The chat's turn routes: start a turn or queue a message, follow a session's turns live,
stop a named turn, edit or drop a queued message, decide an approval.

Turns belong to the server (`_turns`): a request starts one and may follow it, but ending the
request (a reload, a closed tab, a followed link) never stops it; only Stop does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Final, Protocol, cast, runtime_checkable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...agent import Attachment
from ...errors import InputError
from ...mcp import mcp_app_sink
from ...store import MemoryStore, SessionStore
from .._approvals import decided, read_decision
from .._attachments import Uploads, sent_blocks
from .._mcp_apps._api import McpAppApi
from .._protocol import AgentEvent, ChatAgent, SharedTurnsAgent
from .._render._messages import Renderer
from .._responses import RUN_OR_APPROVAL_ID, bad_request, json_body, sse
from .._sessions._paths import path_session
from .._stream._events import TurnStream, sse_message, stream_turn
from .._subagent_rows import CHILD_SESSION_ID, RunWatch
from .._templates import fragment
from ._interrupted import interrupted_messages
from ._store_turns import StoreTurns
from ._turns import MAX_QUEUED, LiveTurn, LocalTurns, TurnRegistry
from ._turns import Producer as _Producer

__all__ = ["MAX_MESSAGE_CHARS", "ChatTurns"]

MAX_MESSAGE_CHARS: Final = 100_000
LIVE_EVENT: Final = "live"
"""The SSE event name of the live stream's own messages (turn begun/ended, queue, gone)."""


@runtime_checkable
class _StoreAgent(Protocol):
    """An agent on a store several workers may share (`clawcell.agent.Agent`)."""

    @property
    def store(self) -> SessionStore: ...

    @property
    def turn_lease_seconds(self) -> float: ...

    async def recover_turn(self, session_id: str) -> bool: ...


class ChatTurns:
    """The turn routes over `agent`; `renderer` gives a request's renderer."""

    def __init__(
        self,
        agent: ChatAgent,
        renderer: Callable[[Request], Renderer],
        apps: McpAppApi,
        stored_count: Callable[[str], Awaitable[int]],
        registry: TurnRegistry | None = None,
        *,
        uploads: Uploads | None = None,
    ) -> None:
        self.agent, self.renderer, self.apps = agent, renderer, apps
        self.uploads = uploads
        self.stored_count = stored_count
        self.turns: TurnRegistry = registry or self._registry(agent)
        self._last_renderer: dict[str, Renderer] = {}

    def _registry(self, agent: ChatAgent) -> TurnRegistry:
        """`StoreTurns` when the agent's store may be shared by workers, else `LocalTurns`."""
        if isinstance(agent, _StoreAgent) and not isinstance(agent.store, MemoryStore):
            return StoreTurns(agent.store, self._queued_turn, interrupted=interrupted_messages,
                              recover=agent.recover_turn,
                              lease_seconds=agent.turn_lease_seconds)  # fmt: skip
        return LocalTurns(self._queued_turn)

    async def _queued_turn(self, session_id: str, text: str) -> None:
        """A queued message's turn: rendered with the renderer of the session's last request
        here (on a worker that never served the session: one for no particular request)."""
        renderer = self._last_renderer.get(session_id)
        if renderer is None:
            renderer = self.renderer(Request({"type": "http", "headers": [], "query_string": b""}))
        if await self._start_message(session_id, text, renderer) is None:
            await self.turns.enqueue(session_id, text)  # another worker's turn began: after it

    async def _start_message(
        self, session_id: str, text: str, renderer: Renderer, files: Sequence[Attachment] = ()
    ) -> LiveTurn | None:
        self._last_renderer[session_id] = renderer

        async def events(turn: LiveTurn, stream: TurnStream) -> AsyncIterator[str]:
            user = stream.renderer.message({"role": "user", "content": sent_blocks(text, files)})
            html = fragment("message", value=user)
            yield sse_message("user", {"ops": [{"op": "append", "target": stream.container,
                                                "html": html}]})  # fmt: skip
            run = self._agent_run(session_id, text, turn, files)
            async for message in self._run(turn, run, stream):
                yield message

        return await self.turns.start(session_id, self._producer(session_id, renderer, events))

    def _producer(
        self,
        session_id: str,
        renderer: Renderer,
        events: Callable[[LiveTurn, TurnStream], AsyncIterator[str]],
    ) -> _Producer:
        async def produce(turn: LiveTurn) -> AsyncIterator[str]:
            try:
                turn.history_index = await self.stored_count(session_id)  # before the agent
            finally:
                turn.indexed.set()
            stream = TurnStream(renderer=renderer, container="transcript")
            async for message in events(turn, stream):
                yield message

        return produce

    def _agent_run(
        self, session_id: str, text: str, turn: LiveTurn, files: Sequence[Attachment]
    ) -> AsyncIterator[AgentEvent]:
        more: dict[str, Any] = {"attachments": files} if files else {}  # (`Uploads` checked)
        if isinstance(self.agent, SharedTurnsAgent):  # a Stop to another worker sets turn.stop
            more["stop"] = turn.stop
        return cast(Any, self.agent).run(session_id, text, **more)

    async def _run(
        self,
        turn: LiveTurn,
        events: AsyncIterator[AgentEvent],
        stream: TurnStream,
        remote: asyncio.Event | None = None,
    ) -> AsyncIterator[str]:
        """`stream_turn` for the turn's events; its `stop` is the turn's Stop (and `remote`,
        set by a Stop another worker recorded in the store, stops it too)."""
        mcp_app_sink.set(self.apps.sink_for(turn.session_id))  # views the turn's cells open
        watch = RunWatch(self.agent, turn.session_id)  # its sub-agent rows, live
        relay = asyncio.create_task(_relay(remote, turn.stop)) if remote is not None else None
        try:
            async for message in stream_turn(events, stream, turn.stop, watch):
                yield message
        finally:
            if relay is not None:
                relay.cancel()

    async def _stop_elsewhere(self, session_id: str) -> bool:
        """Record a Stop in the store for a turn another worker runs (agents that share a
        store); whether a turn of the session was running anywhere."""
        agent = self.agent
        return isinstance(agent, SharedTurnsAgent) and await agent.stop(session_id)

    async def turn(self, request: Request) -> Response:
        """`POST …/turns {"text"}`: start a turn (and follow it, unless `?follow=0`), or queue
        the message when a turn runs (`202 {"queued": {id, text}, "turnId"}`)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        if CHILD_SESSION_ID.fullmatch(session_id):
            return bad_request(
                f"session {session_id!r:.80} is a sub-agent's session (`<parent>/sub/<n>`): "
                "it is read-only here; its runs take their tasks from the parent's cells."
            )
        body = await json_body(request)
        ids: object = (body or {}).get("attachments") or []
        text = _message_text(body, files=bool(ids))
        if not isinstance(text, str):
            return bad_request(text[0])
        files = await self.uploads.take(session_id, ids) if self.uploads and ids else []
        if isinstance(files, str):
            return bad_request(files)
        running = await self.turns.current(session_id)
        if running is None:
            turn = await self._start_message(session_id, text, self.renderer(request), files)
            if turn is not None:
                if files and self.uploads is not None:
                    await self.uploads.forget(session_id, cast(list[str], ids))
                return self._answer(request, turn)
            running = await self.turns.current(session_id)  # another worker's began first
        if files:
            return _conflict(f"turn {running and running.turn_id!r} is running: a message "
                             "with files is not queued; send it once the turn ended.")  # fmt: skip
        queued = await self.turns.enqueue(session_id, text)
        if queued is None:
            return _conflict(
                f"the queue of session {session_id!r:.80} is full ({MAX_QUEUED} "
                "messages): drop one or wait for the turn to end."
            )
        turn_id = running.turn_id if running is not None else None
        return JSONResponse({"queued": queued.to_json(), "turnId": turn_id}, 202)

    def _answer(self, request: Request, turn: LiveTurn) -> Response:
        """The started turn: followed over SSE to its end, or only named (`?follow=0`)."""
        headers = {"x-turn-id": turn.turn_id}
        if request.query_params.get("follow") == "0":
            return JSONResponse({"turnId": turn.turn_id}, status_code=202, headers=headers)
        response = sse(self._one_turn(turn))
        response.headers.update(headers)
        return response

    async def _one_turn(self, turn: LiveTurn) -> AsyncIterator[str]:
        """One turn's SSE messages, backlog then live, until it ends (closing only detaches)."""
        follow = self.turns.follow(turn.session_id, turn.turn_id, 0)
        try:
            async for kind, data in follow:
                if kind == "message":
                    yield data["sse"]
                elif kind in ("turn_end", "gone"):
                    return
        finally:
            await cast(AsyncGenerator[Any, None], follow).aclose()

    async def live(self, request: Request) -> Response:
        """`GET …/live[?turn=<id>&from=<n>][&until=idle]`: the session's turns as they
        happen, each message with `id: <turnId>/<n>`, and `live` messages for a turn begun
        or ended, the queue, or a turn no longer kept (`gone`: reload)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        turn_id = request.query_params.get("turn") or None
        start = request.query_params.get("from", "0")
        if not start.isdigit() or (turn_id and not RUN_OR_APPROVAL_ID.fullmatch(turn_id)):
            return bad_request(f"`turn` must be a turn id and `from` a count, got {start!r:.40}.")
        until_idle = request.query_params.get("until") == "idle"
        return sse(self._live(session_id, turn_id, int(start), until_idle))

    async def _live(
        self, session_id: str, turn_id: str | None, start: int, until_idle: bool
    ) -> AsyncIterator[str]:
        follow = self.turns.follow(session_id, turn_id, start, until_idle=until_idle)
        current, count = turn_id, start
        try:
            async for kind, data in follow:
                if kind == "keepalive":
                    yield ": keepalive\n\n"
                elif kind == "message":
                    count += 1
                    yield f"id: {current}/{count}\n{data['sse']}"
                else:
                    if kind == "turn" and data["turnId"] != current:
                        current, count = data["turnId"], 0
                    yield sse_message(LIVE_EVENT, {"event": {"type": kind, **data}, "ops": []})
        finally:
            await cast(AsyncGenerator[Any, None], follow).aclose()

    async def stop_turn(self, request: Request) -> Response:
        """`POST …/turns/<turnId>/stop`: stop that turn (never a queued message); a turn that
        already ended answers `200 {"stopped": false, "state"}`, not an error."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        turn_id = request.path_params["turn"]
        state = await self.turns.stop(session_id, turn_id)
        if state is None and await self._stop_elsewhere(session_id):  # it runs on another worker
            return JSONResponse({"stopped": True, "turnId": turn_id, "state": "running"})
        if state is None:
            return JSONResponse({"error": f"no turn {turn_id!r:.80} in session {session_id!r:.80}"
                                 " (it ended long ago, or never ran here): reload the page.",
                                 "stopped": False}, status_code=404)  # fmt: skip
        return JSONResponse({"stopped": state == "running", "turnId": turn_id, "state": state})

    async def stop(self, request: Request) -> Response:
        """`POST …/stop`: stop the session's running turn (`409` when none runs)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        running = await self.turns.current(session_id)
        if running is not None:
            await self.turns.stop(session_id, running.turn_id)
        elsewhere = running is None and await self._stop_elsewhere(session_id)
        if running is None and not elsewhere:
            return JSONResponse(
                {"error": f"no turn is running in session {session_id!r}.", "stopped": False},
                status_code=409,
            )
        return JSONResponse({"stopped": True})

    async def queued(self, request: Request) -> Response:
        """`PATCH …/queue/<id> {"text"}` edits a queued message, `DELETE` drops it; `404`
        once it left the queue (it became a turn, or another tab dropped it)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        message_id = request.path_params["message"]
        if request.method == "DELETE":
            if await self.turns.drop(session_id, message_id):
                return JSONResponse({"dropped": True})
            return _gone(message_id)
        text = _message_text(await json_body(request))
        if not isinstance(text, str):
            return bad_request(text[0])
        edited = await self.turns.edit(session_id, message_id, text)
        return JSONResponse({"queued": edited.to_json()}) if edited else _gone(message_id)

    async def queue(self, request: Request) -> Response:
        """`GET …/queue`: the session's queued messages, oldest first."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        queue = await self.turns.queue(session_id)
        return JSONResponse({"queue": [m.to_json() for m in queue]})

    async def decide(self, request: Request) -> Response:
        """`POST …/runs/<run>/approvals/<approval>`: record a decision; the continued turn
        is a turn of the server like any other (followed unless `?follow=0`)."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        answer = await read_decision(request)
        if isinstance(answer, Response):
            return answer
        if (running := await self.turns.current(session_id)) is not None:
            return _conflict(f"turn {running.turn_id!r} is running in session {session_id!r:.80}:"
                             " decide once it ended (or stop it).")  # fmt: skip
        remote, agent = asyncio.Event(), self.agent  # remote: a Stop from another worker
        events = aiter(decided(agent, session_id, answer, stop=remote))
        try:  # the agent refuses on its first step, before anything was streamed
            first = await anext(events)
        except InputError as exc:
            return JSONResponse({"error": exc.message, "code": exc.code}, status_code=409)
        renderer = self.renderer(request)
        self._last_renderer[session_id] = renderer

        def continued(turn: LiveTurn, stream: TurnStream) -> AsyncIterator[str]:
            return self._run(turn, _chain(first, events), stream, remote)

        turn = await self.turns.start(session_id, self._producer(session_id, renderer, continued))
        if turn is None:  # another worker began a turn of the session this very moment
            if isinstance(events, AsyncGenerator):  # it holds the session's turn lease
                await cast(AsyncGenerator[AgentEvent, None], events).aclose()
            return _conflict(f"a turn began in session {session_id!r:.80}: decide once it ended.")
        return self._answer(request, turn)

    def routes(self) -> list[Route]:
        base = "/api/sessions/{session}"
        return [
            Route(f"{base}/turns", self.turn, methods=["POST"]),
            Route(f"{base}/turns/{{turn}}/stop", self.stop_turn, methods=["POST"]),
            Route(f"{base}/stop", self.stop, methods=["POST"]),
            Route(f"{base}/live", self.live, methods=["GET"]),
            Route(f"{base}/queue", self.queue, methods=["GET"]),
            Route(f"{base}/queue/{{message}}", self.queued, methods=["PATCH", "DELETE"]),
            Route(f"{base}/runs/{{run}}/approvals/{{approval}}", self.decide, methods=["POST"]),
        ]


def _message_text(body: dict[str, Any] | None, *, files: bool = False) -> str | tuple[str]:
    """The message's text, or (as a 1-tuple) why the body is refused (empty: only with files)."""
    text = body.get("text", "" if files else None) if body is not None else None
    if not isinstance(text, str) or not (files or text.strip()) or len(text) > MAX_MESSAGE_CHARS:
        return (
            f'the body must be JSON `{{"text": …}}` with 1–{MAX_MESSAGE_CHARS} '
            f"characters, got {text!r:.80}.",
        )
    return text


def _conflict(message: str) -> Response:
    return JSONResponse({"error": message, "code": "conflict"}, status_code=409)


def _gone(message_id: str) -> Response:
    return JSONResponse(
        {"error": f"message {message_id!r:.80} is no longer queued: it was sent as a turn "
                  "or dropped (the queue on the page shows what is left).", "code": "not_queued"},
        status_code=404,
    )  # fmt: skip


async def _chain(first: AgentEvent, rest: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
    """`first`, then the rest; the rest is closed however the stream ends (it holds the
    session's turn lock while it is open)."""
    try:
        yield first
        async for event in rest:
            yield event
    finally:
        if isinstance(rest, AsyncGenerator):
            await cast(AsyncGenerator[AgentEvent, None], rest).aclose()


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()
