"""The values a `SessionStore` hands back: stored entries, parked runs and session summaries."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._jsjson import utf8_len

__all__ = ["ParkedRun", "SessionInfo", "StoredValue"]


@dataclass(frozen=True, kw_only=True)
class StoredValue:
    """One session-store value.

    Attributes:
        json: The value's compact JSON text (what the guest's `JSON.stringify` produced).
        network_content: Whether the run had observed network content when it stored the
            value; loading it marks the loading cell network-derived.
    """

    json: str
    network_content: bool = False

    @functools.cached_property
    def bytes(self) -> int:
        """UTF-8 bytes of `json`: what the 256 KiB and 1 MiB limits count."""
        return utf8_len(self.json)


@dataclass(frozen=True, kw_only=True)
class ParkedRun:
    """A parked cell as a backend holds it.

    Attributes:
        run_id: The run id (`cm_<uuid>`).
        blob: The snapshot bytes, exactly as saved.
        meta: JSON-shaped metadata the continuation code chose (deadlines, pending calls).
        saved_at: When it was last saved, in seconds since the epoch.
    """

    run_id: str
    blob: bytes
    meta: Mapping[str, Any]
    saved_at: float


@dataclass(frozen=True, kw_only=True)
class SessionInfo:
    """A session that has a transcript, as `SessionStore.list_sessions` reports it.

    Attributes:
        session_id: The session id.
        updated_at: When an entry was last appended, in seconds since the epoch.
        entries: How many transcript entries the session has.
    """

    session_id: str
    updated_at: float
    entries: int
