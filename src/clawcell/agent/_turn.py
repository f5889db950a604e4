"""The turn loop: one user message in, events out, the transcript appended as it goes.

model call → its tool calls answered by cells, in order → the results appended → the next
model call, until the model answers without tool calls (the reply) or a cap is hit. Every
model call's assistant message is stored together with the results of all its tool calls, so
the stored transcript is always one a model API accepts, also after an error: calls the turn
could not answer get an error result saying so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from .._lazy import value_class
from ..errors import ClawcellError, ModelError, TurnLimitError
from ..reply import build_reply
from ..store import TranscriptStore
from ._attachments import Attachment
from ._caller import Caller
from ._cells import CellCall
from ._events import (
    AgentEvent,
    ApprovalRequested,
    CellFinished,
    ErrorEvent,
    ReplyEvent,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from ._model import Model, ModelRequest, ModelResponse, ModelText, ToolCall
from ._output_limit import CUT_CALL, CUT_MARKER, is_cut
from ._partial import PartialReply
from ._session import Session
from ._supersede import supersede_approvals
from ._text import valid_event, valid_json, valid_text
from ._tracing import Span, Tracing
from ._transcript import (
    assistant_entry,
    final_entry,
    stopped_entry,
    tool_result_entry,
    user_entry,
)
from ._usage import UsageCounter

__all__ = ["Turn", "TurnSettings"]

_NOT_RUN = "not run: the agent turn stopped before this call."


@value_class
class TurnSettings:
    """The loop's configuration, shared by every turn of an agent."""

    model: Model
    store: TranscriptStore
    instructions: str
    max_model_turns: int
    max_turn_seconds: float
    tracing: Tracing


class Turn:
    """One user message's turn in one session."""

    def __init__(
        self,
        settings: TurnSettings,
        session: Session,
        text: str | None,
        message_id: str | None,
        *,
        resume_run: str | None = None,
        sender: Mapping[str, Any] | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> None:
        self._settings = settings
        self._attachments = tuple(attachments)
        self._sender = None if sender is None else dict(sender)
        self._session = session
        self._text = None if text is None else valid_text(text)
        self._resume_run = resume_run
        """A run whose approvals were decided: the turn continues it with `wait` first."""
        self._waiting_approval = False
        self._message_id = message_id
        self._turn_id = f"turn_{uuid.uuid4().hex}"
        self._usage = UsageCounter()
        self._messages: list[dict[str, Any]] = []
        self._deadline = 0.0
        self._partial: list[str] = []
        """What the model call in progress has streamed so far, in pieces (kept if the turn
        stops; joined only then, so a long reply costs linear time, not a copy per delta)."""
        self._complete = False
        """Whether the turn's last message is stored (closing it then records no stop)."""
        self._stored_partial = PartialReply(settings.store, session.session_id, self._turn_id)
        """`_partial`, kept in the store (bounded) for a page reloaded on any worker."""

    async def events(self) -> AsyncGenerator[AgentEvent, None]:
        """Run the turn; see `Agent.run`."""
        settings, session_id = self._settings, self._session.session_id
        self._deadline = asyncio.get_running_loop().time() + settings.max_turn_seconds
        # The store is the truth: another worker may have run the session's last turn.
        self._messages = await settings.store.read_transcript(session_id)
        self._session.media.clear()
        expired: list[AgentEvent] = []
        if self._text is not None:
            mode = self._session.mode
            expired = [*await supersede_approvals(mode, session_id, self._messages)]
            blocks = [attachment.block() for attachment in self._attachments]
            entry = user_entry(
                self._text, turn_id=self._turn_id, sender=self._sender, attachments=blocks
            )
            await self._append([entry])
        span = settings.tracing.start(
            "clawcell.agent.turn",
            {"clawcell.session_id": session_id, "clawcell.model": settings.model.name},
        )
        try:
            yield TurnStarted(session_id=session_id, turn_id=self._turn_id, text=self._text or "")
            for event in expired:
                yield event
            async with aclosing(self._loop(span)) as events:
                async for event in events:
                    yield event
            self._end(span)
        except ClawcellError as exc:
            self._end(span, exc.code, exc.message)
            yield ErrorEvent(turn_id=self._turn_id, code=exc.code, message=exc.message, error=exc)
            raise
        except Exception as exc:  # a defect below: still an `error` event and a clawcell error
            failure = ClawcellError(
                f"the agent turn failed unexpectedly: {type(exc).__name__}: {exc}",
                code="internal_error",
            )
            self._end(span, failure.code, failure.message)
            yield ErrorEvent(
                turn_id=self._turn_id, code=failure.code, message=failure.message, error=failure
            )
            raise failure from exc
        except (GeneratorExit, asyncio.CancelledError):
            # Stopped by its consumer (a Stop button, a closed connection): the transcript
            # records it, keeping what the model had written of its answer so far.
            if not self._complete:
                name, turn_id = self._settings.model.name, self._turn_id
                await self._append(
                    [stopped_entry("".join(self._partial), model=name, turn_id=turn_id)]
                )
            raise
        finally:
            self._end(span, "cancelled")  # closed early or failed otherwise; no-op after an end
            await self._stored_partial.clear()

    def _end(self, span: Span, code: str | None = None, message: str | None = None) -> None:
        if not span.ended:
            span.set(self._usage.attributes())
            span.end(failure_code=code, message=message)

    async def _loop(self, span: Span) -> AsyncGenerator[AgentEvent, None]:
        if self._resume_run is not None:
            resume = ToolCall(
                id=f"call_wait_{uuid.uuid4().hex[:24]}",
                name="wait",
                arguments={"runId": self._resume_run},
            )
            async with aclosing(self._answer(ModelResponse(tool_calls=(resume,)), span)) as cells:
                async for event in cells:
                    yield event
            if self._waiting_approval:
                yield self._paused()
                return
        for _ in range(self._settings.max_model_turns):
            response: ModelResponse | None = None
            async with aclosing(self._call_model(span)) as model_events:
                async for event in model_events:
                    if isinstance(event, ModelResponse):
                        response = event
                    else:
                        yield event
            if response is None:  # _call_model raises instead; this keeps pyright informed
                return
            if not response.tool_calls:
                for event in await self._finish(response):
                    yield event
                return
            if is_cut(response):
                await self._refuse_cut(response)
                continue
            async with aclosing(self._answer(response, span)) as cell_events:
                async for event in cell_events:
                    yield event
            if self._waiting_approval:
                # Calling the model again would only make it `wait` in a loop: the turn ends
                # here and `Agent.decide` continues it when the decision arrives.
                yield self._paused()
                return
        raise TurnLimitError(
            f"the turn reached its cap of {self._settings.max_model_turns} model turns "
            "(`max_model_turns`) without a final answer; raise it with "
            "`Agent(max_model_turns=...)` or ask for less in one message.",
            code="max_model_turns",
        )

    async def _call_model(self, span: Span) -> AsyncGenerator[TextDelta | ModelResponse, None]:
        model = self._settings.model
        request = ModelRequest(
            instructions=self._settings.instructions,
            messages=tuple(self._messages),
            tools=tuple(self._session.mode.model_tools(model.tool_style)),
        )
        call_span = span.child("clawcell.model.call", {"clawcell.model": model.name})
        self._usage.model_turns += 1
        self._partial = []
        stream = model.stream(request)
        try:
            while (event := await self._next_model_event(stream)) is not None:
                event = valid_event(event)
                if isinstance(event, ModelText):
                    if event.text:
                        self._partial.append(event.text)
                        yield TextDelta(turn_id=self._turn_id, text=event.text)
                        await self._stored_partial.update(self._partial)
                    continue
                self._partial = []  # the response is stored with the turn from here on
                await self._stored_partial.clear()
                self._usage.add(event)
                call_span.set(_usage_attributes(event))
                call_span.end()
                yield event
                return
        except (ModelError, TurnLimitError) as exc:
            call_span.end(failure_code=exc.code, message=exc.message)
            raise
        finally:
            await _aclose(stream)
            call_span.end(failure_code="cancelled")  # no-op after an end
        call_span.end(failure_code="model_error")
        raise ModelError(f"the model {model.name!r} ended its stream without a response.")

    async def _next_model_event(self, stream: AsyncIterator[Any]) -> Any | None:
        try:
            async with asyncio.timeout_at(self._deadline):
                return await anext(stream)
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise self._wall_time_error() from None

    async def _answer(
        self, response: ModelResponse, span: Span
    ) -> AsyncGenerator[AgentEvent, None]:
        model = self._settings.model.name
        entries = [assistant_entry(response, model=model, turn_id=self._turn_id)]
        calls = list(response.tool_calls)
        try:
            while calls:
                cell = CellCall(
                    self._session.mode,
                    calls[0],
                    turn_id=self._turn_id,
                    span=span,
                    caller=Caller(owner=self._settings, session_id=self._session.session_id),
                )
                yield cell.started()
                self._usage.cells += 1
                try:
                    async with aclosing(cell.events(self._deadline)) as events:
                        async for event in events:
                            yield event
                            for request in _approval_requests(event, self._turn_id):
                                self._waiting_approval = True
                                yield request
                finally:
                    self._usage.tool_calls += cell.tool_calls
                    entries.append(self._result(calls.pop(0), cell))
        except TimeoutError:
            raise self._wall_time_error() from None
        finally:
            entries.extend(self._not_run(calls))
            await self._append(entries)

    async def _refuse_cut(self, response: ModelResponse) -> None:
        """A response the output limit cut: stored with `CUT_CALL` answering each call."""
        turn_id, model = self._turn_id, self._settings.model.name
        await self._append(
            [
                assistant_entry(response, model=model, turn_id=turn_id),
                *(
                    tool_result_entry(c, CUT_CALL, is_error=True, turn_id=turn_id)
                    for c in response.tool_calls
                ),
            ]
        )

    def _result(self, call: ToolCall, cell: CellCall) -> dict[str, Any]:
        return tool_result_entry(
            call, cell.result_text, is_error=cell.is_error, turn_id=self._turn_id
        )

    def _not_run(self, calls: list[ToolCall]) -> list[dict[str, Any]]:
        return [tool_result_entry(c, _NOT_RUN, is_error=True, turn_id=self._turn_id) for c in calls]

    async def _finish(self, response: ModelResponse) -> list[AgentEvent]:
        marker: list[AgentEvent] = []
        if is_cut(response):  # delivered, and visibly incomplete
            response = dataclasses.replace(response, text=response.text + CUT_MARKER)
            marker.append(TextDelta(turn_id=self._turn_id, text=CUT_MARKER))
        reply = build_reply(
            response.text,
            tool_media=self._session.media,
            current_message_id=self._message_id,
        )
        model = self._settings.model.name
        await self._append(
            [final_entry(response, reply.content, model=model, turn_id=self._turn_id)]
        )
        self._complete = True
        return [
            *marker,
            ReplyEvent(
                turn_id=self._turn_id,
                payloads=tuple(dict(p) for p in reply.payloads),
                content=reply.content,
                is_silent=reply.is_silent,
                stop_reason=response.stop_reason or "stop",
            ),
            TurnFinished(turn_id=self._turn_id, usage=self._usage.snapshot()),
        ]

    def _paused(self) -> TurnFinished:
        self._complete = True
        return TurnFinished(
            turn_id=self._turn_id, usage=self._usage.snapshot(), state="waiting_approval"
        )

    async def _append(self, entries: list[dict[str, Any]]) -> None:
        entries = valid_json(entries)  # what a guest or a model wrote may not be UTF-8
        if self._session.hold is not None:  # still this worker's turn? (StaleRunError if not)
            await self._session.hold.append(entries)  # fenced, one commit where it can
        else:
            await self._settings.store.append_transcript(self._session.session_id, entries)
        self._messages.extend(entries)

    def _wall_time_error(self) -> TurnLimitError:
        return TurnLimitError(
            f"the turn reached its wall-clock cap of {self._settings.max_turn_seconds!r} s "
            "(`max_turn_seconds`); raise it with `Agent(max_turn_seconds=...)` or ask for "
            "less in one message.",
            code="max_turn_seconds",
        )


def _approval_requests(event: AgentEvent, turn_id: str) -> list[ApprovalRequested]:
    """The approvals a finished cell waits for when it parked only for them."""
    if not isinstance(event, CellFinished) or event.envelope is None:
        return []
    envelope = event.envelope
    if envelope.get("status") != "waiting" or envelope.get("reason") != "approval":
        return []
    return [
        ApprovalRequested(
            turn_id=turn_id, call_id=event.call_id, run_id=str(envelope["runId"]), approval=a
        )
        for a in envelope.get("pendingApprovals", [])
    ]


def _usage_attributes(response: ModelResponse) -> Mapping[str, int | None]:
    return {
        "clawcell.model.input_tokens": response.input_tokens,
        "clawcell.model.output_tokens": response.output_tokens,
    }


async def _aclose(stream: AsyncIterator[Any]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
