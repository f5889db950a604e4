"""Doubles for the UI tests: a scripted chat agent and an in-memory document store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawcell import CodeMode, InputError, Tool
from clawcell.approvals import ApprovalAnswer
from clawcell.reply import build_reply


@dataclass(frozen=True, kw_only=True)
class Event:
    """An agent event: `type` plus camelCase fields."""

    type: str
    fields: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.fields}


@dataclass(frozen=True, kw_only=True)
class Session:
    session_id: str
    updated_at: float
    entries: int = 0


Turn = Callable[[str], AsyncIterator[Event]]


def reply_turn(text: str) -> Turn:
    """A turn that streams `text` as two deltas and then replies with it."""

    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="turn_started")
        half = len(text) // 2
        yield Event(type="text_delta", fields={"text": text[:half]})
        yield Event(type="text_delta", fields={"text": text[half:]})
        yield reply_event(text)
        yield Event(type="turn_finished")

    return turn


def reply_event(text: str) -> Event:
    """A `reply` event shaped like the agent's: payloads and stored content blocks."""
    reply = build_reply(text, current_message_id="msg-1")
    return Event(
        type="reply",
        fields={
            "payloads": list(reply.payloads),
            "content": list(reply.content),
            "isSilent": reply.is_silent,
        },
    )


class Gate:
    """An `asyncio.Event` another thread can open (the browser tests' server runs in one)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None

    async def wait(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        await self.event.wait()

    def release(self) -> None:
        assert self.loop is not None and self.event is not None, "nobody waits on the gate"
        self.loop.call_soon_threadsafe(self.event.set)


def gated_cell_turn(gate: Gate) -> Turn:
    """A turn with one cell: output first, then it waits on `gate`, then it completes."""

    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="turn_started")
        yield Event(type="cell_started", fields={"callId": "c1", "code": 'text("step 1")'})
        yield Event(
            type="cell_output", fields={"callId": "c1", "item": {"type": "text", "text": "step 1"}}
        )
        await gate.wait()
        envelope = {
            "status": "completed",
            "output": [{"type": "text", "text": "step 1"}],
            "value": 42,
        }
        yield Event(type="cell_finished", fields={"callId": "c1", "envelope": envelope})
        yield reply_event("The answer is **42**.")
        yield Event(type="turn_finished")

    return turn


class FakeAgent:
    """A `ChatAgent` that plays scripted turns and keeps a plain transcript."""

    def __init__(
        self,
        turns: Sequence[Turn] = (),
        *,
        history: Mapping[str, list[dict[str, Any]]] | None = None,
        tools: Sequence[Tool] = (),
    ) -> None:
        self.turns = list(turns)
        self.transcripts: dict[str, list[dict[str, Any]]] = {
            k: list(v) for k, v in (history or {}).items()
        }
        self.tools = list(tools)
        self.modes: dict[str, CodeMode] = {}
        self.received: list[tuple[str, str]] = []
        self.pending: dict[str, str] = {}
        """Approval id → run id of the approvals `decide` accepts (each once)."""
        self.decisions: list[dict[str, Any]] = []

    async def run(self, session_id: str, text: str) -> AsyncIterator[Event]:
        self.received.append((session_id, text))
        transcript = self.transcripts.setdefault(session_id, [])
        transcript.append({"role": "user", "content": text})
        async for event in self.turns.pop(0)(text):
            if event.type == "reply":
                transcript.append({"role": "assistant", "content": event.fields["content"]})
            yield event

    async def answer(self, session_id: str, answer: ApprovalAnswer) -> AsyncIterator[Event]:
        """Accept a pending approval once, then play the next scripted turn as its sequel."""
        run_id, approval_id = answer.run_id, answer.approval_id
        if self.pending.get(approval_id) != run_id:
            raise InputError(f"approval {approval_id!r} of run {run_id!r} is not pending.")
        del self.pending[approval_id]
        fields = {"sessionId": session_id, "runId": run_id, "approvalId": approval_id,
                  "decision": answer.decision, "note": answer.note, "by": answer.by}  # fmt: skip
        self.decisions.append({**fields, "remember": answer.remember})
        yield Event(type="approval_decided", fields=fields)
        async for event in self.turns.pop(0)(answer.decision):
            yield event

    async def history(self, session_id: str) -> list[dict[str, Any]]:
        from clawcell.reply import project_chat_display_messages

        return project_chat_display_messages(self.transcripts.get(session_id, []))

    async def sessions(self) -> list[Session]:
        return [Session(session_id=k, updated_at=float(i)) for i, k in enumerate(self.transcripts)]

    def mode(self, session_id: str) -> CodeMode:
        if session_id not in self.modes:
            self.modes[session_id] = CodeMode(self.tools, session_id=session_id)
        return self.modes[session_id]

    async def aclose(self) -> None:
        for mode in self.modes.values():
            await mode.aclose()


class Documents:
    """An in-memory `DocumentStore`."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, bytes]] = {}

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        if "index.html" not in files:
            raise ValueError("index.html is required")
        self.files[ref] = dict(files)

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        return self.files.get(ref, {}).get(path)
