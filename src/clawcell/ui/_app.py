"""`create_app`: the Control UI as a Starlette ASGI application.

Pages are rendered on the server; the browser runs three small ES modules from `/static/`.
Every response passes the `Guard` (Host, token, CSRF); pages carry a strict CSP without
inline script.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Final, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import InputError
from ..reply import project_chat_display_messages
from ._approvals import DECIDED_BY, read_decision, with_pending
from ._canvas_host import canvas_origin, create_canvas_app
from ._markdown import highlight_css
from ._media import MEDIA_PATH, MediaRoots, media_route
from ._playground import EXAMPLE_CELL, playground_events
from ._protocol import AgentEvent, ChatAgent, DocumentStore
from ._render import Renderer, grouped, with_delivery_facts
from ._security import CAP_PREFIX, Guard, Secrets
from ._settings import UiSettings
from ._stream import TurnStream, sse_message, stream_turn
from ._subagent_rows import CHILD_SESSION_ID, parent_of, stored_runs, with_subagent_runs
from ._templates import STATIC_DIR, fragment, render_template

__all__ = ["create_app", "page_csp"]

MAX_MESSAGE_CHARS: Final = 100_000
PAGE_MESSAGES: Final = 100
"""History messages a chat page renders at first, and per page loaded on scroll up."""
MAX_DISPLAY_CHARS: Final = 4_000_000
"""History shows messages whole up to this size (long ones fold behind "Show more")."""
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_RUN_OR_APPROVAL_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


def page_csp(settings: UiSettings, canvas: str | None = None) -> str:
    """The Content-Security-Policy of the app's pages (no inline script, no plugins); frames
    only from the canvas host `canvas` (and any `http(s)` URL when external embeds are on)."""
    frames = canvas or "'none'"
    if settings.allow_external_embed_urls:
        frames = f"{canvas or ''} http: https:".strip()
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self' https: data:; media-src 'self' https: data:; "
        f"frame-src {frames}; connect-src 'self'; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )


class _Ui:
    """The request handlers, sharing the agent, settings and secrets."""

    def __init__(
        self, agent: ChatAgent, settings: UiSettings, documents: DocumentStore | None
    ) -> None:
        self.agent, self.settings, self.documents = agent, settings, documents
        self.secrets = Secrets(token=settings.token)
        self.stops: dict[str, asyncio.Event] = {}
        """The running turn of each session, by the event that stops it."""
        self.media = MediaRoots(settings.media_roots)

    def canvas(self, request: Request) -> str | None:
        """The canvas host's origin for this request's host name (`None` without one)."""
        return canvas_origin(self.settings, request.headers.get("host", ""))

    def renderer(self, request: Request) -> Renderer:
        origin = self.canvas(request)
        host = f"{origin}{CAP_PREFIX}{self.secrets.canvas_cap}" if origin else None
        return Renderer(settings=self.settings, media=self.media, canvas_host_url=host)

    def page(self, request: Request, name: str, **context: Any) -> HTMLResponse:
        html = render_template(name, csrf=self.secrets.csrf, settings=self.settings, **context)
        csp = page_csp(self.settings, self.canvas(request))
        return HTMLResponse(html, headers={"content-security-policy": csp})

    async def chat(self, request: Request) -> Response:
        sessions = list(await self.agent.sessions())
        default = sessions[0].session_id if sessions else "main"
        session_id = request.query_params.get("session", default)
        child = CHILD_SESSION_ID.fullmatch(session_id) is not None  # a sub-agent's: read-only
        if not (child or _SESSION_ID.fullmatch(session_id)):
            return _bad_session(session_id)
        page, start = await self._page(session_id, None)  # the latest; older ones on scroll
        page = with_subagent_runs(page, await stored_runs(self.agent, session_id))
        messages = self.renderer(request).messages(page)
        messages = await with_pending(messages, lambda: self.agent.mode(session_id))
        messages = grouped(messages)
        return self.page(
            request,
            "chat.html",
            page="chat",
            older=start,
            sessions=sessions,
            session_id=session_id,
            parent_session=parent_of(session_id) if child else None,
            messages=messages,
        )

    async def _page(self, session_id: str, before: int | None) -> tuple[list[dict[str, Any]], int]:
        """Up to `PAGE_MESSAGES` stored messages before index `before` (the latest when
        `None`), projected for display, and the index they start at. Only the page is
        projected, so a long session's page costs what a short one's does."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        stored = await (transcript or self.agent.history)(session_id)
        end = len(stored) if before is None else min(before, len(stored))
        start = max(0, end - PAGE_MESSAGES)
        page = stored[start:end]
        if transcript is not None:
            page = project_chat_display_messages(
                with_delivery_facts(page), max_chars=MAX_DISPLAY_CHARS
            )
        return page, start

    async def _history(self, session_id: str) -> list[dict[str, Any]]:
        """The projected history, with delivery facts kept when the raw transcript is there."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        if transcript is None:
            return await self.agent.history(session_id)
        stored = await transcript(session_id)
        return project_chat_display_messages(
            with_delivery_facts(stored), max_chars=MAX_DISPLAY_CHARS
        )

    async def playground(self, request: Request) -> Response:
        session_id = request.query_params.get("session", "playground")
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        tools = _tool_names(self.agent.mode(session_id))
        return self.page(
            request,
            "playground.html",
            page="playground",
            session_id=session_id,
            tools=tools,
            example=EXAMPLE_CELL,
        )

    async def older(self, request: Request) -> Response:
        """`GET …/messages?before=N`: the page of history before message N, as HTML."""
        session_id = request.path_params["session"]
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        before = request.query_params.get("before", "")
        if not before.isdigit():
            return _bad_request(f"`before` must be a message index, got {before!r:.40}.")
        page, start = await self._page(session_id, int(before))
        views = grouped(self.renderer(request).messages(page))
        html = "".join(fragment("message", value=view) for view in views)
        return JSONResponse({"html": html, "before": start})

    async def list_sessions(self, request: Request) -> Response:
        sessions = await self.agent.sessions()
        return JSONResponse(
            [{"sessionId": s.session_id, "updatedAt": s.updated_at} for s in sessions]
        )

    async def history(self, request: Request) -> Response:
        session_id = request.path_params["session"]
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        return JSONResponse(await self._history(session_id))

    async def turn(self, request: Request) -> Response:
        session_id = request.path_params["session"]
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        body = await _json_body(request)
        text = body.get("text") if body is not None else None
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_MESSAGE_CHARS:
            return _bad_request(
                f'the body must be JSON `{{"text": …}}` with 1–{MAX_MESSAGE_CHARS} '
                f"characters, got {text!r:.80}."
            )
        stream = TurnStream(renderer=self.renderer(request), container="transcript")
        return _sse(self._turn_events(session_id, text, stream))

    async def _turn_events(
        self, session_id: str, text: str, stream: TurnStream
    ) -> AsyncIterator[str]:
        user = stream.renderer.message({"role": "user", "content": text})
        html = fragment("message", value=user)
        yield sse_message("user", {"ops": [{"op": "append", "target": "transcript", "html": html}]})
        async for message in self._stoppable(session_id, self.agent.run(session_id, text), stream):
            yield message

    async def _stoppable(
        self, session_id: str, events: AsyncIterator[AgentEvent], stream: TurnStream
    ) -> AsyncIterator[str]:
        """`stream_turn`, registered as the session's running turn for `POST …/stop`."""
        stop = self.stops[session_id] = asyncio.Event()
        try:
            async for message in stream_turn(events, stream, stop):
                yield message
        finally:
            if self.stops.get(session_id) is stop:
                del self.stops[session_id]

    async def stop(self, request: Request) -> Response:
        session_id = request.path_params["session"]
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        stop = self.stops.get(session_id)
        if stop is None:
            return JSONResponse(
                {"error": f"no turn is running in session {session_id!r}.", "stopped": False},
                status_code=409,
            )
        stop.set()
        return JSONResponse({"stopped": True})

    async def decide(self, request: Request) -> Response:
        session_id, run_id, approval_id = (
            request.path_params[k] for k in ("session", "run", "approval")
        )
        if not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        for name, value in (("run", run_id), ("approval", approval_id)):
            if not _RUN_OR_APPROVAL_ID.fullmatch(value):
                return _bad_request(f"{name} id {value!r:.80} is not allowed.")
        body = read_decision(await _json_body(request))
        if isinstance(body, str):
            return _bad_request(body)
        events = aiter(self.agent.decide(
            session_id, run_id, approval_id, body.decision,
            note=body.note, remember=body.remember, by=DECIDED_BY,
        ))  # fmt: skip
        try:  # the agent refuses on its first step, before anything was streamed
            first = await anext(events)
        except InputError as exc:
            return JSONResponse({"error": exc.message, "code": exc.code}, status_code=409)
        stream = TurnStream(renderer=self.renderer(request), container="transcript")
        return _sse(self._stoppable(session_id, _chain(first, events), stream))

    async def play(self, request: Request) -> Response:
        tool = request.path_params["tool"]
        if tool not in ("exec", "wait"):
            return JSONResponse({"error": f"no playground tool {tool!r}"}, status_code=404)
        body = await _json_body(request) or {}
        session_id = body.get("session", "playground")
        if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
            return _bad_session(session_id)
        key = "code" if tool == "exec" else "runId"
        if not isinstance(body.get(key), str):
            return _bad_request(f"`{tool}` needs a string `{key}`, got {body.get(key)!r:.80}.")
        runner = self.agent.mode(session_id)
        return _sse(playground_events(runner, tool, {key: body[key]}))

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", self.chat, methods=["GET"]),
            Route("/playground", self.playground, methods=["GET"]),
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/sessions/{session}/history", self.history, methods=["GET"]),
            Route("/api/sessions/{session}/messages", self.older, methods=["GET"]),
            Route("/api/sessions/{session}/turns", self.turn, methods=["POST"]),
            Route("/api/sessions/{session}/stop", self.stop, methods=["POST"]),
            Route(
                "/api/sessions/{session}/runs/{run}/approvals/{approval}",
                self.decide,
                methods=["POST"],
            ),
            Route("/api/playground/{tool:str}", self.play, methods=["POST"]),
            Route(MEDIA_PATH, media_route(self.media), methods=["GET"]),
            Route("/highlight.css", _highlight_css, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR)),
        ]


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


_HIGHLIGHT_CSS: Final = highlight_css()


async def _highlight_css(_: Request) -> Response:
    return Response(_HIGHLIGHT_CSS, media_type="text/css")


def _tool_names(runner: object) -> list[str]:
    catalog = getattr(runner, "catalog", None)
    entries: list[dict[str, Any]] = catalog.all() if catalog is not None else []
    return sorted(str(entry.get("callableName")) for entry in entries)


async def _json_body(request: Request) -> dict[str, Any] | None:
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


def _bad_request(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


def _bad_session(session_id: object) -> Response:
    return _bad_request(
        f"session id {session_id!r:.80} is not allowed; use 1–128 letters, digits, `_.:-`."
    )


def _sse(events: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def create_app(
    agent: ChatAgent,
    settings: UiSettings | None = None,
    *,
    documents: DocumentStore | None = None,
) -> Starlette:
    """The Control UI for `agent` as an ASGI app (`serve_ui` serves it with its canvas host).

    Hosted canvas documents are not served by this app but by the canvas host, a second ASGI
    app (`app.state.canvas_app`) that must listen on `settings.canvas_port` of the same host
    names; with `canvas_port = 0` canvases show as blocked.

    Args:
        agent: The agent to chat with (`clawcell.agent.Agent`, or anything with its shape).
        settings: Bind address, token, embed and media policy; defaults when omitted (with a
            fresh random token: read it from `settings.token`).
        documents: Where hosted canvas documents live; the agent's `store` when omitted and
            it can hold documents. Without one, canvas URLs answer 404.
    """
    settings = settings or UiSettings()
    store: object = getattr(agent, "store", None)
    if documents is None and isinstance(store, DocumentStore):
        documents = store
    ui = _Ui(agent, settings, documents)
    app = Starlette(routes=ui.routes())
    app.state.ui_settings = settings
    app.state.canvas_app = create_canvas_app(documents, settings, ui.secrets)
    app.add_middleware(Guard, settings=settings, secrets=ui.secrets)
    return app
