"""`CodeMode`'s configuration checks: each argument validated once, in the constructor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ._limits import Limits
from .catalog import Tool
from .errors import ConfigurationError
from .store import SessionStore

__all__ = ["limits_from", "session_id_from", "store_from", "tools_from"]


def limits_from(limits: object) -> Limits:
    """A `Limits`, from `None` (defaults), a `Limits` or a mapping of settings."""
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return Limits.from_config(cast(Mapping[str, Any], limits))
    raise ConfigurationError(
        f"`limits` must be a `clawcell.Limits` or a mapping of settings, got {limits!r}."
    )


def tools_from(tools: object) -> list[Tool]:
    """The tool list, from `None`, one `Tool` or an iterable of them."""
    if tools is None:
        return []
    if isinstance(tools, Tool):
        return [tools]
    if not isinstance(tools, Iterable):
        raise ConfigurationError(f"`tools` must be an iterable of `clawcell.Tool`, got {tools!r}.")
    return list(cast(Iterable[Tool], tools))


def session_id_from(session_id: object) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError(f"`session_id` must be a non-empty string, got {session_id!r}.")
    return session_id


def store_from(store: object) -> SessionStore | None:
    if store is not None and not isinstance(store, SessionStore):
        raise ConfigurationError(
            f"`store` must be a session store such as `clawcell.SQLiteStore(path)`, got {store!r}."
        )
    return store
