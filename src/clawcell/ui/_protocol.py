"""The seams the UI consumes: an agent to chat with, its events, and a canvas document store.

`clawcell.agent.Agent` satisfies these structurally; tests and the demo use doubles. The
document store is the store's own role, `clawcell.store.DocumentStore` (re-exported here):
every `SessionStore` backend is one.

Beyond `ChatAgent`, an agent or its Code Mode may have optional capabilities, each named
here as a protocol the UI checks with `isinstance` (a double without one still works, with
less): `SharedTurnsAgent` (Stops heard across workers, the reply streamed on another
worker), `StoreAgent` (a store whose roles back the session drawer, search, the playground
history, sub-agent rows, uploads and the MCP App activity log), `TranscriptAgent` (the raw
transcript, paged and projected by the UI), `ApprovingRunner` (answers and expires
approvals) and `CatalogRunner` (the tools a Code Mode binds).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .. import CellUpdate
from ..approvals import ApprovalAnswer, ApprovalDecision
from ..catalog import Catalog
from ..store import DocumentStore

__all__ = [
    "AgentEvent",
    "ApprovingRunner",
    "CatalogRunner",
    "CellRunner",
    "ChatAgent",
    "DocumentStore",
    "PendingPrompt",
    "SessionSummary",
    "SharedTurnsAgent",
    "StoreAgent",
    "TranscriptAgent",
    "agent_store",
]


class AgentEvent(Protocol):
    """One event of a turn (`turn_started`, `text_delta`, `cell_started`, …)."""

    @property
    def type(self) -> str:
        """The event's type name."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The event as camelCase JSON data."""
        ...


class SessionSummary(Protocol):
    """A session in the session list (`clawcell.store.SessionInfo` fits)."""

    @property
    def session_id(self) -> str:
        """The session id."""
        ...

    @property
    def updated_at(self) -> float:
        """When it last changed, in seconds since the epoch."""
        ...


class PendingPrompt(Protocol):
    """A call waiting for a person's decision (`clawcell.approvals.PendingApproval` fits)."""

    def to_json(self) -> Mapping[str, Any]:
        """Its `pendingApprovals` entry: `{id, tool, input, reason, requestedAt}`."""
        ...


class CellRunner(Protocol):
    """What the playground runs cells with, and what the chat asks about parked runs
    (`clawcell.CodeMode` fits).
    """

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        on_update: Callable[[CellUpdate], None] | None = None,
    ) -> dict[str, Any]:
        """Answer an `exec` or `wait` call with its envelope, reporting progress."""
        ...

    async def pending_approvals(self, run_id: str) -> Sequence[PendingPrompt]:
        """The calls the parked run `run_id` waits to have decided."""
        ...


@runtime_checkable
class ApprovingRunner(CellRunner, Protocol):
    """A `CellRunner` that also decides and expires approvals (`clawcell.CodeMode` fits)."""

    async def answer(self, answer: ApprovalAnswer) -> ApprovalDecision:
        """Record a person's answer to a pending approval."""
        ...

    async def expire_approvals(
        self, run_ids: Sequence[str] = (), *, reason: str = "superseded"
    ) -> list[ApprovalDecision]:
        """Expire the undecided approvals of `run_ids` (and of runs parked in-process)."""
        ...

    async def approval_audit(self) -> list[ApprovalDecision]:
        """Every decision recorded in the session."""
        ...


class ChatAgent(Protocol):
    """The agent the chat view talks to (`clawcell.agent.Agent` fits)."""

    def run(self, session_id: str, text: str) -> AsyncIterator[AgentEvent]:
        """Run one turn, yielding its events as they happen."""
        ...

    def answer(self, session_id: str, answer: ApprovalAnswer) -> AsyncIterator[AgentEvent]:
        """Record a person's answer to a pending approval, yielding `approval_decided` and
        then the continued turn's events.

        Raises `clawcell.InputError` (on first iteration) when the approval is not pending.
        """
        ...

    async def history(self, session_id: str) -> list[dict[str, Any]]:
        """The session's transcript, projected for display."""
        ...

    async def sessions(self) -> Sequence[SessionSummary]:
        """Sessions that have a transcript, most recently updated first."""
        ...

    def mode(self, session_id: str) -> CellRunner:
        """The session's Code Mode runtime."""
        ...


@runtime_checkable
class SharedTurnsAgent(ChatAgent, Protocol):
    """An agent whose turns hear a Stop sent to any worker sharing its store
    (`clawcell.agent.Agent` fits; doubles without `stop` are stopped in-process only)."""

    def run(
        self, session_id: str, text: str, *, stop: asyncio.Event | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn; `stop` is set when a Stop for it arrives through the store."""
        ...

    def answer(
        self, session_id: str, answer: ApprovalAnswer, *, stop: asyncio.Event | None = None
    ) -> AsyncIterator[AgentEvent]:
        """As `ChatAgent.answer`; `stop` as for `run`."""
        ...

    async def stop(self, session_id: str) -> bool:
        """Record a Stop for the session's running turn, wherever it runs; whether one ran."""
        ...

    async def partial_reply(self, session_id: str) -> str | None:
        """What the running turn (on any worker) has streamed of its reply so far."""
        ...


@runtime_checkable
class StoreAgent(Protocol):
    """An agent that keeps its sessions in a store (`clawcell.agent.Agent` fits): the UI uses
    each role of it that it has (`clawcell.store`'s `SessionDirectory`, `TranscriptSearch`,
    `EntryStore`, `ResultStore`, `DocumentStore`, …), so the store every worker shares is the
    truth of what the pages show."""

    @property
    def store(self) -> object:
        """The agent's session store."""
        ...


def agent_store(agent: object) -> object:
    """The agent's store (`None` for an agent without one); check the role you need of it."""
    return agent.store if isinstance(agent, StoreAgent) else None


@runtime_checkable
class TranscriptAgent(Protocol):
    """An agent that gives its raw transcript (`clawcell.agent.Agent` fits): the chat pages
    it, projects only the page for display and keeps delivery facts; without it the chat
    shows `ChatAgent.history` whole."""

    async def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """The session's stored messages, as the model saw them."""
        ...


@runtime_checkable
class CatalogRunner(Protocol):
    """A Code Mode whose tools the UI can read (`clawcell.CodeMode` fits): the playground
    lists them, the Jobs panel calls the `automations` tool through its binding."""

    @property
    def catalog(self) -> Catalog:
        """The tools the session's cells call."""
        ...
