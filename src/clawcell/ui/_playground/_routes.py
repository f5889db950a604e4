"""The playground's routes: its page (with the run history), `exec`/`wait`, and decisions
on the approvals its runs wait for.

Approvals here follow the chat's rules: a card is live only while its run still waits on it.
A new `exec` in a session supersedes what earlier runs of that session still wait for (each
is expired with reason `superseded` in the audit trail, and its card says so), and the
server refuses a decision on an approval that is not pending with 409, whatever the page
shows. A decision streams the decided card and then, once the run waits for nothing else,
the run continuing (`wait`) as a new card at the top of the history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ...approvals import ApprovalDecision
from ...errors import InputError
from ...store import EntryStore
from .._approvals import read_decision
from .._protocol import ApprovingRunner, CatalogRunner, ChatAgent, agent_store
from .._responses import bad_request, json_body, sse
from .._sessions._paths import bad_session, path_session, session_problem
from .._stream._events import Op, sse_message
from ._exec import EXAMPLE_CELL, panel_fragment, playground_events
from ._runs import PlayHistory

__all__ = ["PageRenderer", "Playground"]

PageRenderer = Callable[..., HTMLResponse]
"""`page(request, template, **context)`: a full page with the app's CSP."""
PLAYGROUND_SESSION: Final = "playground"


class Playground:
    """The playground page and API over `agent`'s Code Mode sessions."""

    def __init__(self, agent: ChatAgent, page: PageRenderer) -> None:
        self.agent, self.page = agent, page
        store = agent_store(agent)
        self.history = PlayHistory(store if isinstance(store, EntryStore) else None)

    async def view(self, request: Request) -> Response:
        session_id = request.query_params.get("session", PLAYGROUND_SESSION)
        if session_problem(session_id) is not None:
            return bad_session(session_id)
        runner = self.agent.mode(session_id)
        return self.page(
            request,
            "playground.html",
            page="playground",
            session_id=session_id,
            tools=_tool_names(runner),
            example=EXAMPLE_CELL,
            runs=await self.history.views(session_id, runner),
        )

    async def play(self, request: Request) -> Response:
        tool = request.path_params["tool"]
        if tool not in ("exec", "wait"):
            return JSONResponse({"error": f"no playground tool {tool!r}"}, status_code=404)
        body = await json_body(request) or {}
        session_id = body.get("session", PLAYGROUND_SESSION)
        if not isinstance(session_id, str) or session_problem(session_id) is not None:
            return bad_session(session_id)
        key = "code" if tool == "exec" else "runId"
        if not isinstance(body.get(key), str):
            return bad_request(f"`{tool}` needs a string `{key}`, got {body.get(key)!r:.80}.")
        runner = self.agent.mode(session_id)
        before: list[Op] = []
        if tool == "exec" and isinstance(runner, ApprovingRunner):
            parked = await self.history.parked_run_ids(session_id)
            expired = await runner.expire_approvals(parked, reason="superseded")
            before = await self._redrawn(runner, session_id, expired, open=False)
        events = playground_events(runner, tool, {key: body[key]}, history=self.history,
                                   session_id=session_id, before=before)  # fmt: skip
        return sse(events)

    async def decide(self, request: Request) -> Response:
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        answer = await read_decision(request)
        if isinstance(answer, Response):
            return answer
        runner = self.agent.mode(session_id)
        if not isinstance(runner, ApprovingRunner):
            return JSONResponse(
                {"error": "this agent's Code Mode cannot decide approvals."}, status_code=501
            )
        try:
            record = await runner.answer(answer)
        except InputError as exc:
            return JSONResponse({"error": exc.message, "code": exc.code}, status_code=409)
        return sse(self._continued(runner, session_id, record))

    async def _continued(
        self, runner: ApprovingRunner, session_id: str, record: ApprovalDecision
    ) -> AsyncIterator[str]:
        """The decided card, then the run continuing once nothing else of it is pending."""
        ops = await self._redrawn(runner, session_id, [record], open=True)
        yield sse_message("approval_decided", {"decision": record.to_json(), "ops": ops})
        if await runner.pending_approvals(record.run_id):
            return
        events = playground_events(runner, "wait", {"runId": record.run_id},
                                   history=self.history, session_id=session_id)  # fmt: skip
        async for message in events:
            yield message

    async def _redrawn(
        self,
        runner: ApprovingRunner,
        session_id: str,
        records: Sequence[ApprovalDecision],
        *,
        open: bool,
    ) -> list[Op]:
        """Ops that redraw the cards of the runs `records` decided (their status says it);
        a run no longer in the history gets its approval's line replaced instead."""
        ops: list[Op] = []
        for run_id in dict.fromkeys(r.run_id for r in records):
            view = await self.history.view_of(session_id, run_id, runner)
            if view is None:
                ops += [_decided_op(r.to_json()) for r in records if r.run_id == run_id]
                continue
            html = panel_fragment("play_run", value=view, open=open)
            ops.append({"op": "replace", "target": view.run.id, "html": html})
        return ops

    def routes(self) -> list[Route]:
        return [
            Route("/playground", self.view, methods=["GET"]),
            Route("/api/playground/{tool:str}", self.play, methods=["POST"]),
            Route(
                "/api/playground/{session}/runs/{run}/approvals/{approval}",
                self.decide,
                methods=["POST"],
            ),
        ]


def _decided_op(decision: Mapping[str, Any]) -> Op:
    html = panel_fragment("decided", value=decision)
    return {"op": "replace", "target": f"approval-{decision['approvalId']}-controls", "html": html}


def _tool_names(runner: object) -> list[str]:
    entries = runner.catalog.all() if isinstance(runner, CatalogRunner) else []
    return sorted(str(entry.get("callableName")) for entry in entries)
