"""Compact input/output hints: bounded TypeScript-style one-liners (spec §7.3, §8.2).

A hint is *complete* only when it describes every value the schema accepts: closed objects, no
truncation, no unsupported keyword. Output hints are shown only when complete; input hints are
shown whenever they fit, with `...` marking what they leave out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final, cast

from ..._lazy import positional_value_class, value_class
from .._json import as_list, as_mapping, type_names
from .._names import locale_key

__all__ = ["HintLimits", "compact_input_hint", "compact_output_hint", "numeric_comment"]

UNSUPPORTED_KEYWORDS: Final = (
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "allOf",
    "patternProperties",
    "unevaluatedProperties",
    "dependentSchemas",
    "dependencies",
    "if",
    "then",
    "else",
    "prefixItems",
    "unevaluatedItems",
)
_UNION_BASE_KEYS: Final = (
    "const",
    "enum",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
)
MAX_LITERAL_VALUES: Final = 8
MAX_LITERAL_CHARS: Final = 96
MAX_STRUCTURAL_VARIANTS: Final = 5
MAX_TYPE_LIST: Final = 4
MAX_PROPERTY_NAME_CHARS: Final = 128
IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


@value_class
class HintLimits:
    """Bounds of one hint flavour."""

    max_chars: int
    max_depth: int
    max_properties: int
    comments: bool


INPUT_LIMITS: Final = HintLimits(max_chars=300, max_depth=4, max_properties=16, comments=True)
OUTPUT_LIMITS: Final = HintLimits(max_chars=800, max_depth=6, max_properties=20, comments=False)


@positional_value_class
class _Hint:
    """A hint's text and whether it says all there is."""

    text: str
    complete: bool


_UNKNOWN: Final = _Hint("unknown", False)


def _incomplete(hint: _Hint) -> _Hint:
    return _Hint(hint.text, False)


def _finish(schema: Mapping[str, Any], hint: _Hint) -> _Hint:
    return _incomplete(hint) if any(key in schema for key in UNSUPPORTED_KEYWORDS) else hint


def is_finite_number(value: object) -> bool:
    """True for JSON numbers that are finite (booleans are not numbers)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def js_number(value: float) -> str:
    """A finite number as JavaScript's `JSON.stringify` writes it (`1.0` → `1`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return json.dumps(value)


def render_primitive(value: object) -> str | None:
    """The JSON literal of null, a string, a boolean or a finite number, else `None`."""
    if is_finite_number(value):
        return js_number(cast("float", value))
    if value is None or isinstance(value, str | bool):
        return json.dumps(value, ensure_ascii=False)
    return None


def literal_union(values: object) -> str | None:
    """`"a" | "b"` for 1–8 primitive values within 96 characters, else `None`."""
    items = as_list(values)
    if items is None or not 0 < len(items) <= MAX_LITERAL_VALUES:
        return None
    rendered = [render_primitive(value) for value in items]
    if any(text is None for text in rendered):
        return None
    text = " | ".join(dict.fromkeys(text for text in rendered if text is not None))
    return text if len(text) <= MAX_LITERAL_CHARS else None


_BOUNDS: Final = (
    ("minimum", ">="),
    ("maximum", "<="),
    ("exclusiveMinimum", ">"),
    ("exclusiveMaximum", "<"),
)


def numeric_comment(schema: Mapping[str, Any]) -> str | None:
    """`/* integer, >= 0 */` for a numeric schema; `""` without constraints; `None` if malformed."""
    parts = ["integer"] if schema.get("type") == "integer" else []
    for key, symbol in _BOUNDS:
        if key in schema:
            bound = schema[key]
            if not is_finite_number(bound):
                return None
            parts.append(f"{symbol} {js_number(bound)}")
    return f" /* {', '.join(parts)} */" if parts else ""


def normalize_nullable(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Fold OpenAPI `nullable: true` into the type list; `None` when it cannot be folded."""
    if "nullable" not in schema:
        return schema
    nullable = schema["nullable"]
    if not isinstance(nullable, bool):
        return None
    types = type_names(schema.get("type"))
    if types is None:
        return None
    if not nullable:
        return schema
    return {**schema, "nullable": False, "type": list(dict.fromkeys([*types, "null"]))}


def _union(schema: Mapping[str, Any], depth: int, limits: HintLimits) -> _Hint | None:
    has_any, has_one = "anyOf" in schema, "oneOf" in schema
    if not has_any and not has_one:
        return None
    items = as_list(schema["anyOf"] if has_any else schema["oneOf"])
    if (has_any and has_one) or not items:
        return _UNKNOWN
    if len(items) > MAX_LITERAL_VALUES or any(key in schema for key in _UNION_BASE_KEYS):
        return _UNKNOWN
    if all(_is_const_variant(item) for item in items):
        literal = literal_union([item["const"] for item in items])
        if literal is not None:
            return _Hint(literal, True)
    if len(items) > MAX_STRUCTURAL_VARIANTS:
        return _UNKNOWN
    rendered = [hint_for(item, depth + 1, limits) for item in items]
    if not all(hint.complete for hint in rendered):
        return _UNKNOWN
    return _Hint(" | ".join(dict.fromkeys(hint.text for hint in rendered)), True)


def _is_const_variant(item: object) -> bool:
    return (
        isinstance(item, Mapping)
        and "const" in item
        and not any(key in item for key in UNSUPPORTED_KEYWORDS)
    )


def _sorted_keys(keys: list[str], limit: int) -> list[str]:
    return sorted(keys, key=locale_key)[: max(limit, 0)]


def _object(schema: Mapping[str, Any], depth: int, limits: HintLimits) -> _Hint:
    props = as_mapping(schema.get("properties"))
    raw_required = schema.get("required")
    required_values: list[Any] = as_list(raw_required) or []
    closed = schema.get("additionalProperties") is False
    if props is None:
        lists_required = len(required_values) > limits.max_properties or any(
            isinstance(value, str) for value in required_values
        )
        return _Hint("{}", True) if closed and not lists_required else _Hint("{ ... }", False)
    too_many_required = len(required_values) > limits.max_properties
    invalid_required = not too_many_required and any(
        not isinstance(value, str) for value in required_values
    )
    required = list(
        dict.fromkeys(v for v in required_values[: limits.max_properties] if isinstance(v, str))
    )
    usable_required = [k for k in required if len(k) <= MAX_PROPERTY_NAME_CHARS and k in props]
    missing_required = len(usable_required) != len(required)
    required_keys = _sorted_keys(usable_required, limits.max_properties)
    optional_limit = limits.max_properties - len(required_keys)
    optional = [key for key in props if key not in required]
    short_optional = [key for key in optional if len(key) <= MAX_PROPERTY_NAME_CHARS]
    structurally_incomplete = (
        too_many_required
        or invalid_required
        or missing_required
        or len(short_optional) != len(optional)
        or len(optional) > optional_limit
    )
    keys = required_keys + _sorted_keys(short_optional, optional_limit)
    additional = schema.get("additionalProperties")
    omitted = structurally_incomplete or additional is True or isinstance(additional, Mapping)
    complete = not structurally_incomplete and closed
    parts: list[str] = []
    for key in keys:
        name = key if IDENTIFIER.fullmatch(key) else json.dumps(key, ensure_ascii=False)
        hint = hint_for(props[key], depth, limits)
        complete = complete and hint.complete
        part = f"{name}{'' if key in required else '?'}: {hint.text}"
        if len("{ " + "; ".join([*parts, part]) + " }") > limits.max_chars:
            omitted, complete = True, False
            break
        parts.append(part)
    if not parts:
        return _Hint("{}", complete) if not keys and not omitted else _Hint("{ ... }", False)
    return _Hint("{ " + "; ".join(parts) + ("; ..." if omitted else "") + " }", complete)


def _typed(schema: Mapping[str, Any], depth: int, limits: HintLimits) -> _Hint:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = list(cast("list[Any]", kind))
        if not 0 < len(kinds) <= MAX_TYPE_LIST or not all(isinstance(k, str) for k in kinds):
            return _UNKNOWN
        rendered = [hint_for({**schema, "type": k}, depth + 1, limits) for k in kinds]
        if not all(hint.complete for hint in rendered):
            return _UNKNOWN
        return _Hint(" | ".join(dict.fromkeys(hint.text for hint in rendered)), True)
    if kind in ("integer", "number"):
        comment = numeric_comment(schema) if limits.comments else ""
        return _UNKNOWN if comment is None else _Hint(f"number{comment}", True)
    if kind == "array":
        item = hint_for(schema.get("items"), depth + 1, limits)
        return _Hint(f"Array<{item.text}>", item.complete)
    if kind == "object":
        return _object(schema, depth + 1, limits)
    if kind in ("string", "boolean", "null"):
        return _Hint(str(kind), True)
    return _UNKNOWN


def hint_for(schema: object, depth: int, limits: HintLimits) -> _Hint:
    """Render one schema node; `depth` counts nesting from the root."""
    node = as_mapping(schema)
    if node is None:
        return _UNKNOWN
    if not node:
        return _Hint("unknown", True)
    if depth >= limits.max_depth:
        return _UNKNOWN
    normalized = normalize_nullable(node)
    if normalized is None:
        return _UNKNOWN
    if normalized is not node:
        return hint_for(normalized, depth, limits)
    union = _union(node, depth, limits)
    if union is not None:
        return _finish(node, union)
    literal = render_primitive(node["const"]) if "const" in node else None
    if literal is not None:
        return _finish(node, _Hint(literal, True))
    enum = literal_union(node.get("enum"))
    if enum is not None:
        return _finish(node, _Hint(enum, True))
    hint = _typed(node, depth, limits)
    return hint if hint is _UNKNOWN else _finish(node, hint)


def compact_input_hint(schema: object) -> str:
    """The quick-index input hint: the rendered text when it fits 300 characters, else `unknown`."""
    node = as_mapping(schema)
    if node is None:
        return "unknown"
    if node.get("type") == "object":
        hint = _object(node, 0, INPUT_LIMITS)
    else:
        hint = hint_for(node, 0, INPUT_LIMITS)
    return hint.text if len(hint.text) <= INPUT_LIMITS.max_chars else "unknown"


def compact_output_hint(schema: object) -> str | None:
    """The quick-index output hint, or `None` (`-> ?`) unless complete and within 800 chars."""
    hint = hint_for(schema, 0, OUTPUT_LIMITS)
    if hint.complete and len(hint.text) <= OUTPUT_LIMITS.max_chars:
        return hint.text
    return None
