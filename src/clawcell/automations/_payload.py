"""Running a job's payload: a headless cell with its own limits and tool-call budget, or an
agent turn. Either way the outcome is a run status, the envelope's status and a summary."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, cast

from .._lazy import value_class
from ..catalog import HookDecision, Tool, ToolCallEvent
from ..store import JobRecord, JobRun

__all__ = ["SUMMARY_CHARS", "Outcome", "PayloadRunner", "TurnRunner", "storable"]

SUMMARY_CHARS: Final = 500
"""The most characters of a run's summary or error any store keeps."""

TOOL_BUDGET_EXCEEDED: Final = "tool_budget_exceeded"
_UNSTORABLE: Final = re.compile("[\x00\ud800-\udfff]")


class TurnRunner(Protocol):
    """What runs an agent turn: `clawcell.agent.Agent` fits (`run(session_id, text)`)."""

    def run(
        self, session_id: str, text: str, *, sender: dict[str, Any] | None = None
    ) -> AsyncIterator[Any]:
        """Yield the turn's events (the message stored with `sender`)."""
        ...


@value_class
class Outcome:
    """How a payload ended."""

    status: Literal["ok", "error"]
    envelope_status: str | None = None
    summary: str | None = None
    error: str | None = None


def _bounded(value: object) -> str:
    """A summary or error every store keeps: at most `SUMMARY_CHARS`, with NULs and lone
    surrogates (which PostgreSQL refuses) replaced by U+FFFD."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"
    return _UNSTORABLE.sub("\ufffd", text)


def storable(text: str | None) -> str | None:
    """`text` with NULs and lone surrogates replaced by U+FFFD (for any runner's outcome)."""
    return None if text is None else _UNSTORABLE.sub("\ufffd", text)


@dataclass
class _Budget:
    limit: int
    used: int = 0
    exceeded: bool = False

    def check(self, event: ToolCallEvent) -> HookDecision | None:
        self.used += 1
        if self.used <= self.limit:
            return None
        self.exceeded = True
        return HookDecision(
            block=True,
            reason=f"{TOOL_BUDGET_EXCEEDED}: this automation may make {self.limit} tool calls",
        )


class PayloadRunner:
    """Runs payloads with `tools` (cells) and `agent` (turns).

    Args:
        tools: The tools a headless cell can call (their `on_close` is left to the owner).
        session_store: Where cells keep their session (`automation:<job id>`), or `None`.
        agent: What runs `agentTurn` payloads, or `None` (such runs fail clearly).
        default_timeout_ms: A cell's time limit when its payload sets none.
        default_max_tool_calls: A cell's tool-call budget when its payload sets none.
    """

    def __init__(
        self,
        *,
        tools: Sequence[Tool] = (),
        session_store: Any = None,
        agent: TurnRunner | None = None,
        default_timeout_ms: int = 60_000,
        default_max_tool_calls: int = 100,
    ) -> None:
        self._tools = [dataclasses.replace(t, on_close=None) for t in tools]
        self._store = session_store
        self._agent = agent
        self._timeout_ms = default_timeout_ms
        self._max_calls = default_max_tool_calls

    async def run(self, job: JobRecord, run: JobRun) -> Outcome:
        """Run `job`'s payload for `run`; failures are outcomes, never exceptions."""
        payload = job.spec["payload"]
        try:
            if payload["kind"] == "cell":
                return await self._cell(job, run, payload)
            return await self._turn(job, payload)
        except Exception as exc:  # a payload failure is the run's result, not the worker's
            return Outcome(status="error", error=_bounded(f"{type(exc).__name__}: {exc}"))

    async def _cell(self, job: JobRecord, run: JobRun, payload: dict[str, Any]) -> Outcome:
        from .._codemode import CodeMode
        from .._limits import Limits

        budget = _Budget(limit=int(payload.get("maxToolCalls", self._max_calls)))
        context = {"jobId": job.id, "runId": run.run_id, "dueAtMs": _ms(run.due_at)}
        code = f"const automation = {json.dumps(context)};\n{payload['code']}"
        limits = Limits(timeout_ms=int(payload.get("timeoutMs", self._timeout_ms)))
        async with CodeMode(
            self._tools,
            limits=limits,
            store=self._store,
            session_id=f"automation:{job.id}",
            before_tool_call=[budget.check],
        ) as mode:
            envelope = dict(await mode.exec(code))
        status = str(envelope.get("status"))
        if budget.exceeded:
            message = f"{TOOL_BUDGET_EXCEEDED}: the cell made more than {budget.limit} tool calls"
            return Outcome(status="error", envelope_status=status, error=message)
        if status == "completed":
            return Outcome(
                status="ok", envelope_status=status, summary=_bounded(envelope.get("value"))
            )
        error = envelope.get("error")
        detail: object = (
            cast(dict[str, Any], error).get("message") if isinstance(error, dict) else None
        )
        return Outcome(
            status="error",
            envelope_status=status,
            error=_bounded(detail or f"the cell ended with status {status!r}"),
        )

    async def _turn(self, job: JobRecord, payload: dict[str, Any]) -> Outcome:
        if self._agent is None:
            return Outcome(status="error", error="no agent is configured for agentTurn payloads")
        session = str(payload.get("sessionId") or f"automation:{job.id}")
        owner = job.spec.get("owner")
        # An automation's message is one hop of a send chain (`SendLimits.max_depth`).
        sender = {"kind": "automation", "jobId": job.id, "owner": owner, "depth": 1}
        texts: list[str] = []
        async for event in self._agent.run(session, str(payload["prompt"]), sender=sender):
            text = getattr(event, "text", None)
            if isinstance(text, str) and text:
                texts.append(text)
        return Outcome(status="ok", envelope_status="completed", summary=_bounded("".join(texts)))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)
