"""The limits of a command: the config file's `[limits]` table and `--limit name=value`.

Limits go by their camelCase names (`timeoutMs`) and are checked against `Limits`' ranges, so a
value `Limits` would replace or clamp is refused with the range. `[limits] executor` names the
executor (`"quickjs"`, the default, or `"v8"`; see docs/executors.md) and is kept as a string.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from .. import Limits
from ..errors import ConfigurationError
from ..runtime import checked_executor_name

__all__ = ["limit_names", "parse_limits", "read_limits"]


def limit_names() -> list[str]:
    """The camelCase names `--limit` and `[limits]` accept."""
    return [_camel(f.name) for f in dataclasses.fields(Limits)]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def read_limits(where: str, table: Mapping[str, Any]) -> dict[str, int | str]:
    """The `[limits]` table of the file `where`, checked: numbers by camelCase name, and the
    `executor` name."""
    valid = limit_names()
    out: dict[str, int | str] = {}
    for name, value in table.items():
        if name == "executor":  # `"quickjs"` or `"v8"`: a name, not a number
            out[name] = checked_executor_name(value, f"{where}: limit 'executor'")
            continue
        if name not in valid:
            raise ConfigurationError(
                f"{where}: unknown limit {name!r}; the limits are {', '.join(valid)}."
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigurationError(f"{where}: limit {name!r} must be an integer, got {value!r}.")
        _check_range(f"{where}: limit {name!r}", name, value)
        out[name] = value
    return out


def parse_limits(pairs: Sequence[str]) -> dict[str, int]:
    """`--limit name=value` pairs as a mapping; names are checked against `limit_names()`.

    Raises:
        ConfigurationError: A pair has no `=`, an unknown name or a non-integer value.
    """
    valid = limit_names()
    out: dict[str, int] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigurationError(f"--limit takes `name=value`, got {pair!r}.")
        if name not in valid:
            raise ConfigurationError(
                f"--limit: unknown limit {name!r}; the limits are {', '.join(valid)}."
            )
        try:
            out[name] = int(raw)
        except ValueError as exc:
            raise ConfigurationError(f"--limit {name}: {raw!r} is not an integer.") from exc
        _check_range(f"--limit {name}", name, out[name])
    return out


def _check_range(where: str, name: str, value: int) -> None:
    """Refuse a value `Limits` would silently replace by its default or clamp."""
    low, high = Limits.bounds(name)
    if not low <= value <= high:
        raise ConfigurationError(f"{where}: {value} is outside {low}–{high}; pick a value in it.")
