"""Bounds on `sessions_send`: sends per turn, per session and time window, and chain depth.

Two sessions answering each other with `sessions_send` would run turns without end, and one
cell could start hundreds of turns at once. Three bounds stop both (`SendLimits`):

* **depth**: a message a person (or any outside caller) posts starts a chain at depth 0; a
  turn started by `sessions_send` from a turn at depth `d` is at depth `d + 1`, and a turn
  at `max_depth` may not send. The depth travels in the forwarded message's `sender` mark,
  stored in the target's transcript, so it holds across workers and restarts.
* **per turn** and **per session**: every send is recorded in the store, as a saved result
  of the sender's ledger scope (`<session>\\x1fsends`) that expires after `window_seconds`;
  the counts are read from there, so several workers over one store share them.

Threat model: a model (or a hostile document it read) drives the tools; the operator sets the
bounds. Sends racing from two workers for one session may overshoot a bound by the number of
workers; within one process a lock per sender makes the check and the record one step.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
import weakref
from collections.abc import Mapping
from typing import Any, Final, cast

from ..._lazy import value_class
from ...errors import ConfigurationError, ToolError
from ...store import SessionStore

__all__ = ["SendLedger", "SendLimits", "Turn", "current_turn", "sender_mark"]

_SCOPE_SUFFIX: Final = "\x1fsends"


@value_class
class SendLimits:
    """How far `sessions_send` may go (see `docs/tools.md`, "Bounds on sends").

    Attributes:
        per_turn: Sends one turn may make (default 4).
        per_session: Sends one session may make within `window_seconds` (default 30).
        window_seconds: The window of `per_session`, in seconds (default 3600).
        max_depth: How many turns one outside message may start through chained sends
            (default 3): A's turn sends to B (depth 1), B's turn to C (2), C's to D (3);
            D's turn may not send.
    """

    per_turn: int = 4
    per_session: int = 30
    window_seconds: float = 3600.0
    max_depth: int = 3

    def __post_init__(self) -> None:
        for name in ("per_turn", "per_session", "max_depth"):
            value: object = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigurationError(
                    f"`SendLimits.{name}` must be a non-negative integer (0 disables "
                    f"sending), got {value!r}."
                )
        window = cast(object, self.window_seconds)
        if (
            isinstance(window, bool)
            or not isinstance(window, int | float)
            or not math.isfinite(window)
            or window <= 0
        ):
            raise ConfigurationError(
                f"`SendLimits.window_seconds` must be a positive number of seconds, got {window!r}."
            )


@value_class
class Turn:
    """The calling session's current turn, as its transcript records it."""

    turn_id: str
    depth: int


def current_turn(transcript: list[dict[str, Any]]) -> Turn:
    """The turn of the last user message (a turn stores its message first) and its depth."""
    for entry in reversed(transcript):
        if entry.get("role") == "user":
            turn_id = entry.get("turnId")
            return Turn(turn_id=turn_id if isinstance(turn_id, str) else "", depth=_depth(entry))
    return Turn(turn_id="", depth=0)


def _depth(entry: Mapping[str, Any]) -> int:
    sender = entry.get("sender")
    if not isinstance(sender, Mapping):
        return 0
    depth = cast(Mapping[str, Any], sender).get("depth")
    return depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else 0


def sender_mark(caller: str, turn: Turn) -> dict[str, Any]:
    """The `sender` stored with a forwarded message: who sent it, from which turn, at what
    depth."""
    return {
        "kind": "session",
        "sessionId": caller,
        "turnId": turn.turn_id,
        "depth": turn.depth + 1,
    }


class SendLedger:
    """Checks a send against `SendLimits` and records it in the store, in one step per sender."""

    def __init__(self, limits: SendLimits) -> None:
        self.limits = limits
        # One lock per sender while its sends are checked: dropped once no send holds it.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def admit(self, store: SessionStore, caller: str, turn: Turn, target: str) -> None:
        """Record one send of `caller`'s `turn` to `target`, or refuse it.

        Raises:
            ToolError: `send_chain_too_deep` or `send_limit`, naming the bound and its setting.
        """
        limits = self.limits
        if turn.depth >= limits.max_depth:
            raise ToolError(
                f"This turn was started by a chain of {turn.depth} `sessions_send` message(s) "
                f"and may not send further (`SendLimits.max_depth` is {limits.max_depth}); "
                "answer in this session instead.",
                code="send_chain_too_deep",
            )
        lock = self._locks.get(caller)
        if lock is None:
            lock = self._locks[caller] = asyncio.Lock()
        async with lock:
            scope = caller + _SCOPE_SUFFIX
            sent = await store.list_results(scope)
            in_turn = sum(1 for name in sent if name.split("~")[1] == turn.turn_id)
            if in_turn >= limits.per_turn:
                raise ToolError(
                    f"This turn already sent {in_turn} message(s) with `sessions_send`, the "
                    f"most one turn may (`SendLimits.per_turn` is {limits.per_turn}).",
                    code="send_limit",
                )
            if len(sent) >= limits.per_session:
                raise ToolError(
                    f"This session sent {len(sent)} message(s) with `sessions_send` in the "
                    f"last {limits.window_seconds:g} s, the most it may "
                    f"(`SendLimits.per_session` is {limits.per_session}); try again later.",
                    code="send_limit",
                )
            now = time.time()
            name = f"{round(now * 1000):015d}~{turn.turn_id}~{uuid.uuid4().hex[:8]}"
            await store.put_result(
                scope, name, json.dumps({"to": target}), expires_at=now + limits.window_seconds
            )
