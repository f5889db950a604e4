"""`tools/<callableName>.d.ts`: the per-tool declaration file (spec §8.4).

Generated on `API.read` from the same effective schemas `describe()` exposes. With a narrowable
input discriminator the file declares one output type per branch, a value → branch table and a
conditional overload; beyond the shared 32,768-character allowance, or when narrowing is not
allowed, it falls back to the umbrella union with a comment saying why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._discriminator import DiscriminatorError, OutputVariants, read_output_variants
from .._json import as_list, as_mapping
from ._declarations import schema_declaration

__all__ = ["tool_declaration_file"]

MAX_DECLARATION_CHARS: Final = 32_768
HEADER: Final = (
    "// Generated from the effective tool contract. Unsupported shapes stay unknown.",
    "// JSON Schema validation owns constraints; describe() exposes the original schema.",
    "// Values enter the guest intact or reject when program-data admission is full.",
)
OVER_BUDGET: Final = (
    "// Action declarations exceed the shared output allowance; using the complete union."
)
NOT_NARROWABLE: Final = (
    "// Reference-bearing or structurally complex schemas retain the complete output union."
)
_OBJECT_KEYS: Final = frozenset(("type", "properties", "required", "additionalProperties"))


def tool_declaration_file(
    callable_name: str,
    *,
    trusted: bool,
    parameters: Mapping[str, Any] | None,
    output_schema: Mapping[str, Any] | None,
    optional_input: bool,
) -> str:
    """The content of `tools/<callable_name>.d.ts`.

    Args:
        callable_name: The guest global.
        trusted: Only `openclaw` tools get real types; others are `unknown`.
        parameters: The effective input schema.
        output_schema: The declared output schema.
        optional_input: The input schema accepts `{}`, so `input?` may be advertised.
    """
    input_type = schema_declaration(parameters, comments=True) if trusted else "unknown"
    variants = _variants(output_schema) if trusted else None
    lines: list[str] | None = None
    if variants is not None and variants.can_narrow and output_schema is not None:
        lines = _variant_lines(callable_name, input_type, optional_input, output_schema, variants)
    if lines is None:
        output_type = schema_declaration(output_schema) if trusted else "unknown"
        note = [] if variants is None else [OVER_BUDGET if variants.can_narrow else NOT_NARROWABLE]
        optional = "?" if optional_input and trusted else ""
        decl = f"declare function {callable_name}(input{optional}: {input_type}): "
        lines = [*note, f"{decl}Promise<{output_type}>;"]
    return "\n".join([*HEADER, *lines])


def _variants(schema: Mapping[str, Any] | None) -> OutputVariants | None:
    try:
        return read_output_variants(schema)
    except DiscriminatorError:
        return None


@dataclass
class _Budget:
    lines: list[str] = field(default_factory=list[str])
    used: int = 0

    def append(self, line: str, exempt: int = 0) -> bool:
        self.used += len(line) + 1 - exempt
        if self.used > MAX_DECLARATION_CHARS:
            return False
        self.lines.append(line)
        return True


def _closed_object(schema: object) -> tuple[Mapping[str, Any], frozenset[str]] | None:
    node = as_mapping(schema)
    if node is None or not set(node) <= _OBJECT_KEYS:
        return None
    properties, required = as_mapping(node.get("properties")), as_list(node.get("required", []))
    if node.get("type") != "object" or node.get("additionalProperties") is not False:
        return None
    if properties is None or required is None:
        return None
    names = frozenset(str(key) for key in required)
    return (properties, names) if names <= set(properties) else None


def _factored(
    name_of_base: str,
    base: tuple[Mapping[str, Any], frozenset[str]],
    shape: tuple[Mapping[str, Any], frozenset[str]],
    root: Mapping[str, Any],
) -> str | None:
    (base_props, base_required), (props, required) = base, shape
    for key, value in base_props.items():
        if key not in props or (key in base_required) != (key in required) or props[key] != value:
            return None
    extra = {key: value for key, value in props.items() if key not in base_props}
    if not extra:
        return name_of_base
    extension = schema_declaration(
        {
            **root,
            "anyOf": [
                {
                    "type": "object",
                    "properties": extra,
                    "required": [key for key in required if key in extra],
                    "additionalProperties": False,
                }
            ],
        }
    )
    return None if extension == "unknown" else f"{name_of_base} & {extension}"


def _variant_lines(
    callable_name: str,
    input_type: str,
    optional_input: bool,
    root: Mapping[str, Any],
    variants: OutputVariants,
) -> list[str] | None:
    prefix = f"__OpenClaw_{callable_name}_"
    input_name, mapping_name = f"{prefix}Input", f"{prefix}OutputByInput"
    budget = _Budget()
    if not budget.append(f"type {input_name} = {input_type};", exempt=len(input_type)):
        return None
    names: list[str] = []
    shapes: list[tuple[str, tuple[Mapping[str, Any], frozenset[str]]]] = []
    for index, branch in enumerate(variants.variants):
        name = f"{prefix}Output{index}"
        output = schema_declaration({**root, "anyOf": [branch]})
        shape = None if output == "unknown" else _closed_object(branch)
        if shape is not None:
            for base_name, base in shapes:
                factored = _factored(base_name, base, shape, root)
                if factored is not None and len(factored) < len(output):
                    output = factored
            shapes.append((name, shape))
        if not budget.append(f"type {name} = {output};"):
            return None
        names.append(name)
    rows = [
        f"{json.dumps(value, ensure_ascii=False)}: {names[i]};" for value, i in variants.mapping
    ]
    if not all(budget.append(line) for line in [f"type {mapping_name} = {{", *rows, "};"]):
        return None
    union = " | ".join(names)
    selector = json.dumps(variants.input_property, ensure_ascii=False)
    generic = (
        f"declare function {callable_name}<const Input extends {input_name}>(input: Input): "
        f"Promise<Input extends {{ {selector}: infer Value }} ? Value extends keyof "
        f"{mapping_name} ? {mapping_name}[Value] : {union} : {union}>;"
    )
    optional = "?" if optional_input else ""
    fallback = f"declare function {callable_name}(input{optional}: {input_name}): Promise<{union}>;"
    if not budget.append(generic) or not budget.append(fallback):
        return None
    return budget.lines
