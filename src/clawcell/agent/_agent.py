"""`Agent`: one model, one catalog of tools, many sessions, each with its own code mode.

An agent is what a service keeps for its lifetime. `run(session_id, text)` runs one turn of
that session (see `_turn.py`) and yields its events; turns of one session run one after the
other, turns of different sessions run side by side. The transcript lives in the store, so
`history()` and the next turn work from a new process with the same durable store.

Several agents (workers) may share one store: each turn holds the session's turn lease
(`store.SessionTurns`), so a session's turns run one at a time across all of them, and
`stop(session_id)` reaches the turn wherever it runs (docs/scale-out.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Protocol, Unpack, cast

from .. import CodeMode, CodeModeOptions, MemoryStore, Tool
from .._config import CodeModeKeywords, tools_from
from ..approvals import ApprovalAnswer, Decision
from ..catalog import close_tools
from ..errors import ClosedError, ConfigurationError, TurnLimitError
from ..reply import project_chat_display_messages
from ..store import SessionInfo, SessionStore, SessionTurns
from ._attachments import Attachment, checked_attachments
from ._events import AgentEvent, ApprovalDecided, ErrorEvent, TurnFinished
from ._model import Model
from ._partial import read_partial
from ._session import Session
from ._tracing import Tracing
from ._turn import Turn, TurnSettings
from ._turn_hold import held_turn, recover_interrupted

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
        instructions: The system prompt sent with every model call.
        max_model_turns: Model calls allowed for one user message.
        max_turn_seconds: Wall-clock seconds allowed for one user message.
        tracer_provider: An OpenTelemetry `TracerProvider` for spans (the global one when
            `None`; spans are no-ops without OpenTelemetry).
        turn_lease_seconds: How long a turn's hold on its session lasts unless renewed
            (every third of it): when a worker dies mid-turn, its session is free again
            this long after its last renewal.
        options: How every session's `CodeMode` runs cells (`clawcell.CodeModeOptions`);
            each session gets its own `CodeMode` with `session_id` set to the session's id.
            Without a `store`, an in-memory store shared by the agent's sessions is used
            (and closed with the agent); `clawcell.SQLiteStore(path)` makes sessions
            survive restarts. MCP servers are connected by each session.
        **keywords: Any field of `CodeModeOptions` (`limits=`, `store=`, `policy=`, …),
            applied on top of `options`, as `CodeMode` takes them.

    Raises:
        ConfigurationError: A cap, the model, the tools or an option is invalid.
    """

    def __init__(
        self,
        *,
        model: Model,
        tools: Iterable[Tool] | Tool | None = (),
        instructions: str = "",
        max_model_turns: int = 16,
        max_turn_seconds: float = 600.0,
        tracer_provider: Any | None = None,
        turn_lease_seconds: float = 30.0,
        options: CodeModeOptions | None = None,
        **keywords: Unpack[CodeModeKeywords],
    ) -> None:
        _check(model, instructions, max_model_turns, max_turn_seconds)
        options = CodeModeOptions.merged(options, keywords)
        self._owns_store = options.store is None
        self._store = MemoryStore() if options.store is None else options.store
        self._options = options.replace(store=self._store)
        self._tools = tools_from(tools)
        # The tool-dependent checks (tool names, policy names against them, the MCP SDK), as
        # every session's `CodeMode` will make them; MCP servers connect only when a cell runs.
        self._probe = CodeMode(self._tools, options=self._options)
        self._settings = TurnSettings(
            model=model,
            store=self.store,
            instructions=instructions,
            max_model_turns=max_model_turns,
            max_turn_seconds=max_turn_seconds,
            tracing=Tracing(tracer_provider),
        )
        self._turns = SessionTurns(self._store, lease_seconds=turn_lease_seconds)
        self._sessions: dict[str, Session] = {}
        self._closed = False
        self._probes: list[CodeMode] = []
        self._companions: list[Companion] = []

    @property
    def model(self) -> Model:
        """The agent's model."""
        return self._settings.model

    @property
    def store(self) -> SessionStore:
        """The store holding transcripts and session state."""
        return self._store

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session's `CodeMode`, the tools that hold resources (the `browser`'s
        Chromium) and the agent's own in-memory store; idempotent."""
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
        await close_tools(self._tools)
        if self._owns_store:
            await self.store.close()

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
        added = [*self._tools, *tools_from(tools)]
        probe = CodeMode(added, options=self._options)  # names and policy checked as before
        self._probes.append(self._probe)
        self._tools, self._probe = added, probe

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
            session = Session(session_id, self._tools, self._options)
            self._sessions[session_id] = session
        return session

    async def run(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str | None = None,
        sender: Mapping[str, Any] | None = None,
        stop: asyncio.Event | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run one turn of `session_id` for the user message `text`; yield its events.

        Turns of one session wait for each other, also across agents sharing the store (the
        session's turn lease), at most `max_turn_seconds`. The stream ends with
        `turn_finished`, or with an `error` event after which the typed error is raised. A
        consumer that stops early should close the generator (`contextlib.aclosing`): that
        cancels a running cell and stores error results for the calls left unanswered.

        Args:
            session_id: The conversation.
            text: The user's message.
            message_id: The inbound message's id, for `[[reply_to_current]]`.
            sender: Who posted the message when it is not the session's person: a JSON
                object stored with it as `sender` (`sessions_send` marks the sending
                session and the depth of its chain; an automation marks its job).
            stop: Set when a Stop for this turn arrives from any agent on the store
                (`Agent.stop`); the consumer then closes the stream, as for its own Stop.
            attachments: Files sent with the message (`Attachment.of(name, data)`), kept in
                the transcript and given to the model as its adapter can (`docs/agents.md`);
                `text` may then be empty.

        Raises:
            TurnLimitError: `max_model_turns` or `max_turn_seconds` was reached, or
                (`code: "session_busy"`) another worker's turn of the session held it all
                of `max_turn_seconds`.
            ModelError: The model API failed.
            ClosedError: The agent is closed.
        """
        if not isinstance(cast(object, text), str):
            raise ConfigurationError(
                f"`text` must be the user's message as a string, got {text!r}."
            )
        if sender is not None and not isinstance(cast(object, sender), Mapping):
            raise ConfigurationError(f"`sender` must be a JSON object or None, got {sender!r}.")
        attachments = checked_attachments(attachments)
        session = self._session(session_id)
        async with session.lock, self._held(session, stop) as failed:
            if failed is not None:
                yield failed
                raise failed.error or TurnLimitError(failed.message, code=failed.code)
            turn = Turn(
                self._settings, session, text, message_id, sender=sender, attachments=attachments
            )
            async with aclosing(self._watched(session_id, turn)) as events:
                async for event in events:
                    yield event

    async def partial_reply(self, session_id: str) -> str | None:
        """What the session's running turn has streamed of its current model call so far
        (stored about once a second, by whichever agent runs it), or `None`."""
        self._check_open()
        return await read_partial(self.store, session_id)

    async def stop(self, session_id: str) -> bool:
        """Stop the running turn of `session_id`, whichever agent sharing the store runs it:
        the request is recorded in the store and that turn's `stop` event is set (see `run`).
        Whether a turn was running."""
        self._check_open()
        return await self._turns.stop(session_id)

    @property
    def turn_lease_seconds(self) -> float:
        """How long a turn's hold on its session lasts unless renewed."""
        return self._turns.lease_seconds

    async def recover_turn(self, session_id: str) -> bool:
        """End the turn a dead agent (worker) left running in `session_id`: once its turn
        lease lapsed, store the message that ends it (`stopReason: "error"`, with the reply
        it had streamed). Whether there was such a turn; a live turn is left alone."""
        self._check_open()
        seconds, model = self.turn_lease_seconds, self._settings.model
        return await recover_interrupted(self._turns, self.store, session_id, wait=seconds,
                                         model=model)  # fmt: skip

    def _held(
        self, session: Session, stop: asyncio.Event | None
    ) -> contextlib.AbstractAsyncContextManager[ErrorEvent | None]:
        seconds, model = self._settings.max_turn_seconds, self._settings.model
        return held_turn(self._turns, self.store, session, stop, seconds=seconds, model=model)

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

    def decide(
        self,
        session_id: str,
        run_id: str,
        approval_id: str,
        decision: Decision,
        *,
        note: str = "",
        remember: bool = False,
        by: str = "",
        stop: asyncio.Event | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """`answer` with the `ApprovalAnswer` of these fields (see `CodeMode.decide`).

        Raises:
            InputError: A field is invalid (when called), or the approval is not pending
                (when iterated).
        """
        answer = ApprovalAnswer(run_id=run_id, approval_id=approval_id, decision=decision,
                                note=note, remember=remember, by=by)  # fmt: skip
        return self.answer(session_id, answer, stop=stop)

    async def answer(
        self, session_id: str, answer: ApprovalAnswer, *, stop: asyncio.Event | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Record a person's answer to a call that waits for approval; yield
        `approval_decided`, then, once the run waits for no other decision, the events of the
        turn continuing (the cell resumed with `wait`, then the model carrying on as after
        any tool result). `stop` is as for `run`. Raises `InputError` when the approval is
        not pending (see `CodeMode.answer`)."""
        session = self._session(session_id)
        async with session.lock, self._held(session, stop) as failed:
            if failed is not None:
                yield failed
                raise failed.error or TurnLimitError(failed.message, code=failed.code)
            record = await session.mode.answer(answer)
            yield ApprovalDecided.of(session_id, record)
            if await session.mode.pending_approvals(answer.run_id):
                return  # other calls of the run still wait for a decision
            turn = Turn(self._settings, session, None, None, resume_run=answer.run_id)
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


def _check(model: object, instructions: object, turns: object, seconds: object) -> None:
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise ConfigurationError(f"`max_model_turns` must be a positive integer, got {turns!r}.")
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ConfigurationError(
            f"`max_turn_seconds` must be a positive number of seconds, got {seconds!r}."
        )
    if not isinstance(model, Model):
        raise ConfigurationError(
            f"`model` must be a `clawcell.agent.Model` (such as `OpenAIChatModel(...)` or "
            f"`ScriptedModel([...])`), got {model!r}."
        )
    if not isinstance(instructions, str):
        raise ConfigurationError(f"`instructions` must be a string, got {instructions!r}.")
