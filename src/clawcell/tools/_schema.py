"""Small builders for the closed JSON Schemas the built-in tools declare."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["array", "boolean", "integer", "literal", "obj", "string"]

Schema = dict[str, Any]


def obj(required: Mapping[str, Schema], optional: Mapping[str, Schema] | None = None) -> Schema:
    """A closed object: `required` keys must be present, `optional` ones may be."""
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


def string(description: str = "", **extra: Any) -> Schema:
    """A string, with an optional description and constraints."""
    return {"type": "string", **({"description": description} if description else {}), **extra}


def integer(description: str = "", **extra: Any) -> Schema:
    """An integer, with an optional description and bounds."""
    return {"type": "integer", **({"description": description} if description else {}), **extra}


def boolean(description: str = "") -> Schema:
    """A boolean, with an optional description."""
    return {"type": "boolean", **({"description": description} if description else {})}


def literal(*values: str, description: str = "") -> Schema:
    """One of the given strings (a single value becomes a `const`)."""
    base: Schema = {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
    return {"type": "string", **base, **({"description": description} if description else {})}


def array(items: Schema) -> Schema:
    """An array of `items`."""
    return {"type": "array", "items": items}
