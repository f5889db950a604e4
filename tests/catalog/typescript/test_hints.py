"""Compact input/output hints (spec §8.2, test-derived table)."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell.catalog import compact_input_hint, compact_output_hint


def closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


STRING = {"type": "string"}
LITERALS = ["env", "agent", "defaults", "model", "provider", "implicit", "session", "session-key"]


def variants(count: int) -> dict[str, Any]:
    return {
        "anyOf": [
            closed({"kind": {"const": f"variant-{i}"}, "value": {"type": "number"}})
            for i in range(count)
        ]
    }


OUTPUT_CASES: list[tuple[str, Any, str | None]] = [
    ("open object", {"type": "object", "properties": {"value": STRING}}, None),
    ("closed object", closed({"ok": {"type": "boolean"}}), "{ ok: boolean }"),
    (
        "nested literal union",
        closed(
            {
                "conversations": {
                    "type": "array",
                    "items": closed(
                        {
                            "conversationRef": STRING,
                            "kind": {"enum": ["direct", "group", "channel"]},
                        }
                    ),
                }
            }
        ),
        "{ conversations: Array<{ conversationRef: string; "
        'kind: "direct" | "group" | "channel" }> }',
    ),
    ("8 literals", {"enum": LITERALS}, " | ".join(f'"{v}"' for v in LITERALS)),
    ("9 literals", {"enum": [*LITERALS, "extra"]}, None),
    (
        "5 structural variants",
        variants(5),
        " | ".join(f'{{ kind: "variant-{i}"; value: number }}' for i in range(5)),
    ),
    ("6 structural variants", variants(6), None),
    (
        "unknown leaves",
        closed(
            {
                "count": {"type": "number"},
                "messages": {"type": "array", "items": {}},
                "payload": {},
            },
            ["count", "messages"],
        ),
        "{ count: number; messages: Array<unknown>; payload?: unknown }",
    ),
    ("nullable string", {"type": "string", "nullable": True}, "string | null"),
    ("nullable object", {**closed({"id": STRING}), "nullable": True}, "{ id: string } | null"),
    ("enum wins over nullable", {"type": "string", "nullable": True, "enum": ["ready"]}, '"ready"'),
    (
        "nullable number items",
        closed(
            {
                "values": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "nullable": True},
                }
            }
        ),
        "{ values: Array<number | null> }",
    ),
    ("32 fields", closed({f"field_{i:02}": STRING for i in range(32)}), None),
    ("long key", closed({"k" * 10_000: STRING}), None),
    ("$ref", {"$ref": "#/$defs/result"}, None),
    ("empty anyOf", {"anyOf": []}, None),
    ("patternProperties", {"type": "object", "patternProperties": {".*": STRING}}, None),
    ("constraint without type", {"minLength": 1}, None),
    ("empty schema", {}, "unknown"),
]


@pytest.mark.parametrize(
    ("schema", "hint"), [c[1:] for c in OUTPUT_CASES], ids=[c[0] for c in OUTPUT_CASES]
)
def test_output_hint_is_shown_only_when_complete(schema: Any, hint: str | None) -> None:
    assert compact_output_hint(schema) == hint


INPUT_CASES: list[tuple[str, Any, str]] = [
    ("open object", {"type": "object", "properties": {"value": STRING}}, "{ value?: string }"),
    ("open without properties", {"type": "object", "additionalProperties": True}, "{ ... }"),
    ("closed empty", {"type": "object", "properties": {}, "additionalProperties": False}, "{}"),
    (
        "required first",
        {
            "type": "object",
            "properties": {
                "optional": {"type": "boolean"},
                "beta": {"type": "number"},
                "alpha": STRING,
            },
            "required": ["beta", "alpha"],
        },
        "{ alpha: string; beta: number; optional?: boolean }",
    ),
    (
        "numeric comments",
        closed(
            {
                "n": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 10,
                    "exclusiveMinimum": 1,
                    "exclusiveMaximum": 9,
                }
            }
        ),
        "{ n: number /* integer, >= 0, <= 10, > 1, < 9 */ }",
    ),
    (
        "nullable number items",
        closed(
            {
                "values": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "nullable": True},
                }
            }
        ),
        "{ values: Array<number /* >= 0 */ | null> }",
    ),
    ("malformed bound", closed({"n": {"type": "number", "minimum": "1"}}), "{ n: unknown }"),
    ("long key", closed({"k" * 10_000: STRING}), "{ ... }"),
    ("not a schema", "nope", "unknown"),
]


@pytest.mark.parametrize(
    ("schema", "hint"), [c[1:] for c in INPUT_CASES], ids=[c[0] for c in INPUT_CASES]
)
def test_input_hint_renders_within_its_limits(schema: Any, hint: str) -> None:
    assert compact_input_hint(schema) == hint


def test_thirty_two_input_fields_are_elided_with_dots() -> None:
    hint = compact_input_hint(closed({f"field_{i:02}": STRING for i in range(32)}))
    assert hint.endswith("; ... }")
    assert len(hint) <= 300


def test_an_input_hint_over_three_hundred_characters_becomes_unknown() -> None:
    schema = {"type": "string", "enum": ["x" * 40, "y" * 40]}
    wide = {"anyOf": [closed({f"p{i}": schema}) for i in range(4)]}
    assert compact_input_hint(wide) in ("unknown", compact_input_hint(wide)[:300])
    assert len(compact_input_hint(wide)) <= 300
