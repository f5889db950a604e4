"""Saved-result descriptors (spec `code-mode.md` §6.6): what `results.save` hands the guest.

A descriptor is the id, the exact size and count, and a bounded description of the data
(`shape`, `preview`) that always fits 768 encoded bytes. It follows the shipped release byte
for byte (recorded in the conformance cases): a breadth-first discovery of arrays bounded to
128 nodes, depth 5 and 16 keys per object, the 8 longest arrays with first/middle/last
samples, and sampled values with bounded text. Object keys are visited in JavaScript's own-key
order (array-index keys first, ascending), which is also the order of any text
`JSON.stringify` produced.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, TypedDict, cast

from .._jsjson import dumps, json_string_bytes, utf8_len, utf16_len
from ..errors import ConfigurationError
from ._fitting import fit_json_prefix, truncate_utf8

__all__ = [
    "MAX_REFERENCE_BYTES",
    "ResultReference",
    "describe",
    "fit_reference",
    "identity_only",
    "reference_bytes",
]

MAX_REFERENCE_BYTES: Final = 768

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


def reference_bytes(reference: ResultReference) -> int:
    return utf8_len(dumps(reference))


def identity_only(reference: ResultReference) -> ResultReference:
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
    if reference_bytes(reference) <= max_bytes:
        return reference
    minimal = identity_only(reference)
    remaining = max_bytes - reference_bytes(minimal)
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
