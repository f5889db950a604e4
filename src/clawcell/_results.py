"""Saved results of a Code Mode run (spec `code-mode.md` §6.5, §6.6, §10.1).

`results.save(value)` keeps a value's compact JSON text on the host and hands the guest a
*reference descriptor*: the id, the exact size and count, and a bounded description of the
data (`shape`, `preview`) that always fits 768 encoded bytes. `results.load(id)` returns the
text again, `results.delete(id)` frees its space. Oversized final objects and arrays are saved
the same way automatically, so a later cell can read what the model could not be shown.

`ResultsStore` is that store for one run: at most 64 entries sharing a byte allowance
(`Limits.inbox_bytes`), never evicting. `describe` builds a descriptor from JSON text;
`reference_marker` and `retain_oversized_value` are the seams the output budget uses for
automatic retention.

The descriptor follows the shipped release byte for byte (recorded in the conformance cases):
a breadth-first discovery of arrays bounded to 128 nodes, depth 5 and 16 keys per object, the
8 longest arrays with first/middle/last samples, and sampled values with bounded text.
Object keys are visited in JavaScript's own-key order (array-index keys first, ascending),
which is also the order of any text `JSON.stringify` produced.

This module is long (about 650 lines, a third of them docstrings and protocol strings)
because the descriptor, the store that issues it and the retention decision share one set of
fitting rules; splitting them would scatter one protocol.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, cast

from ._jsjson import dumps, json_string_bytes, utf8_len, utf16_len
from ._output import JsonSource, fit_json_prefix, truncate_utf8
from .errors import ConfigurationError, InputError

__all__ = [
    "CAPACITY_MESSAGE",
    "CATALOG_CLOSED_MESSAGE",
    "INVALID_ID_MESSAGE",
    "MAX_REFERENCE_BYTES",
    "MAX_RESULTS",
    "NOT_RETAINED_CAPACITY",
    "NOT_RETAINED_CATALOG",
    "NOT_RETAINED_DATA_ALLOWANCE",
    "NOT_RETAINED_FALLBACK",
    "NOT_RETAINED_OUTPUT_BUDGET",
    "NOT_RETAINED_RESTART_SAFE",
    "RETAINED_GUIDANCE",
    "SCOPE_MESSAGE",
    "UNAVAILABLE_MESSAGE",
    "NotRetained",
    "ResultReference",
    "ResultsStore",
    "Retained",
    "RetentionMode",
    "SavedResult",
    "describe",
    "fit_reference",
    "minimal_reference_marker_bytes",
    "reference_marker",
    "reference_marker_bytes",
    "retain_oversized_value",
]

MAX_RESULTS: Final = 64
MAX_REFERENCE_BYTES: Final = 768

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

RETAINED_GUIDANCE: Final = (
    "Full result saved for this run; use results.load(reference.id) in a later exec."
)
NOT_RETAINED_DATA_ALLOWANCE: Final = (
    "Not retained: result exceeds the data allowance. Return less data."
)
NOT_RETAINED_CAPACITY: Final = (
    "Not retained: result-store capacity exceeded. Delete references or return less data."
)
NOT_RETAINED_CATALOG: Final = (
    "Not retained: run catalog is unavailable or changed. Return less data."
)
NOT_RETAINED_OUTPUT_BUDGET: Final = (
    "Not retained: reference exceeds output budget. Return less data."
)
NOT_RETAINED_RESTART_SAFE: Final = "Not retained in restart-safe mode. Return less data."
NOT_RETAINED_FALLBACK: Final = "Not retained; return less data."

# Descriptor bounds (spec §5 "preview traversal" and "sampled values").
_PREVIEW_INLINE_BYTES = 256
_MAX_VISITS = 128
_MAX_DEPTH = 5
_MAX_KEYS = 16
_MAX_ARRAYS = 8
_MAX_PATH_BYTES = 192
_MAX_KEY_UNITS = 192
_SHAPE_FIELDS = 6
_SAMPLE_DEPTH = 2
_SAMPLE_ITEMS = 2
_SAMPLE_TEXT_BYTES = 48
_SAMPLE_KEY_BYTES = 40
_FIELDS_MAX = 4
_FIELDS_BYTES = 96
_FIELD_TEXT_UNITS = 48

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_MAX_ARRAY_INDEX = 2**32 - 2


class ResultReference(TypedDict):
    """The descriptor `results.save` returns (spec §6.6), in the protocol's key order."""

    id: str
    bytes: int
    count: int
    shape: str
    preview: str
    previewTruncated: bool


@dataclass(frozen=True, kw_only=True)
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


# --- the descriptor (§6.6) -------------------------------------------------------------------


def _object(value: object) -> dict[str, Any] | None:
    """`value` as a JSON object, or `None` (parsed JSON has only `str` keys)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _array(value: object) -> list[Any] | None:
    """`value` as a JSON array, or `None`."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def _own_keys(obj: dict[str, Any]) -> Iterator[str]:
    """Keys in JavaScript's own-key order: array indices ascending, then insertion order."""
    indices = [k for k in obj if _ARRAY_INDEX.fullmatch(k) and int(k) <= _MAX_ARRAY_INDEX]
    if not indices:
        yield from obj
        return
    yield from sorted(indices, key=int)
    index_set = set(indices)
    yield from (k for k in obj if k not in index_set)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _preview_text(text: str, max_bytes: int) -> str:
    """`text` whole when it fits `max_bytes` UTF-8 bytes, else a cut prefix and `…`."""
    if utf8_len(text) <= max_bytes:
        return text
    return truncate_utf8(text, max_bytes) + "…"


def _sample_indices(length: int) -> list[int]:
    return list(dict.fromkeys((0, length // 2, length - 1))) if length else []


def _sample_shape(value: object) -> str:
    obj = _object(value)
    if obj is None:
        return _kind(value)
    fields: list[str] = []
    for key in _own_keys(obj):
        fields.append(f"{dumps(_preview_text(key, _SAMPLE_KEY_BYTES))}:{_kind(obj[key])}")
        if len(fields) == _SHAPE_FIELDS:
            break
    return "{" + ",".join(fields) + "}"


def _sampled_value(value: object, depth: int = 0) -> object:
    if isinstance(value, str):
        return _preview_text(value, _SAMPLE_TEXT_BYTES)
    obj, arr = _object(value), _array(value)
    if arr is not None:
        if depth >= _SAMPLE_DEPTH:
            return f"[array: {len(arr)} items]"
        return [_sampled_value(item, depth + 1) for item in arr[:_SAMPLE_ITEMS]]
    if obj is None:
        return value
    if depth >= _SAMPLE_DEPTH:
        return "[object]"
    sample: dict[str, object] = {}
    for count, key in enumerate(_own_keys(obj), start=1):
        sample[_preview_text(key, _SAMPLE_KEY_BYTES)] = _sampled_value(obj[key], depth + 1)
        if count == _SHAPE_FIELDS:
            break
    return sample


def _envelope_fields(value: object) -> dict[str, object] | None:
    """Up to 4 short scalar top-level fields (non-strings first) within 96 bytes."""
    obj = _object(value)
    if obj is None:
        return None
    candidates: list[tuple[str, object]] = []
    for examined, key in enumerate(_own_keys(obj), start=1):
        if examined > _MAX_KEYS:
            break
        item = obj[key]
        if isinstance(item, dict | list):
            continue
        if not isinstance(item, str) or utf16_len(item) <= _FIELD_TEXT_UNITS:
            candidates.append((_preview_text(key, _SAMPLE_KEY_BYTES), item))
    candidates.sort(key=lambda pair: isinstance(pair[1], str))  # stable: non-strings first
    fields: dict[str, object] = {}
    kept = 0
    for key, item in candidates:
        fields[key] = item
        if utf8_len(dumps(fields)) > _FIELDS_BYTES:
            del fields[key]
        else:
            kept += 1
            if kept == _FIELDS_MAX:
                break
    return fields if kept else None


@dataclass(frozen=True, slots=True)
class _Node:
    value: object
    path: str
    depth: int


def _children(node: _Node) -> tuple[list[tuple[object, str]], bool]:
    """A container's children with their paths, and whether any were skipped."""
    arr = _array(node.value)
    if arr is not None:
        indices = _sample_indices(len(arr))
        return [(arr[i], f"{node.path}[{i}]") for i in indices], len(indices) < len(arr)
    obj = _object(node.value) or {}
    children: list[tuple[object, str]] = []
    limited = False
    for count, key in enumerate(_own_keys(obj), start=1):
        if count > _MAX_KEYS:
            return children, True
        if utf16_len(key) > _MAX_KEY_UNITS:
            limited = True
            continue
        segment = f".{key}" if _IDENTIFIER.fullmatch(key) else f"[{dumps(key)}]"
        children.append((obj[key], node.path + segment))
    return children, limited


def _discover_arrays(value: object) -> tuple[list[tuple[str, list[Any]]], bool]:
    """Breadth-first array discovery: the 8 longest arrays and whether anything was cut."""
    queue = [_Node(value, "$", 0)]
    arrays: list[tuple[str, list[Any]]] = []
    limited = False
    position = 0
    while position < len(queue):
        node = queue[position]
        position += 1
        arr = _array(node.value)
        if arr is None and _object(node.value) is None:
            continue
        if arr is not None:
            arrays.append((node.path, arr))
        if node.depth == _MAX_DEPTH:
            limited = True
            continue
        children, cut = _children(node)
        limited = limited or cut
        for child, path in children:
            if len(queue) >= _MAX_VISITS or utf8_len(path) > _MAX_PATH_BYTES:
                limited = True
            else:
                queue.append(_Node(child, path, node.depth + 1))
    # JavaScript compares strings by UTF-16 code units.
    arrays.sort(key=lambda entry: (-len(entry[1]), entry[0].encode("utf-16-be", "surrogatepass")))
    if len(arrays) > _MAX_ARRAYS:
        limited = True
        del arrays[_MAX_ARRAYS:]
    return arrays, limited


def _count(value: object) -> int:
    obj, arr = _object(value), _array(value)
    if obj is not None:
        return len(obj)
    return 1 if arr is None else len(arr)


def _shape_and_preview(value: Any, json_text: str, size: int) -> tuple[str, str]:
    arrays, limited = _discover_arrays(value)
    shapes: list[str] = []
    samples: list[dict[str, Any]] = []
    for path, items in arrays:
        indices = _sample_indices(len(items))
        kinds = list(dict.fromkeys(_sample_shape(items[i]) for i in indices))
        mixed = " heterogeneous" if len(kinds) > 1 else ""
        shapes.append(
            f"{path}: {len(items)} items, sampled {len(indices)}/{len(items)}{mixed}: "
            + " | ".join(kinds)
        )
        samples.append(
            {
                "path": path,
                "count": len(items),
                "items": [{"index": i, "value": _sampled_value(items[i])} for i in indices],
            }
        )
    shape = ("limited traversal; " if limited else "") + (
        "; ".join(shapes) if shapes else _sample_shape(value)
    )
    if size <= _PREVIEW_INLINE_BYTES:
        return shape, json_text
    preview: dict[str, Any] = {"sampled": True, "traversalLimited": limited}
    if samples:
        fields = _envelope_fields(value)
        if fields is not None:
            preview["fields"] = fields
        preview["arrays"] = samples
    else:
        preview["value"] = _sampled_value(value)
    return shape, dumps(preview)


def _reference_bytes(reference: ResultReference) -> int:
    return utf8_len(dumps(reference))


def _identity_only(reference: ResultReference) -> ResultReference:
    """The reference with blank shape and preview: what always has to fit."""
    return ResultReference(
        id=reference["id"],
        bytes=reference["bytes"],
        count=reference["count"],
        shape="",
        preview="",
        previewTruncated=True,
    )


def fit_reference(reference: ResultReference, max_bytes: int) -> ResultReference | None:
    """`reference` shrunk to `max_bytes` encoded bytes, keeping `id`, `bytes` and `count`.

    When the whole descriptor is too large, `shape` and `preview` become JSON-string
    prefixes: `shape` gets a third of the room left by a descriptor with both blank, the
    preview the rest, and `previewTruncated` is true. Returns `None` when even the blank
    descriptor does not fit.
    """
    if _reference_bytes(reference) <= max_bytes:
        return reference
    minimal = _identity_only(reference)
    remaining = max_bytes - _reference_bytes(minimal)
    if remaining < 0:
        return None
    shape_limit = 2 + remaining // 3
    shape = fit_json_prefix(reference["shape"], shape_limit, lambda _: 0)
    preview_limit = 2 + remaining - (json_string_bytes(shape) - 2)
    preview = fit_json_prefix(reference["preview"], preview_limit, lambda _: 0)
    return ResultReference(
        id=minimal["id"],
        bytes=minimal["bytes"],
        count=minimal["count"],
        shape=shape,
        preview=preview,
        previewTruncated=True,
    )


def describe(
    json_text: str, *, reference_id: str | None = None, value: Any = None
) -> ResultReference:
    """The reference descriptor of a saved value, at most 768 encoded bytes (spec §6.6).

    Args:
        json_text: The value's compact JSON text (what `JSON.stringify` produced).
        reference_id: The reference id; a fresh `result_<uuid4>` when omitted.
        value: The parsed value when the caller already has it; parsed from `json_text`
            otherwise.
    """
    parsed = json.loads(json_text) if value is None else value
    size = utf8_len(json_text)
    shape, preview = _shape_and_preview(parsed, json_text, size)
    reference = ResultReference(
        id=reference_id if reference_id is not None else f"result_{uuid.uuid4()}",
        bytes=size,
        count=_count(parsed),
        shape=shape,
        preview=preview,
        previewTruncated=size > _PREVIEW_INLINE_BYTES,
    )
    fitted = fit_reference(reference, MAX_REFERENCE_BYTES)
    if fitted is None:  # an id of a few hundred bytes; never for `result_<uuid4>`
        raise ConfigurationError(
            f"Result id {reference['id']!r} is too long for a {MAX_REFERENCE_BYTES}-byte "
            "descriptor; use `result_<uuid>` ids."
        )
    return fitted


# --- the store (§10.1) -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Retained:
    """An automatic save that happened; `release()` undoes it if the reference is not shown."""

    reference: ResultReference
    release: Callable[[], None]


@dataclass(frozen=True, kw_only=True)
class NotRetained:
    """An automatic save that did not happen; `reason` is the marker's `guidance`."""

    reason: str


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
        admitted = self._admit(text, network_content, value)
        if isinstance(admitted, str):
            raise InputError(CAPACITY_MESSAGE)
        return admitted

    def retain(
        self, value: JsonSource | str, *, network_content: bool = False
    ) -> Retained | NotRetained:
        """Automatically save an oversized final value (§6.5); never raises for capacity.

        A `JsonSource` that is only a prefix could not be kept whole by the worker, so it
        exceeds the data allowance by construction.
        """
        if isinstance(value, JsonSource) and not value.complete:
            return NotRetained(reason=NOT_RETAINED_DATA_ALLOWANCE)
        if self._closed:
            return NotRetained(reason=NOT_RETAINED_CATALOG)
        text = value.text if isinstance(value, JsonSource) else value
        admitted = self._admit(text, network_content)
        if isinstance(admitted, str):
            return NotRetained(reason=admitted)
        reference_id = admitted["id"]
        return Retained(reference=admitted, release=lambda: self._discard(reference_id))

    def _admit(
        self, json_text: str, network_content: bool, value: object = None
    ) -> ResultReference | str:
        self._ensure_open()
        size = utf8_len(json_text)
        if size > self._allowance:
            return NOT_RETAINED_DATA_ALLOWANCE
        if len(self._entries) >= self._max_entries or size > self._allowance - self._used:
            return NOT_RETAINED_CAPACITY
        reference = describe(json_text, value=value)
        self._entries[reference["id"]] = SavedResult(
            json=json_text, bytes=size, network_content=network_content
        )
        self._used += size
        return reference

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
        self._discard(str(reference_id))  # `get` accepted it, so it is a `str`
        return True

    def _discard(self, reference_id: str) -> None:
        entry = self._entries.pop(reference_id, None)
        if entry is not None:
            self._used -= entry.bytes

    def close(self) -> None:
        """Drop every entry (run end, catalog replacement); later calls fail. Idempotent."""
        self._entries.clear()
        self._used = 0
        self._closed = True

    def _ensure_open(self) -> None:
        if self._closed:
            raise InputError(CATALOG_CLOSED_MESSAGE)


# --- automatic retention (§6.5) --------------------------------------------------------------

RetentionMode = Literal["interactive", "restart_safe", "headless"]


@functools.cache
def _marker_overhead() -> int:
    """Bytes of `{"truncated":true,"reference":…,"guidance":…}` apart from the reference."""
    return (
        utf8_len(dumps({"truncated": True, "reference": None, "guidance": RETAINED_GUIDANCE})) - 4
    )


def reference_marker(reference: ResultReference, max_bytes: int) -> dict[str, Any] | None:
    """The retained value `{truncated, reference, guidance}` within `max_bytes`, or `None`.

    The reference shrinks by `fit_reference`; `None` means not even its identity fits.
    """
    fitted = fit_reference(reference, max_bytes - _marker_overhead())
    if fitted is None:
        return None
    return {"truncated": True, "reference": fitted, "guidance": RETAINED_GUIDANCE}


def reference_marker_bytes(reference: ResultReference) -> int:
    """Bytes of the whole retained value: the value size `V` of the budget split (§6.2)."""
    return _marker_overhead() + _reference_bytes(reference)


def minimal_reference_marker_bytes(reference: ResultReference) -> int:
    """Bytes of the retained value with blank shape/preview: `R` of §6.2 step 3."""
    minimal = _identity_only(reference)
    return _marker_overhead() + _reference_bytes(minimal)


def retain_oversized_value(
    store: ResultsStore | None,
    value: JsonSource,
    deliver: Callable[[ResultReference], bool],
    *,
    mode: RetentionMode = "interactive",
    network_content: bool = False,
) -> ResultReference | str | None:
    """Decide the automatic retention of a final value the output budget truncated (§6.5).

    Call it only when the projection replaced the value with a truncation marker.
    `deliver(reference)` re-projects the response offering the reference and says whether
    the reference marker was used; when it was not, the save is released again, so a failed
    retention never consumes capacity.

    Returns:
        The reference when it was saved and delivered; a non-retention reason to use as the
        ordinary marker's `guidance` (fall back to `NOT_RETAINED_FALLBACK`, then to the
        default guidance, when the reason itself does not fit); or `None` when the value is
        not eligible (headless cells, values that are not objects or arrays) and the
        ordinary marker stays as it is.
    """
    if mode == "headless" or not value.text.startswith(("{", "[")):
        return None
    if mode == "restart_safe":
        return NOT_RETAINED_RESTART_SAFE
    if store is None:
        return NOT_RETAINED_CATALOG
    outcome = store.retain(value, network_content=network_content)
    if isinstance(outcome, NotRetained):
        return outcome.reason
    delivered = False
    try:
        delivered = deliver(outcome.reference)
    finally:
        if not delivered:
            outcome.release()
    return outcome.reference if delivered else NOT_RETAINED_OUTPUT_BUDGET
