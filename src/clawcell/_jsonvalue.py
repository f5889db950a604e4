"""JSON values from Python objects: the one normaliser, with one policy.

Everything a Python tool, hook or host service hands to the guest passes through `json_value`
(a detached JSON copy) or `json_text` (its compact text). The policy, the same everywhere:

* `None`, `str`, `bool`, `int` and finite `float`s are kept; `NaN` and `±Infinity` become
  `null`, as `JSON.stringify` does;
* mappings become objects (`str` keys; `int` keys are written as their decimal text, as
  Python's `json` does); lists and tuples become arrays;
* pydantic models (anything with `model_dump`) are dumped with `mode="json"`; exceptions
  become `{name, message}` (as the original does for an `Error` it cannot stringify);
* anything else — bytes, sets, dates, arbitrary objects, values nested deeper than
  `MAX_DEPTH` (cycles included) — is refused with a `ToolError` that names the type and the
  path (`$.rows[3].when`), never turned into its `repr`.

JSON text the other way — step reports and request arguments the guest wrote with
`JSON.stringify`, parsed on every bridge round trip — goes through `parse_json_text`: the C
scanner called directly (a third of `json.loads`'s cost on short text, which passes through
two Python frames and two whitespace matches), with `json.loads` itself as the fallback for
anything the compact fast path does not take, so results and errors are exactly its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring_ascii
from json.scanner import make_scanner
from typing import Any, Final, cast

from .errors import ToolError

__all__ = [
    "MAX_DEPTH",
    "compact_chunks",
    "is_model",
    "json_text",
    "json_value",
    "model_json",
    "parse_json_text",
    "scan_json",
]

MAX_DEPTH: Final = 256
_SCALARS: Final = (str, int, float, bool, type(None))
_scan: Final = make_scanner(cast(Any, json.JSONDecoder()))
scan_json: Final[Callable[[str, int], tuple[Any, int]]] = _scan
"""The C scanner `parse_json_text` calls, for the few places that parse on every tool call
and spare its frame: `scan_json(text, 0)` is `(value, end)` of the value at the start of
compact `text`, or raises `StopIteration` (or `ValueError`). Anything but a result with
`end == len(text)` must go to `parse_json_text`, whose results and errors are `json.loads`'s."""
_COMPACT: Final = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


def _c_compact() -> Callable[[Any, int], tuple[str, ...]] | None:
    """The C encoder `json.dumps` itself builds on every call with `_COMPACT`'s options."""
    try:
        from _json import make_encoder
    except ImportError:  # an interpreter without the C accelerator
        return None
    return make_encoder(
        None, _COMPACT.default, encode_basestring_ascii, None, ":", ",", False, False, False
    )


_compact_c: Final = _c_compact()
compact_chunks: Final[Callable[[Any, int], tuple[str, ...]] | None] = _compact_c
"""The C encoder `json_text` calls (`None` without the accelerator), for the one place that
encodes on every tool call and spares its frame: `"".join(compact_chunks(value, 0))` is
`json_text(value)` for a value it takes; a `TypeError`, `ValueError` or `RecursionError`
from it means `json_text` must be asked (its policy normalises what the encoder refuses)."""


def _compact(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"), allow_nan=False, check_circular=False)`,
    without building an encoder per call (a reply is encoded on every bridge round trip)."""
    if _compact_c is None:
        return _COMPACT.encode(value)
    return "".join(_compact_c(value, 0))


def parse_json_text(text: str) -> Any:
    """`json.loads(text)`, faster for compact text (what `JSON.stringify` writes).

    Raises:
        json.JSONDecodeError: `text` is not one JSON value.
        RecursionError: it nests deeper than the interpreter's recursion limit.
    """
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)  # padded text parses there; anything else raises its error
    if end != len(text):
        return json.loads(text)
    return value


def json_value(value: Any) -> Any:
    """A detached, JSON-shaped copy of `value` (see the module docstring for the policy).

    Raises:
        ToolError: `value` holds something that is not JSON.
    """
    if value is None or isinstance(value, str | bool):
        return value
    if type(value) is dict and len(value) <= 16:  # pyright: ignore[reportUnknownArgumentType]
        # A small flat object with string keys and finite scalar values (most tool inputs
        # and many results) is copied directly, without a JSON round trip; inline, as it
        # runs on every call.
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        for key, item in items.items():
            kind = type(item)  # pyright: ignore[reportUnknownVariableType]
            if type(key) is not str or kind not in _SCALARS:
                break
            if kind is float and not math.isfinite(item):
                break
        else:
            return dict(items)
    try:
        return json.loads(json.dumps(value, allow_nan=False, check_circular=False))
    except (TypeError, ValueError, RecursionError):
        return _normalise(value, "$", 0)


def json_text(value: Any) -> str:
    """Compact JSON text of `value` under the same policy (lone surrogates escaped)."""
    try:  # `_compact(value)`, inline: once per tool call
        return "".join(_compact_c(value, 0)) if _compact_c is not None else _compact(value)
    except (TypeError, ValueError, RecursionError):
        return _compact(_normalise(value, "$", 0))


def is_model(value: object) -> bool:
    """Whether `value` is a pydantic model instance.

    Duck-typed (a callable `model_dump`, and not a class) so that pydantic stays optional;
    this is the one place clawcell decides it.
    """
    return callable(getattr(value, "model_dump", None)) and not isinstance(value, type)


def model_json(value: Any, *, by_alias: bool = False, exclude_none: bool = False) -> Any:
    """The JSON dump (`mode="json"`) of a model for which `is_model` holds; anything else is
    returned as it is."""
    if not is_model(value):
        return value
    options = {"by_alias": by_alias, "exclude_none": exclude_none}
    return value.model_dump(mode="json", **{k: v for k, v in options.items() if v})


def _normalise(value: Any, path: str, depth: int) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        raise ToolError(
            f"value at {path} is nested deeper than {MAX_DEPTH} levels (or is cyclic); "
            "return flatter JSON data"
        )
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return {_key(k, path): _normalise(v, f"{path}.{k}", depth + 1) for k, v in items}
    if isinstance(value, list | tuple):
        items = cast("list[Any] | tuple[Any, ...]", value)
        return [_normalise(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(items)]
    if is_model(value):
        return _normalise(model_json(value), path, depth + 1)
    if isinstance(value, BaseException):
        return {"name": type(value).__name__, "message": str(value)}
    raise ToolError(
        f"value at {path} is not JSON: {type(value).__name__!r}; return dicts, lists, "
        "strings, numbers, booleans or None"
    )


def _key(key: object, path: str) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    raise ToolError(
        f"object key {key!r} at {path} is not a string; JSON object keys must be strings"
    )
