"""Full TypeScript declarations of JSON Schemas, built as a small typed tree.

`schema_to_type` maps a schema to a tree of `Primitive`, `Literal`, `ArrayType`, `ObjectType`
and `UnionType` nodes; `render` writes it out. Unlike compact hints (`_hints.py`) nothing is
elided with `...`: every property is listed, and whatever cannot be expressed exactly becomes
`unknown`. Independent bounds keep hostile schemas cheap: at most `MAX_NODES` schema nodes are
visited and `MAX_DEPTH` levels deep; beyond them the type is `unknown`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias, cast

from .._json import as_list, as_mapping
from .._names import locale_key
from ._hints import (
    IDENTIFIER,
    UNSUPPORTED_KEYWORDS,
    normalize_nullable,
    numeric_comment,
    render_primitive,
)

__all__ = [
    "ArrayType",
    "Literal",
    "ObjectType",
    "Primitive",
    "Property",
    "TsType",
    "UnionType",
    "render",
    "schema_declaration",
    "schema_to_type",
]

MAX_NODES: Final = 4_096
MAX_DEPTH: Final = 24
_UNION_BASE_KEYS: Final = ("const", "enum", "type", "properties", "required", "items")


@dataclass(frozen=True)
class Primitive:
    """`string`, `number`, `boolean`, `null` or `unknown`, with an optional `/* … */` comment."""

    name: str
    comment: str = ""


@dataclass(frozen=True)
class Literal:
    """A JSON literal such as `"list"`, `3` or `true`."""

    text: str


@dataclass(frozen=True)
class ArrayType:
    """`Array<item>`."""

    item: TsType


@dataclass(frozen=True)
class Property:
    """One object member."""

    name: str
    type: TsType
    optional: bool


@dataclass(frozen=True)
class ObjectType:
    """An object literal type; `index` is the `[key: string]` value type when present."""

    properties: tuple[Property, ...] = ()
    index: TsType | None = None


@dataclass(frozen=True)
class UnionType:
    """`A | B`; `grouped` wraps object and union members in parentheses (`(A) | (B)`)."""

    members: tuple[TsType, ...]
    grouped: bool = False


TsType: TypeAlias = Primitive | Literal | ArrayType | ObjectType | UnionType
UNKNOWN: Final = Primitive("unknown")


def _render_member(member: TsType, grouped: bool) -> str:
    text = render(member)
    needs_group = isinstance(member, ObjectType) or (
        isinstance(member, UnionType) and len(member.members) > 1
    )
    return f"({text})" if grouped and needs_group else text


def _render_key(name: str) -> str:
    return name if IDENTIFIER.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def render(node: TsType) -> str:
    """Write a declaration tree as TypeScript type text."""
    if isinstance(node, Primitive):
        return node.name + node.comment
    if isinstance(node, Literal):
        return node.text
    if isinstance(node, ArrayType):
        return f"Array<{render(node.item)}>"
    if isinstance(node, UnionType):
        texts = [_render_member(member, node.grouped) for member in node.members]
        return " | ".join(dict.fromkeys(texts))
    parts = [
        f"{_render_key(p.name)}{'?' if p.optional else ''}: {render(p.type)}"
        for p in node.properties
    ]
    if node.index is not None:
        parts.append(f"[key: string]: {render(node.index)}")
    # An object that admits no key at all: the release writes it as `Record<string, never>`.
    return "{ " + "; ".join(parts) + " }" if parts else "Record<string, never>"


@dataclass
class _Walk:
    comments: bool
    remaining: int = MAX_NODES
    active: set[int] = field(default_factory=set[int])


def schema_to_type(schema: object, *, comments: bool = False) -> TsType:
    """Map a JSON Schema to a declaration tree.

    Args:
        schema: Any value; non-schemas become `unknown`.
        comments: Keep numeric constraint comments (input declarations do, outputs do not).
    """
    return _visit(schema, 0, _Walk(comments=comments))


def schema_declaration(schema: object, *, comments: bool = False) -> str:
    """`render(schema_to_type(schema))`."""
    return render(schema_to_type(schema, comments=comments))


def _visit(schema: object, depth: int, walk: _Walk) -> TsType:
    walk.remaining -= 1
    node = as_mapping(schema)
    if node is None or walk.remaining < 0 or depth > MAX_DEPTH:
        return UNKNOWN
    if not node or id(node) in walk.active:
        return UNKNOWN
    walk.active.add(id(node))
    try:
        return _visit_node(node, depth, walk)
    finally:
        walk.active.discard(id(node))


def _visit_node(node: Mapping[str, Any], depth: int, walk: _Walk) -> TsType:
    normalized = normalize_nullable(node)
    if normalized is None or any(key in node for key in UNSUPPORTED_KEYWORDS):
        return UNKNOWN
    if normalized is not node:
        return _visit_node(normalized, depth, walk)
    if "anyOf" in node or "oneOf" in node:
        return _union(node, depth, walk)
    if "const" in node:
        literal = render_primitive(node["const"])
        return UNKNOWN if literal is None else Literal(literal)
    if "enum" in node:
        return _enum(node["enum"])
    return _typed(node, depth, walk)


def _union(node: Mapping[str, Any], depth: int, walk: _Walk) -> TsType:
    variants = node.get("anyOf", node.get("oneOf"))
    if ("anyOf" in node and "oneOf" in node) or any(key in node for key in _UNION_BASE_KEYS):
        return UNKNOWN
    branches = as_list(variants)
    if not branches:
        return UNKNOWN
    members = tuple(_visit(v, depth + 1, walk) for v in branches)
    if UNKNOWN in members:
        return UNKNOWN
    return members[0] if len(members) == 1 else UnionType(members, grouped=True)


def _enum(values: object) -> TsType:
    items = as_list(values)
    if not items:
        return UNKNOWN
    rendered = [render_primitive(value) for value in items]
    if any(text is None for text in rendered):
        return UNKNOWN
    literals = tuple(Literal(text) for text in dict.fromkeys(rendered) if text is not None)
    return literals[0] if len(literals) == 1 else UnionType(literals)


def _typed(node: Mapping[str, Any], depth: int, walk: _Walk) -> TsType:
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = list(cast("list[Any]", kind))
        if not kinds or not all(isinstance(k, str) for k in kinds):
            return UNKNOWN
        members = tuple(_typed({**node, "type": k}, depth + 1, walk) for k in kinds)
        if UNKNOWN in members:
            return UNKNOWN
        return members[0] if len(members) == 1 else UnionType(members)
    if kind in ("integer", "number"):
        comment = numeric_comment(node) if walk.comments else ""
        return UNKNOWN if comment is None else Primitive("number", comment)
    if kind == "array":
        return ArrayType(_visit(node.get("items"), depth + 1, walk))
    if kind == "object":
        return _object(node, depth + 1, walk)
    if kind in ("string", "boolean", "null"):
        return Primitive(str(kind))
    return UNKNOWN


def _object(node: Mapping[str, Any], depth: int, walk: _Walk) -> TsType:
    raw_props = node.get("properties")
    additional = node.get("additionalProperties")
    raw_required = node.get("required", [])
    required_list = as_list(raw_required)
    if required_list is None or not all(isinstance(k, str) for k in required_list):
        return UNKNOWN
    required: set[str] = set(required_list)
    if raw_props is None or (isinstance(raw_props, Mapping) and not raw_props):
        if as_mapping(additional) is not None:
            return ObjectType(index=_visit(additional, depth, walk))
        return ObjectType() if additional is False and not required else ObjectType(index=UNKNOWN)
    if not isinstance(raw_props, Mapping):
        return UNKNOWN
    props = cast("Mapping[str, Any]", raw_props)
    if not required <= set(props):
        return UNKNOWN
    ordered = sorted(props, key=locale_key)  # the release sorts by name, not requiredness
    members = tuple(
        Property(name=k, type=_visit(props[k], depth, walk), optional=k not in required)
        for k in ordered
    )
    return ObjectType(properties=members)
