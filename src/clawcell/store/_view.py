"""`SessionView`: one cell's access to the session store (spec `code-mode.md` §10.2).

The guest's `store(key, value)` and `load(key)` land here through the bridge. A view belongs
to one cell, from its `exec` through every `wait`:

* writes are **buffered** in the view and checked at once (key, 256 KiB per value, 1 MiB for
  the session with this cell's writes overlaid), so a refused write leaves everything as it
  was;
* `load` reads **this cell's writes first**, then the session's committed entries, read once
  when the view is first used;
* `commit()` is called only when the cell completes: the whole write set is applied as one
  atomic change, and the backend re-checks the 1 MiB total in commit order. Failed,
  timed-out, aborted or expired cells call `discard()` instead.
* When a commit cannot be confirmed the cell still completes; `commit()` returns
  `PERSISTENCE_WARNING` for the envelope and the committed entries stay as they were.

`writes` and the `writes=` argument let a parked cell's buffer travel with its snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Final

from .._jsjson import utf16_len
from ..errors import ClosedError
from ._errors import (
    KEY_MESSAGE,
    TOTAL_MESSAGE,
    VALUE_MESSAGE,
    StoreRangeError,
    StoreTypeError,
)
from ._protocol import EntryStore, StoredValue

__all__ = [
    "CLOSED_MESSAGE",
    "HEADLESS_MESSAGE",
    "INACTIVE_MESSAGE",
    "MAX_KEY_CHARS",
    "MAX_TOTAL_BYTES",
    "MAX_VALUE_BYTES",
    "PERSISTENCE_WARNING",
    "SCOPE_MESSAGE",
    "SessionView",
]

MAX_KEY_CHARS: Final = 256
MAX_VALUE_BYTES: Final = 256 * 1024
MAX_TOTAL_BYTES: Final = 1024 * 1024

PERSISTENCE_WARNING: Final = (
    "Code Mode session store persistence could not be confirmed. The cell completed; verify "
    "the session transcript before relying on these values in a later cell or reply."
)
HEADLESS_MESSAGE: Final = (
    "Code Mode store/load is unavailable in headless execution; use an interactive "
    "session-bound cell."
)
INACTIVE_MESSAGE: Final = (
    "Code Mode store/load requires an active session-bound run; start a new interactive "
    "reply with a session."
)
SCOPE_MESSAGE: Final = (
    "Code Mode store/load belongs to a different run or session; start a new interactive reply."
)
CLOSED_MESSAGE: Final = "Code Mode store/load is unavailable after the cell closed."

_log = logging.getLogger("clawcell.store")


def _check_key(key: object) -> str:
    # Characters are UTF-16 code units, as JavaScript's `key.length` counts them.
    if not isinstance(key, str) or not 1 <= utf16_len(key) <= MAX_KEY_CHARS:
        raise StoreTypeError(KEY_MESSAGE)
    return key


class SessionView:
    """One cell's buffered, read-your-writes view of a session's store.

    Args:
        store: The backend holding committed entries.
        session_id: The session the cell is bound to.
        writes: A buffer to resume with (from `writes` of a parked cell); `None` values are
            deletions.
    """

    def __init__(
        self,
        store: EntryStore,
        session_id: str,
        *,
        writes: Mapping[str, StoredValue | None] | None = None,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._writes: dict[str, StoredValue | None] = dict(writes or {})
        self._committed: dict[str, StoredValue] | None = None
        self._closed = False

    @property
    def session_id(self) -> str:
        """The session this view reads and commits to."""
        return self._session_id

    @property
    def writes(self) -> dict[str, StoredValue | None]:
        """A copy of the buffered writes (`None` = delete), to persist with a parked cell."""
        return dict(self._writes)

    async def _projection(self) -> dict[str, StoredValue]:
        self._ensure_open()
        if self._committed is None:
            committed = await self._store.items(self._session_id)
            if self._committed is None:
                self._committed = committed
        self._ensure_open()
        return self._committed

    async def load_entry(self, key: object) -> StoredValue | None:
        """The value `load(key)` sees, with its provenance flag; `None` when missing.

        Raises:
            StoreTypeError: for a key that is not a non-empty string of ≤ 256 characters.
            ClosedError: after `commit()` or `discard()`.
        """
        name = _check_key(key)
        committed = await self._projection()
        return self._writes[name] if name in self._writes else committed.get(name)

    async def load(self, key: object) -> str | None:
        """`load(key)`: the value's JSON text, or `None` for a missing key (`undefined`)."""
        entry = await self.load_entry(key)
        return None if entry is None else entry.json

    async def store(
        self, key: object, value_json: str | None, *, network_content: bool = False
    ) -> None:
        """`store(key, value)`: buffer a set, or a delete when `value_json` is `None`.

        Raises:
            StoreTypeError: for a bad key (`store_type`).
            StoreRangeError: for a value over 256 KiB, or when the session would exceed
                1 MiB with this cell's writes (`store_range`); nothing changes then.
            ClosedError: after `commit()` or `discard()`.
        """
        name = _check_key(key)
        value = (
            None
            if value_json is None
            else StoredValue(json=value_json, network_content=network_content)
        )
        if value is not None and value.bytes > MAX_VALUE_BYTES:
            raise StoreRangeError(VALUE_MESSAGE)
        committed = await self._projection()
        proposed = {**self._writes, name: value}
        if _total(committed, proposed) > MAX_TOTAL_BYTES:
            raise StoreRangeError(TOTAL_MESSAGE)
        self._writes[name] = value

    @property
    def has_writes(self) -> bool:
        """Whether the cell buffered writes that `commit` would apply (else it only closes
        the view, as `discard` does)."""
        return bool(self._writes)

    async def commit(self) -> str | None:
        """Apply this cell's writes; call only when the cell completed.

        Returns:
            `None` when the writes were committed (or there were none), else
            `PERSISTENCE_WARNING` for the completed envelope. The view is closed either way.
        """
        if self._closed:
            return None
        self._closed = True
        writes, self._writes = self._writes, {}
        if not writes:
            return None
        try:
            await self._store.apply(self._session_id, writes, max_total_bytes=MAX_TOTAL_BYTES)
        except asyncio.CancelledError:
            raise
        except Exception:  # any failure, the total re-check included, only costs the writes
            _log.warning("session store commit failed for %r", self._session_id, exc_info=True)
            return PERSISTENCE_WARNING
        return None

    def discard(self) -> None:
        """Drop the buffered writes of a cell that did not complete. Idempotent."""
        self._closed = True
        self._writes.clear()

    def _ensure_open(self) -> None:
        if self._closed:
            raise ClosedError(CLOSED_MESSAGE)


def _total(committed: Mapping[str, StoredValue], writes: Mapping[str, StoredValue | None]) -> int:
    total = sum(value.bytes for key, value in committed.items() if key not in writes)
    return total + sum(value.bytes for value in writes.values() if value is not None)
