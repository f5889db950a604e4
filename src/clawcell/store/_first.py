"""`FirstWriter`: the store capability that makes "first decision wins" atomic.

A separate protocol (not a `SessionStore` method) so that stores written before it keep
working: `DecisionLedger` uses `put_new` when a store has it, and otherwise serialises
decisions within its own process only (two processes deciding one approval at once could
then both be accepted). Every backend of clawcell has it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._records import StoredValue

__all__ = ["FirstWriter"]


@runtime_checkable
class FirstWriter(Protocol):
    """A store that can set an entry only when its key has none, atomically."""

    async def put_new(self, session_id: str, key: str, value: StoredValue) -> bool:
        """Set one entry unless the key has one; whether this call wrote it.

        Of several concurrent callers (tasks, processes, hosts) exactly one gets `True`.
        """
        ...
