"""Text that can always be stored and sent: no lone surrogates.

A model API's JSON may carry `"\\ud800"`, which Python decodes to a lone surrogate that no
UTF-8 encoder accepts (SQLite, PostgreSQL, the next HTTP request). The turn loop passes every
model event, the user's text and every transcript entry through here: a surrogate pair becomes
the character it encodes and a lone surrogate becomes U+FFFD, so what is stored is what is
shown and sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from ._model import ModelResponse, ModelText, ToolCall

__all__ = ["valid_event", "valid_json", "valid_text"]

_T = TypeVar("_T")


def valid_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def valid_json(value: _T) -> _T:
    """A JSON-shaped value with `valid_text` applied to every string, keys included."""
    if isinstance(value, str):
        return cast(_T, valid_text(value))
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return cast(_T, {valid_json(k): valid_json(v) for k, v in items})
    if isinstance(value, list | tuple):
        cleaned = [valid_json(v) for v in cast(list[Any] | tuple[Any, ...], value)]
        return cast(_T, cleaned if isinstance(value, list) else tuple(cleaned))
    return value


def valid_event(event: _T) -> _T:
    """A model stream event (`ModelText`, `ModelResponse`) with valid text throughout."""
    if isinstance(event, ModelText):
        text = valid_text(event.text)
        # Most deltas are valid already: the same event, not a copy per streamed token.
        return event if text is event.text else cast(_T, dataclasses.replace(event, text=text))
    if isinstance(event, ModelResponse):
        calls = tuple(_valid_call(c) for c in event.tool_calls)
        return cast(_T, dataclasses.replace(event, text=valid_text(event.text), tool_calls=calls))
    return event


def _valid_call(call: ToolCall) -> ToolCall:
    return dataclasses.replace(
        call,
        id=valid_text(call.id),
        name=valid_text(call.name),
        arguments=valid_json(call.arguments),
    )
