"""A parked run's `meta` mapping: encoding, its expiry, and merge patches.

Every backend stores `meta` as compact JSON text and keeps `meta["expiresAt"]` (seconds since
the epoch, written by the run lifecycle) beside it, so `sweep` can find expired runs without
reading snapshots. `update_run_meta` applies a JSON Merge Patch (RFC 7396): objects merge key by
key, `null` removes a key, anything else replaces. A pending tool call's result can so be
written as `{"settled": {"call_3": {...}}}` without rewriting the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from ..errors import InputError

__all__ = ["encode_meta", "expiry_of", "merge_patch"]


def encode_meta(meta: Mapping[str, Any]) -> str:
    """`meta` as compact JSON text, refusing what JSON cannot carry."""
    try:
        return json.dumps(dict(meta), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"parked-run meta is not JSON-serialisable ({exc}); keep it to strings, numbers, "
            "booleans, null, lists and string-keyed mappings."
        ) from exc


def expiry_of(meta: Mapping[str, Any]) -> float | None:
    """`meta["expiresAt"]` when it is a number; `None` (never expires) otherwise."""
    value = meta.get("expiresAt")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`target` with `patch` applied as an RFC 7396 JSON Merge Patch (a new dict)."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping):
            current = merged.get(key)
            base: Mapping[str, Any] = (
                cast(Mapping[str, Any], current) if isinstance(current, Mapping) else {}
            )
            merged[key] = merge_patch(base, cast(Mapping[str, Any], value))
        else:
            merged[key] = value
    return merged
