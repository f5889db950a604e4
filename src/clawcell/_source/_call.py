"""The argument object of a model's `exec` or `wait` call, as the model API delivered it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any, Literal, cast

from ..errors import InputError

__all__ = ["argument_object", "read_call"]


def argument_object(name: str, arguments: object) -> Mapping[str, Any]:
    """The call's arguments as a mapping; JSON text of an object is accepted too.

    Raises:
        InputError: anything that is not an object (or the JSON text of one).
    """
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # not JSON: refused below with the example
            arguments = _parse(arguments)
    if isinstance(arguments, Mapping):
        return cast(Mapping[str, Any], arguments)
    example = '{"runId": "cm_…"}' if name == "wait" else '{"code": "return 1"}'
    raise InputError(
        f"{name} arguments must be a JSON object such as {example}, got {type(arguments).__name__}."
    )


def _parse(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        return text  # nested past the parser's depth: certainly not an argument object


def read_call(name: str, arguments: object) -> tuple[Literal["exec", "wait"], Mapping[str, Any]]:
    """The tool a model called (`exec` or `wait`) and its argument object.

    Raises:
        InputError: arguments that are not an object, or a tool that is neither.
    """
    args = argument_object(name, arguments)
    if name == "exec":
        return "exec", args
    if name == "wait":
        return "wait", args
    raise InputError(f"unknown Code Mode tool {name!r}; the tools are `exec` and `wait`.")
