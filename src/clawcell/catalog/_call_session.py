"""The session a tool call belongs to, for tools that keep per-session state (`browser`).

The bridge sets `call_session` in the task that runs one guest tool call, next to the
approval gate; a call made outside any Code Mode run (a host calling `execute` directly)
sees `None`.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["call_session"]

call_session: ContextVar[str | None] = ContextVar("clawcell_call_session", default=None)
"""The session id of the tool call being run, or `None` outside a run."""
