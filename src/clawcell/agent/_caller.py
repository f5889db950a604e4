"""Which agent session a tool call comes from, for tools that act on behalf of a session.

A `Tool`'s `execute` receives only its input. Tools that belong to an agent (the sub-agent
tools) need to know the calling session: `CellCall` sets `current_caller` in the task that
answers one `exec`/`wait` call, and every tool call the cell makes in that leg runs in a task
copied from it. Outside an agent turn (a bare `CodeMode`), it is `None`.
"""

from __future__ import annotations

from contextvars import ContextVar

from .._lazy import value_class

__all__ = ["Caller", "current_caller"]


@value_class
class Caller:
    """The agent (by its turn settings, one object per agent) and session of a tool call."""

    owner: object
    session_id: str


current_caller: ContextVar[Caller | None] = ContextVar("clawcell_agent_caller", default=None)
"""The session whose cell made the tool call being run, or `None` outside an agent turn."""
