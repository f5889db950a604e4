"""Holding a session's turn lease for one agent turn.

Several agents (workers) may share one store: a turn holds the session's lease
(`store.SessionTurns`) from its first event to its last, so turns of one session run one at a
time across all of them. This module owns what an agent does around that lease: wait for it
(at most the turn's own time budget), relay a Stop recorded in the store to the turn's `stop`
event, and, when the lease was taken over from a worker that died mid-turn, store the end of
that interrupted turn before the new one starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from ..errors import TurnLimitError
from ..store import SessionStore, SessionTurns, TurnHold
from ._events import ErrorEvent
from ._model import Model
from ._partial import read_partial
from ._session import Session
from ._transcript import interrupted_entry

__all__ = ["held_turn", "recover_interrupted"]


@contextlib.asynccontextmanager
async def held_turn(
    turns: SessionTurns,
    store: SessionStore,
    session: Session,
    stop: asyncio.Event | None,
    *,
    seconds: float,
    model: Model,
) -> AsyncGenerator[ErrorEvent | None, None]:
    """The session's turn lease for one turn (`None`), or the `session_busy` error event when
    another worker's turn held it for all of `seconds`."""
    hold = await turns.hold(session.session_id, wait=seconds)
    if hold is None:
        error = TurnLimitError(
            f"session {session.session_id!r} is busy: another worker's turn held it for "
            f"{seconds!r} s (`max_turn_seconds`); send the message again when it ends.",
            code="session_busy",
        )
        yield ErrorEvent(turn_id="", code=error.code, message=error.message, error=error)
        return
    relay = asyncio.create_task(_relay(hold, stop)) if stop is not None else None
    session.hold = hold
    try:
        if hold.took_over_from is not None:  # the last turn's worker died mid-turn
            await _store_interrupted(store, session.session_id, model)
        yield None
    finally:
        session.hold = None
        if relay is not None:
            relay.cancel()
        await hold.release()


async def recover_interrupted(
    turns: SessionTurns, store: SessionStore, session_id: str, *, wait: float, model: Model
) -> bool:
    """End the turn a dead worker left in `session_id`, without starting a new one: take the
    session's turn lease (waiting up to `wait` seconds for the dead holder's lease to lapse)
    and, when it was taken over from a holder that never released it, store the message that
    ends the interrupted turn (with the reply it had streamed). Whether such a turn was ended;
    `False` too when a live turn holds the session (it is not interrupted)."""
    hold = await turns.hold(session_id, wait=wait)
    if hold is None:
        return False
    try:
        if hold.took_over_from is None:
            return False
        await hold.check()  # still ours: nobody else is ending it meanwhile
        await _store_interrupted(store, session_id, model)
        return True
    finally:
        await hold.release()


async def _store_interrupted(store: SessionStore, session_id: str, model: Model) -> None:
    streamed = await read_partial(store, session_id, clear=True)
    entry = interrupted_entry(model=model.name, streamed=streamed)
    await store.append_transcript(session_id, [entry])


async def _relay(hold: TurnHold, stop: asyncio.Event) -> None:
    await hold.stop_requested.wait()
    stop.set()
