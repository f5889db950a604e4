"""The app's side of MCP App views: storing them, their call data, and their tool calls.

`McpAppApi.sink` is the `clawcell.mcp.mcp_app_sink` of the turns the chat runs: each view a
turn opens is stored as the document `ma_<hex>` (`index.html`, served by the canvas host; and
`call.json`, the call's input and result, served only here to the logged-in page).

A view's own `tools/call` (relayed by `static/mcp-apps.js`) may name only a tool of the view's
server, and runs only with a `trigger`: `gesture` (the page saw a user gesture in the view,
proven in the page, see `static/mcp-apps.js`) or `approved` (the user allowed a call that came
without one); `none` records a call the page refused, which never runs. Every call is an
activity row of the session (`_mcp_app_activity.py`). It runs as a cell in the view's session,
so the session's tool policy, the server's `ask` patterns and approvals apply as to any cell:
when a call waits for approval the page shows an approval card under the view, and the decision
continues the cell (`wait`), which runs the call once.

Threat model: the view is hostile; everything it sends arrives through the page, which checked
nothing but the JSON-RPC shape. Here the session, the view, the tool name (a key of the view's
own tool table, never code) and the arguments (a JSON object of bounded size, embedded in the
cell as a JSON string for `JSON.parse`, never as an object literal) are checked before anything
runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import InputError
from ...mcp import McpAppView
from .._approvals import read_decision
from .._protocol import ApprovingRunner, ChatAgent, DocumentStore, agent_store
from .._responses import MAX_JSON_BODY, json_body
from .._sessions._paths import path_session
from ._activity import MAX_ROWS_SHOWN, TRIGGERS, ActivityLog, Trigger

__all__ = ["McpAppApi"]

_CALL_FILE: Final = "call.json"
_VIEW: Final = re.compile(r"ma_[A-Za-z0-9_-]{1,61}")
_CALLABLE: Final = re.compile(r"MCP(?:\.[A-Za-z_$][A-Za-z0-9_$]*){2}")
MAX_ARGUMENTS_BYTES: Final = 64 * 1024
_PATH: Final = "/api/sessions/{session}/mcp-apps/{view}"


def _error(message: str, status: int = 400) -> Response:
    return JSONResponse({"error": message}, status_code=status)


class McpAppApi:
    """Stores the views a turn opens and answers the page's requests for them."""

    def __init__(self, agent: ChatAgent, documents: DocumentStore | None) -> None:
        self.agent, self.documents = agent, documents
        self.activity = ActivityLog(agent_store(agent))

    def sink_for(self, session_id: str) -> Any:
        """The `mcp_app_sink` of a turn in `session_id` (`None` without a document store)."""
        documents = self.documents
        if documents is None:
            return None

        async def sink(view: McpAppView) -> None:
            call = {
                "sessionId": session_id,
                "serverName": view.server_name,
                "toolName": view.tool_name,
                "toolCallId": view.tool_call_id,
                "arguments": dict(view.arguments),
                "result": dict(view.result),
                "tools": dict(view.tools),
            }
            files = {"index.html": view.html.encode("utf-8", "replace"),
                     _CALL_FILE: json.dumps(call).encode()}  # fmt: skip
            await documents.put_document(view.view_id, files)

        return sink

    async def _call(self, request: Request) -> tuple[str, dict[str, Any]] | Response:
        session, view = path_session(request), request.path_params["view"]
        if isinstance(session, Response):
            return session
        stored = None
        if self.documents is not None and _VIEW.fullmatch(view):
            stored = await self.documents.get_document_file(view, _CALL_FILE)
        call: object = json.loads(stored) if stored else None
        if not isinstance(call, dict) or cast(dict[str, Any], call).get("sessionId") != session:
            return _error(f"no MCP App view {view!r:.80} in session {session!r:.80}.", 404)
        return session, cast(dict[str, Any], call)

    async def view(self, request: Request) -> Response:
        """`GET …/mcp-apps/<view>`: the tool's input and result for the view, its activity
        rows (newest `MAX_ROWS_SHOWN`) and the approvals its waiting calls still hold."""
        found = await self._call(request)
        if isinstance(found, Response):
            return found
        session, call = found
        keys = ("serverName", "toolName", "toolCallId", "arguments", "result")
        rows = (await self.activity.rows(session, request.path_params["view"]))[-MAX_ROWS_SHOWN:]
        runner: Any = self.agent.mode(session)
        pending: list[dict[str, Any]] = []
        for row in rows:
            run = row.get("runId")
            if row.get("status") == "waiting" and isinstance(run, str):
                held = [dict(p.to_json()) for p in await runner.pending_approvals(run)]
                if held:
                    pending.append({"runId": run, "approvals": held})
        return JSONResponse(
            {**{key: call.get(key) for key in keys}, "activity": rows, "pending": pending}
        )

    async def tool_call(self, request: Request) -> Response:
        """`POST …/mcp-apps/<view>/calls` `{name, arguments, trigger}`: one of the server's
        tools, recorded as an activity row of the session."""
        found = await self._call(request)
        if isinstance(found, Response):
            return found
        session, call = found
        body = await json_body(request)
        if body is None:
            return _error(
                f"the body must be a JSON object of at most {MAX_JSON_BODY} bytes: "
                '`{"name", "arguments", "trigger"}`.'
            )
        name, arguments, trigger = body.get("name"), body.get("arguments", {}), body.get("trigger")
        tools = cast(Mapping[str, str], call.get("tools") or {})
        callable_name = tools.get(name) if isinstance(name, str) else None
        if callable_name is None or not _CALLABLE.fullmatch(callable_name):
            return _error(
                f"the view may call only tools of MCP server {call.get('serverName')!r}; "
                f"{name!r:.80} is not one of them ({sorted(tools)!r:.200})."
            )
        encoded = json.dumps(arguments, ensure_ascii=False)
        if not isinstance(arguments, dict) or len(encoded.encode()) > MAX_ARGUMENTS_BYTES:
            return _error(
                f"`arguments` must be a JSON object of at most {MAX_ARGUMENTS_BYTES} bytes."
            )
        if trigger not in TRIGGERS:
            return _error(
                f"`trigger` must be 'gesture', 'approved' or 'none', got {trigger!r:.40}: an "
                "app's tool call runs only after the user acted in it or allowed the call.",
                403,
            )
        row = await self.activity.start(
            session, call=call, view=request.path_params["view"], tool=str(name),
            arguments=cast(dict[str, Any], arguments), trigger=cast(Trigger, trigger),
        )  # fmt: skip
        if trigger == "none":  # recorded, never run
            return _error("the call was refused: the user did not act in the app or allow it", 403)
        # Data, never code: the arguments reach the cell as a JSON string that `JSON.parse`
        # reads, so a key such as `"__proto__"` stays an own property (an object literal
        # would set the prototype with it).
        code = f"return await {callable_name}(JSON.parse({json.dumps(encoded)}));"
        title = f"MCP App {call.get('toolName')} → {name}"
        runner: Any = self.agent.mode(session)
        envelope = await runner.call_tool("exec", {"code": code, "title": title})
        return await self._answer(session, row, runner, envelope)

    async def decide(self, request: Request) -> Response:
        """`POST …/calls/<run>/approvals/<approval>` `{decision}`: decide, then continue."""
        found = await self._call(request)
        if isinstance(found, Response):
            return found
        session, _ = found
        answer = await read_decision(request, by="control-ui:mcp-app")
        if isinstance(answer, Response):
            return answer
        runner = self.agent.mode(session)
        if not isinstance(runner, ApprovingRunner):
            return _error("this agent's Code Mode cannot decide approvals.", 501)
        try:
            await runner.answer(answer)
        except InputError as exc:
            return _error(exc.message, 409)
        run = answer.run_id
        row = await self.activity.waiting_row(session, run)
        return await self._answer(
            session, row, runner, await runner.call_tool("wait", {"runId": run})
        )

    async def _answer(
        self, session: str, row: str | None, runner: Any, envelope: Mapping[str, Any]
    ) -> Response:
        """The cell's outcome as the page needs it (a result, an approval to ask, or an
        error), recorded in the call's activity row."""
        status = envelope.get("status")
        run = envelope.get("runId")
        if status == "completed":
            if row is not None:
                await self.activity.finish(session, row, status="completed",
                                           result=envelope.get("value"))  # fmt: skip
            return JSONResponse({"result": envelope.get("value")})
        if status == "waiting" and envelope.get("reason") == "approval" and isinstance(run, str):
            if row is not None:
                await self.activity.finish(session, row, status="waiting", runId=run)
            pending = [dict(p.to_json()) for p in await runner.pending_approvals(run)]
            return JSONResponse({"approval": {"runId": run, "approvals": pending}})
        error = str(envelope.get("error") or f"the call ended {status!r}")
        if row is not None:
            await self.activity.finish(session, row, status="failed", error=error[:2000])
        return JSONResponse({"error": error})

    def routes(self) -> list[Route]:
        """The API routes (behind the app's guard: token, CSRF, same origin)."""
        return [
            Route(_PATH, self.view, methods=["GET"]),
            Route(_PATH + "/calls", self.tool_call, methods=["POST"]),
            Route(_PATH + "/calls/{run}/approvals/{approval}", self.decide, methods=["POST"]),
        ]
