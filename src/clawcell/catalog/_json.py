"""Typed narrowing of JSON-shaped values (schemas arrive as untyped dicts and lists)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["as_list", "as_mapping"]


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` as a string-keyed mapping, or `None` when it is not a mapping."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def as_list(value: object) -> list[Any] | None:
    """`value` as a list, or `None` when it is not a list."""
    return cast("list[Any]", value) if isinstance(value, list) else None
