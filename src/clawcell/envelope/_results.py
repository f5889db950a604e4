"""The saved results of one Code Mode run (spec `code-mode.md` §10.1): `results.save/load/delete`.

`results.save(value)` keeps a value's compact JSON text on the host and hands the guest a
reference descriptor (`_descriptor.py`); `results.load(id)` returns the text again,
`results.delete(id)` frees its space. At most 64 entries share a byte allowance
(`Limits.inbox_bytes`), never evicting. Oversized final values are saved through the same
`admit` by automatic retention (`_retention.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from .._jsjson import utf8_len
from .._lazy import value_class
from ..errors import ConfigurationError, InputError

if TYPE_CHECKING:  # describing a value (its shape and preview) loads on the first save
    from ._descriptor import ResultReference

__all__ = [
    "CAPACITY_MESSAGE",
    "CATALOG_CLOSED_MESSAGE",
    "INVALID_ID_MESSAGE",
    "MAX_RESULTS",
    "SCOPE_MESSAGE",
    "UNAVAILABLE_MESSAGE",
    "Refusal",
    "ResultsStore",
    "SavedResult",
]

MAX_RESULTS: Final = 64

CAPACITY_MESSAGE: Final = (
    "Code Mode results capacity exceeded; delete saved references or save a smaller value. "
    "Existing references are unchanged."
)
INVALID_ID_MESSAGE: Final = "results reference id must be a non-empty string."
UNAVAILABLE_MESSAGE: Final = (
    "Code Mode result is unavailable or expired; fetch fresh data if needed."
)
CATALOG_CLOSED_MESSAGE: Final = (
    "Code Mode results are unavailable after the run catalog changed or closed."
)
SCOPE_MESSAGE: Final = "Code Mode results belong to a different run or session."

Refusal = Literal["data_allowance", "capacity"]
"""Why `ResultsStore.admit` did not save a value."""


@value_class
class SavedResult:
    """One saved value.

    Attributes:
        json: The compact JSON text, exactly as saved.
        bytes: Its UTF-8 byte length.
        network_content: Whether the run had seen network content when it was saved;
            loading it makes the loading cell network-derived.
    """

    json: str
    bytes: int
    network_content: bool


class ResultsStore:
    """The saved results of one agent run: `results.save/load/delete` on the host.

    At most `max_entries` values share `allowance_bytes` UTF-8 bytes of JSON text. A save
    that does not fit is refused; nothing is ever evicted. Errors are `InputError`s whose
    messages are the protocol's strings, so the bridge can hand them to the guest unchanged.

    Args:
        allowance_bytes: Shared byte allowance, `Limits.inbox_bytes`.
        max_entries: Entry limit (64 in the protocol).
        scope: An opaque identity of the run (agent, run, session, catalog scope); when
            given, `check_scope` refuses callers from another run.
    """

    def __init__(
        self, allowance_bytes: int, max_entries: int = MAX_RESULTS, *, scope: str | None = None
    ) -> None:
        for name, number in (("allowance_bytes", allowance_bytes), ("max_entries", max_entries)):
            if isinstance(number, bool) or number < 1:
                raise ConfigurationError(f"`{name}` must be a positive integer, got {number!r}.")
        self._allowance = allowance_bytes
        self._max_entries = max_entries
        self._scope = scope
        self._entries: dict[str, SavedResult] = {}
        self._used = 0
        self._closed = False

    @property
    def allowance_bytes(self) -> int:
        """The byte allowance all entries share."""
        return self._allowance

    @property
    def used_bytes(self) -> int:
        """Bytes held by the current entries."""
        return self._used

    def __len__(self) -> int:
        return len(self._entries)

    def check_scope(self, scope: str) -> None:
        """Refuse a caller from another run or session.

        Raises:
            InputError: `Code Mode results belong to a different run or session.`
        """
        if self._scope is not None and scope != self._scope:
            raise InputError(SCOPE_MESSAGE)

    def save(
        self, value_json: str | None, *, value: object = None, network_content: bool = False
    ) -> ResultReference:
        """Save a value's compact JSON text (`None`, for `undefined`, saves `null`).

        Pass the parsed `value` too when the caller has it (the bridge does): describing a
        5 MB value then costs a fraction of a millisecond instead of a second parse.

        Raises:
            InputError: the capacity message when the entry limit or the byte allowance
                would be exceeded (existing entries are unchanged), or the catalog message
                after `close()`.
        """
        text = "null" if value_json is None else value_json
        admitted = self.admit(text, network_content=network_content, value=value)
        if isinstance(admitted, str):
            raise InputError(CAPACITY_MESSAGE)
        return admitted

    def admit(
        self, json_text: str, *, network_content: bool = False, value: object = None
    ) -> ResultReference | Refusal:
        """Save `json_text` when it fits, or say why not (`"data_allowance"`, `"capacity"`).

        Used by `save` and by automatic retention; nothing is evicted to make room.

        Raises:
            InputError: the catalog message after `close()`.
        """
        self._ensure_open()
        size = utf8_len(json_text)
        if size > self._allowance:
            return "data_allowance"
        if len(self._entries) >= self._max_entries or size > self._allowance - self._used:
            return "capacity"
        from ._descriptor import describe

        reference = describe(json_text, value=value)
        self._entries[reference["id"]] = SavedResult(
            json=json_text, bytes=size, network_content=network_content
        )
        self._used += size
        return reference

    @property
    def closed(self) -> bool:
        """Whether `close()` was called (the run catalog changed or closed)."""
        return self._closed

    def get(self, reference_id: object) -> SavedResult:
        """The saved entry behind an id, with its provenance flag.

        Raises:
            InputError: `results reference id must be a non-empty string.` for a non-string
                or empty id; the unavailable message for an unknown or deleted id.
        """
        if not isinstance(reference_id, str) or not reference_id:
            raise InputError(INVALID_ID_MESSAGE)
        self._ensure_open()
        entry = self._entries.get(reference_id)
        if entry is None:
            raise InputError(UNAVAILABLE_MESSAGE)
        return entry

    def load(self, reference_id: object) -> str:
        """The saved JSON text; the guest parses it into a detached copy. See `get`."""
        return self.get(reference_id).json

    def delete(self, reference_id: object) -> bool:
        """Delete an entry and free its bytes at once; returns `True`. See `get`."""
        self.get(reference_id)
        self.discard(str(reference_id))  # `get` accepted it, so it is a `str`
        return True

    def discard(self, reference_id: str) -> None:
        """Drop an entry if it exists (an automatic save whose reference was not shown)."""
        entry = self._entries.pop(reference_id, None)
        if entry is not None:
            self._used -= entry.bytes

    def entries(self) -> dict[str, SavedResult]:
        """The saved entries by id (a copy), for a store that shares them between workers."""
        return dict(self._entries)

    def restore(self, reference_id: str, entry: SavedResult) -> bool:
        """Add an entry saved elsewhere (another worker) under its id, when it fits.

        Returns whether it was added: `False` when the id is taken, this store is closed, or
        the entry limit or byte allowance would be exceeded (nothing is evicted).
        """
        fits = (
            len(self._entries) < self._max_entries and entry.bytes <= self._allowance - self._used
        )
        if self._closed or reference_id in self._entries or not fits:
            return False
        self._entries[reference_id] = entry
        self._used += entry.bytes
        return True

    def close(self) -> None:
        """Drop every entry (run end, catalog replacement); later calls fail. Idempotent."""
        self._entries.clear()
        self._used = 0
        self._closed = True

    def _ensure_open(self) -> None:
        if self._closed:
            raise InputError(CATALOG_CLOSED_MESSAGE)
