"""Input-dependent output contracts: the `x-openclaw-input-discriminator` annotation (§7.4).

An output schema that is an `anyOf` union may say which branch a given input selects:

```json
{"anyOf": [A, B], "x-openclaw-input-discriminator":
    {"version": 1, "inputProperty": "kind", "mapping": {"list": 0, "status": 1}}}
```

Only a string input value found in `mapping` selects a branch; anything else keeps the whole
union. Narrowing is refused (the umbrella schema stays in force) when a bounded structural scan
finds a `$ref`, `$dynamicRef` or `$recursiveRef`, a cycle, or more than 4,096 nodes / depth 64.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from .._lazy import record_class, value_class
from ..errors import ConfigurationError
from ._json import as_list, as_mapping

__all__ = [
    "INPUT_DISCRIMINATOR",
    "DiscriminatorError",
    "OutputVariants",
    "define_output_schema",
    "narrowed_schema",
    "read_output_variants",
    "selected_branch",
]

INPUT_DISCRIMINATOR: Final = "x-openclaw-input-discriminator"
MAX_SCAN_NODES: Final = 4_096
MAX_SCAN_DEPTH: Final = 64
_REFERENCE_KEYS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
_SCHEMA_MAP_KEYS: Final = (
    "$defs",
    "definitions",
    "dependencies",
    "dependentSchemas",
    "patternProperties",
    "properties",
)
_SCHEMA_VALUE_KEYS: Final = (
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "oneOf",
    "prefixItems",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
)


class DiscriminatorError(ValueError):
    """A malformed annotation; the catalog reports it as `invalid_contract`."""


@value_class
class OutputVariants:
    """A validated annotation.

    Attributes:
        input_property: The input field whose string value selects a branch.
        mapping: Input value → branch index, in annotation order.
        variants: The `anyOf` branches.
        can_narrow: False when the reference scan forbids narrowing.
    """

    input_property: str
    mapping: tuple[tuple[str, int], ...]
    variants: tuple[Any, ...]
    can_narrow: bool

    def branch_for(self, value: object) -> int | None:
        """The branch index a (string) input value selects, or `None`."""
        if not isinstance(value, str):
            return None
        return dict(self.mapping).get(value)


def read_output_variants(schema: object) -> OutputVariants | None:
    """Read and validate the annotation; `None` when the schema carries none.

    Raises:
        DiscriminatorError: with the recorded message for each malformed shape.
    """
    node = as_mapping(schema)
    if node is None or INPUT_DISCRIMINATOR not in node:
        return None
    record = as_mapping(node[INPUT_DISCRIMINATOR]) or {}
    variants = as_list(node.get("anyOf"))
    raw_mapping = as_mapping(record.get("mapping"))
    version = record.get("version")
    prop = record.get("inputProperty")
    if isinstance(version, bool) or version != 1 or not isinstance(prop, str) or not prop:
        raise DiscriminatorError("Invalid tool output input-discriminator annotation.")
    if raw_mapping is None or not variants:
        raise DiscriminatorError("Invalid tool output input-discriminator annotation.")
    branches = tuple(variants)
    mapping = tuple(_read_mapping(raw_mapping, len(branches)))
    if not mapping:
        raise DiscriminatorError("Tool output input-discriminator mapping must not be empty.")
    return OutputVariants(
        input_property=str(record["inputProperty"]),
        mapping=mapping,
        variants=branches,
        can_narrow=can_narrow(node),
    )


def _read_mapping(raw: Mapping[Any, Any], size: int) -> list[tuple[str, int]]:
    entries: list[tuple[str, int]] = []
    for value, index in raw.items():
        if not isinstance(index, int | float) or isinstance(index, bool):
            raise DiscriminatorError("Invalid tool output input-discriminator branch.")
        if index != int(index) or not 0 <= index < size:
            raise DiscriminatorError("Invalid tool output input-discriminator branch.")
        entries.append((str(value), int(index)))
    return entries


@record_class
class _Scan:
    """The nodes a scan may still visit."""

    remaining: int = MAX_SCAN_NODES


def can_narrow(schema: object) -> bool:
    """True when no reference keyword sits in any schema position (bounded, cycle-safe)."""
    return _scan(schema, 0, _Scan(), set(), as_map=False)


def _scan(value: object, depth: int, scan: _Scan, active: set[int], *, as_map: bool) -> bool:
    scan.remaining -= 1
    if scan.remaining < 0 or depth > MAX_SCAN_DEPTH:
        return False
    if not isinstance(value, Mapping | list):
        return True
    if id(cast("object", value)) in active:
        return False
    active.add(id(cast("object", value)))
    try:
        if isinstance(value, list):
            items = cast("list[Any]", value)
            return all(_scan(item, depth + 1, scan, active, as_map=False) for item in items)
        node = cast("Mapping[str, Any]", value)
        if as_map:
            return all(
                _scan(child, depth + 1, scan, active, as_map=False) for child in node.values()
            )
        return _scan_schema(node, depth, scan, active)
    finally:
        active.discard(id(cast("object", value)))


def _scan_schema(node: Mapping[str, Any], depth: int, scan: _Scan, active: set[int]) -> bool:
    if any(key in node for key in _REFERENCE_KEYS):
        return False
    for key in _SCHEMA_MAP_KEYS:
        if key in node and not _scan(node[key], depth + 1, scan, active, as_map=True):
            return False
    for key in _SCHEMA_VALUE_KEYS:
        if key in node and not _scan(node[key], depth + 1, scan, active, as_map=False):
            return False
    return True


def selected_branch(variants: OutputVariants | None, input_value: object) -> int | None:
    """The branch an input selects: its own `inputProperty` holding a mapped string."""
    if variants is None or not variants.can_narrow:  # most tools: no mapping check per call
        return None
    record = as_mapping(input_value)
    if record is None:
        return None
    return variants.branch_for(record.get(variants.input_property))


def narrowed_schema(schema: Mapping[str, Any], branch: int) -> dict[str, Any]:
    """The umbrella schema plus `allOf: [..., {"$ref": "#/anyOf/<branch>"}]` (root kept)."""
    existing = as_list(schema.get("allOf", []))
    if existing is None:
        raise DiscriminatorError("Invalid tool output allOf constraint.")
    return {**schema, "allOf": [*existing, {"$ref": f"#/anyOf/{branch}"}]}


def define_output_schema(
    *, input_property: str, variants: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """Build a discriminated output schema from named variants.

    Equal variant schemas share one branch, so
    `define_output_schema(input_property="kind", variants={"a": S, "b": S, "c": T})` yields
    `anyOf: [S, T]` with mapping `{"a": 0, "b": 0, "c": 1}`.

    Raises:
        ConfigurationError: without an input property or without variants.
    """
    branches: list[Mapping[str, Any]] = []
    mapping: dict[str, int] = {}
    for value, schema in variants.items():
        if schema not in branches:
            branches.append(schema)
        mapping[value] = branches.index(schema)
    if not input_property or not branches:
        raise ConfigurationError(
            "Tool output variants require an input property and at least one branch; "
            f"got input_property={input_property!r} and {len(branches)} variants."
        )
    return {
        "anyOf": [dict(branch) for branch in branches],
        INPUT_DISCRIMINATOR: {"version": 1, "inputProperty": input_property, "mapping": mapping},
    }
