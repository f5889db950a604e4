"""`Agent`: one model, one catalog of tools, many sessions, each with its own code mode.

An agent is what a service keeps for its lifetime. `run(session_id, text)` runs one turn of
that session (see `_turn.py`) and yields its events; turns of one session run one after the
other, turns of different sessions run side by side. The transcript lives in the store, so
`history()` and the next turn work from a new process with the same durable store.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from .. import CodeMode, Limits, MemoryStore, Tool
from ..approvals import ToolPolicy
from ..catalog import AfterToolCall, BeforeToolCall
from ..errors import ClosedError, ConfigurationError
from ..reply import project_chat_display_messages
from ..store import SessionInfo, SessionStore
from ._events import AgentEvent, ApprovalDecided, TurnFinished
from ._model import Model
from ._session import ModeOptions, Session
from ._tracing import Tracing
from ._turn import Turn, TurnSettings

if TYPE_CHECKING:
    from ..mcp import ServerConfig

__all__ = ["Agent", "Companion"]


class Companion(Protocol):
    """Something that lives with an agent and must hear when its turns stop and when it closes
    (the sub-agent runtime: children are cancelled with their parent)."""

    async def turn_stopped(self, session_id: str) -> None:
        """A turn of `session_id` ended without `turn_finished` (closed early, a cap, an
        error); must return promptly."""
        ...

    async def cancel_children(self, session_id: str) -> int:
        """Cancel the work `session_id` started; the number of runs cancelled."""
        ...

    async def aclose(self) -> None:
        """The agent is closing (before its sessions and store)."""
        ...


class Agent:
    """Runs agent turns: model calls, cells for its `exec`/`wait` calls, and the reply.

    Args:
        model: The model (`OpenAIChatModel`, `OpenAIResponsesModel`, `AnthropicModel`,
            `ScriptedModel` or any `Model`).
        tools: The tools cells may call.
        store: Where transcripts, store entries and parked cells live; a
            `clawcell.SQLiteStore(path)` makes sessions survive restarts. Without one, an
            in-memory store shared by the agent's sessions is used (and closed with it).
        instructions: The system prompt sent with every model call.
        limits: Cell budgets and limits, as `CodeMode` takes them.
        model_context_tokens: The model's context window (fits envelopes to it).
        mcp_servers: MCP servers by name; each session connects its own.
        before_tool_call: Hooks run before each catalog tool call.
        after_tool_call: Hooks run after each catalog tool call.
        guest_thread: Run guest code on clawcell's worker thread (see `CodeMode`).
        max_model_turns: Model calls allowed for one user message.
        max_turn_seconds: Wall-clock seconds allowed for one user message.
        tracer_provider: An OpenTelemetry `TracerProvider` for spans (the global one when
            `None`; spans are no-ops without OpenTelemetry).

    Raises:
        ConfigurationError: A cap or the model is invalid.
    """

    def __init__(
        self,
        *,
        model: Model,
        tools: Iterable[Tool] | Tool | None = (),
        store: SessionStore | None = None,
        instructions: str = "",
        limits: Limits | Mapping[str, Any] | None = None,
        model_context_tokens: int | None = None,
        mcp_servers: Mapping[str, ServerConfig] | None = None,
        before_tool_call: Iterable[BeforeToolCall] = (),
        after_tool_call: Iterable[AfterToolCall] = (),
        guest_thread: bool = True,
        max_model_turns: int = 16,
        max_turn_seconds: float = 600.0,
        tracer_provider: Any | None = None,
        policy: ToolPolicy | Mapping[str, Any] | None = None,
        approval_ttl_seconds: float | None = None,
    ) -> None:
        _check_caps(max_model_turns, max_turn_seconds)
        if not isinstance(cast(object, model), Model):
            raise ConfigurationError(
                f"`model` must be a `clawcell.agent.Model` (such as `OpenAIChatModel(...)` or "
                f"`ScriptedModel([...])`), got {model!r}."
            )
        if not isinstance(cast(object, instructions), str):
            raise ConfigurationError(f"`instructions` must be a string, got {instructions!r}.")
        options = ModeOptions(
            tools=_tools(tools),
            limits=Limits(),
            store=store if store is not None else MemoryStore(),
            model_context_tokens=model_context_tokens,
            mcp_servers=mcp_servers,
            before_tool_call=tuple(before_tool_call),
            after_tool_call=tuple(after_tool_call),
            guest_thread=guest_thread,
            policy=policy,
            approval_ttl_seconds=approval_ttl_seconds,
        )
        # A probe CodeMode checks every option exactly as the sessions' will (MCP servers
        # connect only when a cell runs, so it opens nothing).
        probe = CodeMode(
            options.tools,
            limits=limits,
            store=store,
            model_context_tokens=model_context_tokens,
            mcp_servers=mcp_servers,
            before_tool_call=options.before_tool_call,
            after_tool_call=options.after_tool_call,
            guest_thread=guest_thread,
            policy=policy,
            approval_ttl_seconds=approval_ttl_seconds,
        )
        self._owns_store = store is None
        self._options = dataclasses.replace(options, limits=probe.limits)
        self._settings = TurnSettings(
            model=model,
            store=self._options.store,
            instructions=instructions,
            max_model_turns=max_model_turns,
            max_turn_seconds=max_turn_seconds,
            tracing=Tracing(tracer_provider),
        )
        self._sessions: dict[str, Session] = {}
        self._closed = False
        self._probe = probe
        self._probes: list[CodeMode] = []
        self._companions: list[Companion] = []

    @property
    def model(self) -> Model:
        """The agent's model."""
        return self._settings.model

    @property
    def store(self) -> SessionStore:
        """The store holding transcripts and session state."""
        return self._options.store

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session's `CodeMode` (and the agent's own in-memory store); idempotent."""
        if self._closed:
            return
        self._closed = True
        companions, self._companions = self._companions, []
        for companion in companions:
            await companion.aclose()
        sessions, self._sessions = list(self._sessions.values()), {}
        for probe in [*self._probes, self._probe]:
            await probe.aclose()
        for session in sessions:
            await session.mode.aclose()
        if self._owns_store:
            await self._options.store.close()

    def add_tools(self, tools: Iterable[Tool] | Tool) -> None:
        """Add tools for the agent's sessions; for tools made from the agent itself
        (`subagent_tools(agent, profiles)`), which cannot be passed to the constructor.

        Raises:
            ConfigurationError: A session is already open (its catalog is fixed), or the tools
                are invalid (a duplicate name, …).
            ClosedError: The agent is closed.
        """
        self._check_open()
        if self._sessions:
            raise ConfigurationError(
                f"add tools before the agent's first turn: sessions {sorted(self._sessions)!r} "
                "already have their catalogs."
            )
        options = dataclasses.replace(self._options, tools=[*self._options.tools, *_tools(tools)])
        probe = CodeMode(
            options.tools,
            limits=options.limits,
            store=options.store,
            model_context_tokens=options.model_context_tokens,
            mcp_servers=options.mcp_servers,
            before_tool_call=options.before_tool_call,
            after_tool_call=options.after_tool_call,
            guest_thread=options.guest_thread,
            policy=options.policy,
            approval_ttl_seconds=options.approval_ttl_seconds,
        )
        self._probes.append(self._probe)
        self._options, self._probe = options, probe

    def attach(self, companion: Companion) -> None:
        """Let `companion` hear when turns stop and when the agent closes (see `Companion`)."""
        self._check_open()
        self._companions.append(companion)

    async def cancel_children(self, session_id: str) -> int:
        """Cancel the sub-agent runs `session_id` started (and theirs, recursively); what a
        UI's Stop calls next to closing the turn. Returns the number of runs cancelled."""
        cancelled = 0
        for companion in list(self._companions):
            cancelled += await companion.cancel_children(session_id)
        return cancelled

    async def _turn_stopped(self, session_id: str) -> None:
        for companion in list(self._companions):
            await companion.turn_stopped(session_id)

    def mode(self, session_id: str) -> CodeMode:
        """The `CodeMode` of `session_id`, created on first use.

        Raises:
            ClosedError: The agent is closed.
            ConfigurationError: `session_id` is not a non-empty string.
        """
        return self._session(session_id).mode

    def _session(self, session_id: str) -> Session:
        if self._closed:
            raise ClosedError("this Agent is closed; create a new one")
        session = self._sessions.get(session_id)
        if session is None:
            session = Session(session_id, self._options)
            self._sessions[session_id] = session
        return session

    async def run(
        self, session_id: str, text: str, *, message_id: str | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run one turn of `session_id` for the user message `text`; yield its events.

        Turns of one session wait for each other. The stream ends with `turn_finished`, or
        with an `error` event after which the typed error is raised. A consumer that stops
        early should close the generator (`contextlib.aclosing`): that cancels a running
        cell and stores error results for the calls left unanswered.

        Args:
            session_id: The conversation.
            text: The user's message.
            message_id: The inbound message's id, for `[[reply_to_current]]`.

        Raises:
            TurnLimitError: `max_model_turns` or `max_turn_seconds` was reached.
            ModelError: The model API failed.
            ClosedError: The agent is closed.
        """
        if not isinstance(cast(object, text), str):
            raise ConfigurationError(
                f"`text` must be the user's message as a string, got {text!r}."
            )
        session = self._session(session_id)
        async with session.lock:
            turn = Turn(self._settings, session, text, message_id)
            async with aclosing(self._watched(session_id, turn)) as events:
                async for event in events:
                    yield event

    async def _watched(self, session_id: str, turn: Turn) -> AsyncGenerator[AgentEvent, None]:
        """The turn's events; a turn that ends without `turn_finished` (closed early by its
        consumer, cancelled, a cap, a model error) is a stop: companions cancel its children."""
        finished = False
        try:
            async with aclosing(turn.events()) as events:
                async for event in events:
                    finished = isinstance(event, TurnFinished)
                    yield event
        finally:
            if not finished:
                await self._turn_stopped(session_id)

    async def decide(
        self,
        session_id: str,
        run_id: str,
        approval_id: str,
        decision: Literal["approve", "deny"],
        *,
        note: str = "",
        remember: bool = False,
        by: str = "",
    ) -> AsyncGenerator[AgentEvent, None]:
        """Decide a call that waits for approval; yield `approval_decided`, then, once the
        run waits for no other decision, the events of the turn continuing (the cell is
        resumed with `wait`, then the model carries on as after any tool result).

        Raises:
            InputError: The approval is not pending (see `CodeMode.decide`).
        """
        session = self._session(session_id)
        async with session.lock:
            mode = session.mode
            record = await mode.decide(
                run_id, approval_id, decision, note=note, remember=remember, by=by
            )
            yield ApprovalDecided(
                session_id=session_id,
                run_id=run_id,
                approval_id=approval_id,
                decision=record.decision,
                note=record.note,
                by=record.by,
            )
            if await mode.pending_approvals(run_id):
                return  # other calls of the run still wait for a decision
            turn = Turn(self._settings, session, None, None, resume_run=run_id)
            async with aclosing(self._watched(session_id, turn)) as events:
                async for event in events:
                    yield event

    async def history(
        self, session_id: str, *, max_chars: int | None = None
    ) -> list[dict[str, Any]]:
        """The session's transcript as a chat view shows it (`chat.history` projection)."""
        self._check_open()
        messages = await self.store.read_transcript(session_id)
        return project_chat_display_messages(messages, max_chars=max_chars)

    async def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """The session's stored transcript, unprojected, in append order."""
        self._check_open()
        return await self.store.read_transcript(session_id)

    async def sessions(self) -> list[SessionInfo]:
        """Sessions with a transcript, most recently updated first."""
        self._check_open()
        return await self.store.list_sessions()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this Agent is closed; create a new one")


def _check_caps(max_model_turns: object, max_turn_seconds: object) -> None:
    if (
        isinstance(max_model_turns, bool)
        or not isinstance(max_model_turns, int)
        or max_model_turns < 1
    ):
        raise ConfigurationError(
            f"`max_model_turns` must be a positive integer, got {max_model_turns!r}."
        )
    if (
        isinstance(max_turn_seconds, bool)
        or not isinstance(max_turn_seconds, int | float)
        or not math.isfinite(max_turn_seconds)
        or max_turn_seconds <= 0
    ):
        raise ConfigurationError(
            f"`max_turn_seconds` must be a positive number of seconds, got {max_turn_seconds!r}."
        )


def _tools(tools: object) -> list[Tool]:
    if tools is None:
        return []
    if isinstance(tools, Tool):
        return [tools]
    if not isinstance(tools, Iterable):
        raise ConfigurationError(f"`tools` must be an iterable of `clawcell.Tool`, got {tools!r}.")
    return list(cast(Iterable[Tool], tools))
