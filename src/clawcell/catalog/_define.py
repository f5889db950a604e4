"""Defining tools from typed Python callables.

`@tool` turns `async def f(city: str, days: int = 3) -> Forecast` into a `Tool` whose input
schema comes from the signature and whose output schema comes from the return annotation when
it can be derived. A single parameter annotated with a pydantic model uses that model's schema
(pydantic is the optional `clawcell[pydantic]` extra, imported only when needed).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from .._jsonvalue import model_json
from .._lazy import install_hint, value_class
from ..errors import ConfigurationError
from ._tool import ExecutionMode, Tool, ToolResult, ToolSource

__all__ = ["ToolFactory", "ToolPlugin", "define_tool_plugin", "json_schema_for", "tool"]

_PRIMITIVES: dict[object, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
    object: {},
}
_PYDANTIC_HINT = f"pydantic models need the optional extra: {install_hint('pydantic')}."


class _NoSchemaError(Exception):
    """The annotation has no JSON Schema equivalent."""


def _pydantic_model(annotation: object) -> type[Any] | None:
    if not isinstance(annotation, type):
        return None
    if not any(base.__name__ == "BaseModel" for base in annotation.__mro__):
        return None
    try:
        # Lazy: pydantic is the optional `clawcell[pydantic]` extra.
        pydantic = importlib.import_module("pydantic")
    except ImportError as exc:
        raise ConfigurationError(_PYDANTIC_HINT) from exc
    return annotation if issubclass(annotation, pydantic.BaseModel) else None


def json_schema_for(annotation: object) -> dict[str, Any]:
    """JSON Schema of a Python type annotation.

    Supports `str`, `int`, `float`, `bool`, `None`, `Any`, `list[T]`, `dict[str, T]`,
    `Literal[...]`, `T | None` and other unions, `TypedDict` classes and pydantic models.

    Raises:
        ConfigurationError: for annotations without a JSON Schema equivalent.
    """
    try:
        return _schema(annotation)
    except _NoSchemaError as exc:
        raise ConfigurationError(
            f"Cannot derive a JSON Schema from the annotation {annotation!r}; use JSON-shaped "
            "types (str, int, float, bool, list, dict, Literal, TypedDict or a pydantic model) "
            "or pass `parameters=` / `output_schema=` explicitly."
        ) from exc


def _closed(schema: Any) -> Any:
    """A pydantic output schema with every model object closed unless it says otherwise.

    pydantic leaves `additionalProperties` out for its default `extra="ignore"` (extra keys
    are dropped when the model is built, so a dumped value never has them), writes `false`
    for `extra="forbid"` and `true` for `extra="allow"`. A tool's own output model is trusted
    code, so an object with `properties` and no word on extra keys is declared closed: the
    quick index then shows its fields instead of `-> ?`.
    """
    if isinstance(schema, list):
        return [_closed(item) for item in typing.cast(list[Any], schema)]
    if not isinstance(schema, dict):
        return schema
    node = {key: _closed(value) for key, value in typing.cast(dict[str, Any], schema).items()}
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    return node


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """Nested models written in place of their `#/$defs/...` references (the quick index
    reads no references); a model that contains itself keeps its reference and `$defs`."""
    defs = typing.cast(dict[str, Any], schema.get("$defs", {}))
    recursive = False

    def walk(node: Any, active: tuple[str, ...]) -> Any:
        nonlocal recursive
        if isinstance(node, list):
            return [walk(item, active) for item in typing.cast(list[Any], node)]
        if not isinstance(node, dict):
            return node
        mapping = typing.cast(dict[str, Any], node)
        ref = mapping.get("$ref")
        if (
            isinstance(ref, str)
            and ref.startswith("#/$defs/")
            and set(mapping) <= {"$ref", "$defs"}
        ):
            name = ref.removeprefix("#/$defs/")
            if name in active or name not in defs:
                recursive = True
                return mapping
            return walk(defs[name], (*active, name))
        return {k: walk(v, active) for k, v in mapping.items() if k != "$defs"}

    inlined = walk(schema, ())
    return schema if recursive else inlined  # a self-reference keeps the schema as it was


def _schema(annotation: object, *, output: bool = False) -> dict[str, Any]:
    if annotation in _PRIMITIVES:
        return dict(_PRIMITIVES[annotation])
    model = _pydantic_model(annotation)
    if model is not None:
        schema = dict(model.model_json_schema())
        return _closed(_inlined(schema)) if output else schema
    if typing.is_typeddict(annotation):
        return _typed_dict(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema(arg, output=output) for arg in args]}
    if origin in (list, Sequence, tuple) and args:
        return {"type": "array", "items": _schema(args[0], output=output)}
    if origin in (dict, Mapping) and args and args[0] is str:
        return {"type": "object", "additionalProperties": _schema(args[1], output=output)}
    if annotation is list or annotation is tuple:
        return {"type": "array"}
    if annotation is dict:
        return {"type": "object"}
    raise _NoSchemaError(annotation)


def _typed_dict(annotation: Any) -> dict[str, Any]:
    hints = typing.get_type_hints(annotation)
    keys: frozenset[str] = getattr(annotation, "__required_keys__", frozenset[str]())
    required = sorted(keys)
    return {
        "type": "object",
        "properties": {name: _schema(hint) for name, hint in hints.items()},
        "required": required,
        "additionalProperties": False,
    }


def _signature_schema(
    fn: Callable[..., Any],
) -> tuple[dict[str, Any], type[Any] | None]:
    signature = inspect.signature(fn, eval_str=True)
    params = list(signature.parameters.values())
    if len(params) == 1 and _pydantic_model(params[0].annotation) is not None:
        model = params[0].annotation
        return dict(model.model_json_schema()), model
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ConfigurationError(
                f"Tool function {fn.__name__!r}: parameter {param.name!r} must be a plain or "
                "keyword-only parameter, because tools are called with one JSON object."
            )
        annotation = Any if param.annotation is param.empty else param.annotation
        schema = json_schema_for(annotation)
        if param.default is param.empty:
            required.append(param.name)
        elif param.default is None or isinstance(param.default, str | int | float | bool):
            schema["default"] = param.default
        properties[param.name] = schema
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema, None


def _output_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    annotation = inspect.signature(fn, eval_str=True).return_annotation
    if annotation is inspect.Signature.empty or annotation is ToolResult:
        return None
    try:
        schema = _schema(annotation, output=True)
    except _NoSchemaError:
        return None
    return schema or None


def _executor(fn: Callable[..., Any], model: type[Any] | None) -> Callable[[dict[str, Any]], Any]:
    async def execute(arguments: dict[str, Any]) -> Any:
        result = fn(model.model_validate(arguments)) if model is not None else fn(**arguments)
        if inspect.isawaitable(result):
            result = await result
        return model_json(result)

    return execute


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    execution_mode: ExecutionMode = "parallel",
    source: ToolSource = "openclaw",
    replay_safe: bool = False,
) -> Any:
    """Make a `Tool` from a typed function; usable as `@tool` or `@tool(name=...)`.

    The input schema is derived from the signature (closed object; parameters without a
    default are required) or from a single pydantic-model parameter; the output schema from the
    return annotation when derivable. Explicit `parameters=` / `output_schema=` win.
    The description defaults to the docstring.

    Example:
        ```python
        @tool
        async def forecast(city: str, days: int = 3) -> list[float]:
            "Daily high temperatures."
            ...
        ```
    """

    def build(function: Callable[..., Any]) -> Tool:
        derived, model = _signature_schema(function)
        return Tool(
            name=name or function.__name__,
            execute=_executor(function, model),
            description=description or inspect.getdoc(function) or "",
            label=label,
            parameters=dict(parameters) if parameters is not None else derived,
            output_schema=output_schema if output_schema is not None else _output_schema(function),
            execution_mode=execution_mode,
            source=source,
            replay_safe=replay_safe,
        )

    return build(fn) if fn is not None else build


ToolFactory = Callable[..., Any]


@value_class
class ToolPlugin:
    """A named group of tools, the Python shape of OpenClaw's `defineToolPlugin`."""

    id: str
    name: str
    tools: tuple[Tool, ...]
    description: str = ""


def define_tool_plugin(
    *, id: str, name: str, tools: Callable[[ToolFactory], Sequence[Tool]], description: str = ""
) -> ToolPlugin:
    """Define a plugin whose `tools` callback receives the `tool` decorator.

    Example:
        ```python
        plugin = define_tool_plugin(
            id="weather", name="Weather",
            tools=lambda tool: [tool(forecast), tool(alerts, execution_mode="sequential")],
        )
        ```

    Raises:
        ConfigurationError: when the callback returns something other than `Tool` values.
    """
    if not id:
        raise ConfigurationError(f"Tool plugin id must be a non-empty string, got {id!r}.")
    produced = tuple(tools(_plugin_tool))
    for item in produced:
        if not isinstance(item, Tool):  # pyright: ignore[reportUnnecessaryIsInstance] - untyped callbacks
            raise ConfigurationError(
                f"Tool plugin {id!r}: `tools` must return Tool values, got {item!r}."
            )
    return ToolPlugin(id=id, name=name, tools=produced, description=description)


def _plugin_tool(fn: Callable[..., Any] | Tool | None = None, **options: Any) -> Any:
    if isinstance(fn, Tool):
        return dataclasses.replace(fn, **options)
    if fn is not None and not options:
        return tool(fn)
    if fn is not None:
        return tool(fn, **options)
    return tool(**options)
