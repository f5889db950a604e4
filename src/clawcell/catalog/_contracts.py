"""Input and output contracts of one tool, compiled once (spec §7.2).

jsonschema-rs errors are translated here, once, into the recorded guest-facing messages. The
offending value is never printed: details name a path and an expectation only
(`n: must be number`, `<root>: must not have additional properties: "count"`).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, Final, cast

from .._lazy import record_class
from ..errors import ContractError
from ._discriminator import (
    DiscriminatorError,
    OutputVariants,
    narrowed_schema,
    read_output_variants,
    selected_branch,
)
from ._json import as_list, as_mapping, type_names

__all__ = ["ToolContract", "compile_schema", "format_error_details"]

MAX_DETAILS: Final = 5
MAX_DETAIL_BYTES: Final = 256
DETAIL_TRUNCATION_MARKER: Final = "…"
OUTPUT_GUIDANCE: Final = (
    "Check current state before retrying; the tool returned and side effects may already "
    "have occurred."
)

_Validator = Any  # jsonschema_rs validators share no public base class


def _with_nullable(value: object, depth: int = 0) -> Any:
    # jsonschema-rs ignores OpenAPI `nullable`; fold it into `type` as the hints do.
    if depth > 64:
        return value
    items = as_list(value)
    if items is not None:
        return [_with_nullable(item, depth + 1) for item in items]
    mapping = as_mapping(value)
    if mapping is None:
        return value
    node = {str(k): _with_nullable(v, depth + 1) for k, v in mapping.items()}
    kinds = type_names(node.get("type"))
    if node.get("nullable") is True and kinds is not None:  # a malformed list: as the hints
        node["type"] = list(dict.fromkeys([*kinds, "null"]))
    if node.get("additionalProperties") is False and "properties" not in node:
        # Without `properties` jsonschema-rs reports a bare `false` schema; AJV (the release)
        # names the unexpected keys, and so do we.
        node["properties"] = {}
    return node


COMPILED_CACHE_SIZE: Final = 256
"""How many compiled schemas a process keeps (least recently used dropped first)."""

_compiled: dict[str, _Validator] = {}
_compiled_lock = threading.Lock()


_PLAIN: Final = (str, int, float, bool, type(None))


def _is_plain(value: object, depth: int = 0) -> bool:
    """Only dicts with string keys, lists and JSON scalars, as `json.dumps` spells them apart."""
    if depth > 64:
        return False
    if type(value) is dict:
        items = cast("dict[object, object]", value).items()
        return all(type(k) is str and _is_plain(v, depth + 1) for k, v in items)
    if type(value) is list:
        return all(_is_plain(item, depth + 1) for item in cast("list[object]", value))
    return type(value) in _PLAIN


def _content_key(normalized: object) -> str | None:
    """The JSON text of a normalized schema in its own key order, or `None` when it is not
    plain JSON (a tuple, a set, a NaN: compiled every time, as before).

    Equal texts compile to validators that behave alike (key order is kept, so even the
    order of reported errors is the same); `1` and `1.0`, `true` and `1` differ.
    """
    if not _is_plain(normalized):
        return None
    try:
        return json.dumps(normalized, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:  # NaN or an infinity
        return None


def compile_schema(schema: Mapping[str, Any]) -> _Validator:
    """Compile a schema (draft detected from `$schema`, 2020-12 by default).

    Compiled validators are kept per process by the schema's content, so every `CodeMode`
    (and every tenant) naming the same schema shares one: a validator holds nothing but
    the schema, and a later edit of the schema object changes its key.

    Raises:
        ValueError: with a readable cause when the schema is not a valid JSON Schema.
    """
    normalized = _with_nullable(schema)
    key = _content_key(normalized)
    if key is not None:
        with _compiled_lock:
            validator = _compiled.pop(key, None)
            if validator is not None:
                _compiled[key] = validator  # most recently used last
                return validator
    import jsonschema_rs  # a runtime without typed tools never loads it

    try:
        validator = jsonschema_rs.validator_for(normalized)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        cause = str(exc).split("\n", 1)[0]
        raise ValueError(cause) from exc
    if key is not None:
        with _compiled_lock:
            _compiled[key] = validator
            while len(_compiled) > COMPILED_CACHE_SIZE:
                del _compiled[next(iter(_compiled))]
    return validator


def _path(parts: Iterable[str | int]) -> str:
    text = ".".join(str(part) for part in parts)
    return text or "<root>"


_SIMPLE: Final[dict[str, str]] = {
    "anyOf": "must match a schema in anyOf",
    "oneOfNotValid": "must match exactly one schema in oneOf",
    "oneOfMultipleValid": "must match exactly one schema in oneOf",
    "const": "must be equal to constant",
    "enum": "must be equal to one of the allowed values",
    "not": "must not be valid",
    "falseSchema": "boolean schema is false",
    "uniqueItems": "must not have duplicate items",
    "contains": "must contain a valid item",
    "propertyNames": "property name must be valid",
    "unevaluatedItems": "must not have unevaluated items",
    "unevaluatedProperties": "must not have unevaluated properties",
}
_LIMITS: Final[dict[str, str]] = {
    "minimum": "must be >= {}",
    "maximum": "must be <= {}",
    "exclusiveMinimum": "must be > {}",
    "exclusiveMaximum": "must be < {}",
    "multipleOf": "must be multiple of {}",
    "minLength": "must not have fewer than {} characters",
    "maxLength": "must not have more than {} characters",
    "minItems": "must not have fewer than {} items",
    "maxItems": "must not have more than {} items",
    "minProperties": "must not have fewer than {} properties",
    "maxProperties": "must not have more than {} properties",
}


def _message(kind: str, params: Mapping[str, Any]) -> str:
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in _LIMITS:
        return _LIMITS[kind].format(params.get("limit", "?"))
    if kind == "type":
        kinds = params.get("types", params.get("type", []))
        names = [kinds] if isinstance(kinds, str) else [str(k) for k in as_list(kinds) or []]
        return f"must be {','.join(names)}"
    if kind == "required":
        return f"must have required property '{params.get('property')}'"
    if kind == "additionalProperties":
        names = ", ".join(f'"{name}"' for name in params.get("unexpected", []))
        return f"must not have additional properties: {names}"
    if kind == "pattern":
        return f'must match pattern "{params.get("pattern")}"'
    if kind == "format":
        return f'must match format "{params.get("format")}"'
    return "is invalid"


def _clip(detail: str) -> str:
    encoded = detail.encode("utf-8")
    if len(encoded) <= MAX_DETAIL_BYTES:
        return detail
    return encoded[:MAX_DETAIL_BYTES].decode("utf-8", "ignore") + DETAIL_TRUNCATION_MARKER


def format_error_details(errors: Iterable[Any]) -> list[str]:
    """Up to five `path: expectation` lines, `required` problems first (as AJV orders them)."""
    found: list[tuple[int, str]] = []
    for error in errors:
        kind = str(error.kind.name)
        params: Mapping[str, Any] = error.kind.as_dict()
        parts: list[str | int] = list(error.instance_path)
        if kind == "required":
            parts.append(str(params.get("property")))
        found.append((0 if kind == "required" else 1, f"{_path(parts)}: {_message(kind, params)}"))
        if len(found) >= 4 * MAX_DETAILS:
            break
    found.sort(key=lambda item: item[0])
    return [_clip(detail) for _, detail in dict.fromkeys(found)][:MAX_DETAILS]


def _invalid(name: str, which: str, cause: str) -> ContractError:
    return ContractError(
        f'Tool "{name}" has an invalid {which}. | {cause}', code="invalid_contract"
    )


@record_class
class ToolContract:
    """Compiled contracts of one trusted tool; build once, check on every call.

    Attributes:
        name: The callable name used in messages.
        input_hint: Compact input hint appended to `input_contract` messages.
    """

    name: str
    parameters: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    input_hint: str = "unknown"
    variants: OutputVariants | None = field(init=False, default=None)
    _input: _Validator = field(init=False, default=None)
    _output: _Validator = field(init=False, default=None)
    _branches: dict[int, _Validator] = field(init=False, default_factory=lambda: {})
    _problem: ContractError | None = field(init=False, default=None)
    _any_object: bool = field(init=False, default=False)
    """The parameter schema accepts every object (`{}` or `{"type": "object"}`): an input
    that is a `dict` is valid without asking the validator."""

    def __post_init__(self) -> None:
        if self.parameters is not None:
            self._input = self._compile(self.parameters, "inputSchema")
            self._any_object = self._input is not None and _accepts_any_object(self.parameters)
        if self.output_schema is not None and self._problem is None:
            self._output = self._compile(self.output_schema, "outputSchema")
            try:
                self.variants = read_output_variants(self.output_schema)
            except DiscriminatorError as exc:
                self._problem = _invalid(self.name, "outputSchema", str(exc))

    def _compile(self, schema: Mapping[str, Any], which: str) -> _Validator:
        try:
            return compile_schema(schema)
        except ValueError as exc:
            self._problem = _invalid(self.name, which, str(exc))
            return None

    @property
    def valid(self) -> bool:
        """False when a schema failed to compile (`ensure_valid` raises then)."""
        return self._problem is None

    def ensure_valid(self) -> None:
        """Raise the `invalid_contract` error, if any, before the tool runs."""
        if self._problem is not None:
            raise self._problem

    @property
    def passes_every_object(self) -> bool:
        """Whether `check_input` passes every `dict` without asking the validator (no
        parameter schema, or one that accepts every object)."""
        return self._input is None or self._any_object

    def check_input(self, value: object) -> None:
        """Raise `input_contract` when `value` breaks the parameter schema."""
        if self._input is None or (self._any_object and type(value) is dict):
            return
        if self._input.is_valid(value):
            return
        details = "; ".join(format_error_details(self._input.iter_errors(value)))
        hint = _did_you_mean(value, self.parameters)
        raise ContractError(
            f'Invalid arguments for tool "{self.name}": {details}.{hint} '
            f"Expected input: {self.input_hint}.",
            code="input_contract",
        )

    def accepts_empty_input(self) -> bool:
        """True when a compiled input schema accepts `{}` (never for broken schemas)."""
        return self._input is not None and bool(self._input.is_valid({}))

    def branch(self, input_value: object) -> int | None:
        """The output branch this input selects, or `None` for the whole union."""
        return selected_branch(self.variants, input_value)

    @property
    def checks_output(self) -> bool:
        """Whether `check_output` checks anything (the tool declares a usable output schema)."""
        return self._output is not None

    def check_output(self, value: object, branches: Iterable[int | None]) -> None:
        """Raise `output_contract` unless `value` matches every selected branch."""
        if self._output is None:
            return
        for branch in dict.fromkeys(branches):
            validator = self._validator_for(branch)
            if not validator.is_valid(value):
                details = "; ".join(format_error_details(validator.iter_errors(value)))
                raise ContractError(
                    f'Tool "{self.name}" returned details that do not match its declared '
                    f"outputSchema. {OUTPUT_GUIDANCE} Validation: {details}.",
                    code="output_contract",
                )

    def _validator_for(self, branch: int | None) -> _Validator:
        if branch is None or self.output_schema is None:
            return self._output
        if branch not in self._branches:
            try:
                self._branches[branch] = compile_schema(narrowed_schema(self.output_schema, branch))
            except (ValueError, DiscriminatorError) as exc:
                raise _invalid(self.name, "outputSchema", str(exc)) from exc
        return self._branches[branch]


def _accepts_any_object(schema: Mapping[str, Any]) -> bool:
    """`{}` or `{"type": "object"}` (in every draft: no keyword narrows an object)."""
    return len(schema) == 0 or (len(schema) == 1 and schema.get("type") == "object")


def _distance(left: str, right: str) -> int:
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, 1):
        current = [i]
        for j, b in enumerate(right, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def _nearest(unexpected: str, names: list[str]) -> str | None:
    allowed = min(3, max(1, math.ceil(len(unexpected) / 3)))
    scored = sorted((_distance(unexpected, name), name) for name in names)
    return next((name for distance, name in scored if distance <= allowed), None)


def _did_you_mean(value: object, parameters: Mapping[str, Any] | None) -> str:
    if not isinstance(value, Mapping) or parameters is None:
        return ""
    properties = as_mapping(parameters.get("properties"))
    if properties is None or parameters.get("additionalProperties") is not False:
        return ""
    known = [str(name) for name in properties]
    extra = [str(key) for key in cast("Mapping[str, Any]", value) if key not in properties]
    found = list(dict.fromkeys(n for n in (_nearest(key, known) for key in extra) if n))[:3]
    return f" Did you mean: {', '.join(found)}?" if found else ""
