"""Typed narrowing of JSON-shaped values (schemas arrive as untyped dicts and lists)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["as_list", "as_mapping", "type_names"]


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` as a string-keyed mapping, or `None` when it is not a mapping."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def as_list(value: object) -> list[Any] | None:
    """`value` as a list, or `None` when it is not a list."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def type_names(value: object) -> list[str] | None:
    """A schema's `type` as a list of names (a name alone is a list of one), or `None` when
    it is neither a name nor a list of names (a malformed schema's)."""
    if isinstance(value, str):
        return [value]
    listed = as_list(value)
    if listed is None or not all(isinstance(name, str) for name in listed):
        return None
    return [str(name) for name in listed]
