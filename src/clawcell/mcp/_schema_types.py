"""JSON Schema → TypeScript type text for MCP declarations (spec §9.4).

MCP schemas come from servers clawcell does not trust, so the mapping is bounded (depth 8,
16 enum values, 8 union members) and anything it does not understand is `unknown`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

__all__ = ["MAX_DEPTH", "is_identifier", "object_type", "property_key", "schema_type"]

MAX_DEPTH: Final = 8
MAX_ENUM: Final = 16
MAX_UNION: Final = 8
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def is_identifier(name: str) -> bool:
    """A property name that needs no quotes."""
    return _IDENTIFIER.fullmatch(name) is not None


def property_key(name: str) -> str:
    """`name` as written in an object type: bare when an identifier, else a JSON string."""
    return name if is_identifier(name) else json.dumps(name, ensure_ascii=False)


def _mapping(value: object) -> Mapping[str, Any] | None:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _list(value: object) -> list[Any] | None:
    return list(cast("Sequence[Any]", value)) if isinstance(value, list | tuple) else None


def _union(members: Sequence[str]) -> str:
    unique = list(dict.fromkeys(members))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique) if unique else "never"


def _type_names(node: Mapping[str, Any]) -> list[str] | None:
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    kinds = _list(kind)
    if kinds is not None and all(isinstance(k, str) for k in kinds):
        return [str(k) for k in kinds]
    return None


def _fits(value: object, kinds: list[str] | None) -> bool:
    if kinds is None:
        return True
    if value is None:
        return "null" in kinds
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int | float):
        whole = isinstance(value, int) or float(value).is_integer()
        return "number" in kinds or ("integer" in kinds and whole)
    if isinstance(value, str):
        return "string" in kinds
    return False


def _literal(value: object) -> str | None:
    if value is None or isinstance(value, str | bool):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float) and math.isfinite(value):
        return json.dumps(int(value) if float(value).is_integer() else value)
    return None


def _enum(values: list[Any], kinds: list[str] | None) -> str:
    literals = [_literal(v) for v in values if _fits(v, kinds)]
    return _union([text for text in literals if text is not None])


def _nullable(node: Mapping[str, Any], kinds: list[str] | None) -> bool:
    return kinds is None or "null" in kinds or node.get("nullable") is True


def schema_type(schema: object, depth: int = 0) -> str:
    """The TypeScript type of one schema node."""
    node = _mapping(schema)
    if node is None or depth > MAX_DEPTH:
        return "unknown"
    kinds = _type_names(node)
    values = _list(node.get("enum"))
    if values is not None and 0 < len(values) <= MAX_ENUM:
        return _enum(values, kinds)
    for key in ("oneOf", "anyOf"):
        members = _list(node.get(key))
        if members is not None and 0 < len(members) <= MAX_UNION:
            texts = [schema_type(m, depth + 1) for m in members]
            if _nullable(node, kinds):
                texts.append("null")
            return _union(texts)
    if kinds is None:
        return "unknown"
    texts = [_single(node, kind, depth) for kind in kinds if kind != "null"]
    if _nullable(node, kinds):
        texts.append("null")
    return _union(texts)


def _single(node: Mapping[str, Any], kind: str, depth: int) -> str:
    if kind in ("integer", "number"):
        return "number"
    if kind in ("string", "boolean"):
        return kind
    if kind == "array":
        items = node.get("items")
        return f"Array<{schema_type(items, depth + 1) if items is not None else 'unknown'}>"
    if kind == "object":
        return object_type(node, depth)
    return "unknown"


def _extra_type(node: Mapping[str, Any], depth: int) -> str:
    extra = node.get("additionalProperties")
    if extra is False:
        return "never"
    if "patternProperties" in node or extra is None or extra is True:
        return "unknown"
    return schema_type(extra, depth + 1)


def object_type(
    node: Mapping[str, Any], depth: int = 0, *, required: Sequence[str] | None = None
) -> str:
    """An inline object type; `required` overrides the node's own `required` list."""
    properties = _mapping(node.get("properties")) or {}
    extra = _extra_type(node, depth)
    if not properties:
        return f"Record<string, {extra}>"
    wanted = (
        required if required is not None else [str(r) for r in _list(node.get("required")) or []]
    )
    fields: list[str] = []
    members: list[str] = [] if extra == "never" else [extra]
    optional = False
    for name, child in properties.items():
        text = schema_type(child, depth + 1)
        is_optional = name not in wanted
        optional = optional or is_optional
        fields.append(f"{property_key(name)}{'?' if is_optional else ''}: {text};")
        members.append(text)
    if node.get("additionalProperties") is not False:
        if optional:
            members.append("undefined")
        parts = [p.strip() for m in members for p in _split_union(m)]
        index = "unknown" if len(set(parts)) > MAX_UNION else _union(parts)
        fields.append(f"[key: string]: {index};")
    return "{ " + " ".join(fields) + " }"


def _split_union(text: str) -> list[str]:
    """Top-level members of a union text (nested `<…>`/`{…}` kept whole)."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in "<{(":
            depth += 1
        elif char in ">})":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
