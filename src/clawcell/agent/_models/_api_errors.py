"""Reading the message and the error type out of a model SDK's error (OpenAI and Anthropic
alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["api_error_type", "api_message"]


def api_message(exc: Any) -> str:
    """The message the API answered with (`{"error": {"message": ...}}`), else the SDK's."""
    body = cast(object, exc.body)
    if isinstance(body, Mapping):
        fields = cast(Mapping[str, object], body)
        error = fields.get("error", fields)
        if isinstance(error, Mapping):
            message = cast(Mapping[str, object], error).get("message")
            if isinstance(message, str):
                return message
    return str(exc.message)


def api_error_type(exc: Any) -> str | None:
    """The `error.type` an API answered with (`overloaded_error`, ...), when it said one."""
    body = cast(object, getattr(exc, "body", None))
    if isinstance(body, Mapping):
        fields = cast(Mapping[str, object], body)
        error = fields.get("error", fields)
        if isinstance(error, Mapping):
            kind = cast(Mapping[str, object], error).get("type")
            if isinstance(kind, str) and kind:
                return kind
    return None
