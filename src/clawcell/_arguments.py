"""The argument object of a model's `exec` or `wait` call, as the model API delivered it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any, cast

from .errors import InputError

__all__ = ["argument_object"]


def argument_object(name: str, arguments: object) -> Mapping[str, Any]:
    """The call's arguments as a mapping; JSON text of an object is accepted too.

    Raises:
        InputError: anything that is not an object (or the JSON text of one).
    """
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    if isinstance(arguments, Mapping):
        return cast(Mapping[str, Any], arguments)
    example = '{"runId": "cm_…"}' if name == "wait" else '{"code": "return 1"}'
    raise InputError(
        f"{name} arguments must be a JSON object such as {example}, got {type(arguments).__name__}."
    )
