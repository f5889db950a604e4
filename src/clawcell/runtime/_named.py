"""The executors by name: what `CodeMode(executor="v8")` and `[limits] executor` select."""

from __future__ import annotations

from typing import Final

from ..errors import ConfigurationError
from ._executor import Executor, QuickJSExecutor

__all__ = ["EXECUTOR_NAMES", "checked_executor_name", "executor_named"]

EXECUTOR_NAMES: Final = ("quickjs", "v8")
"""The executor names `CodeMode(executor=…)` and the config file's `[limits] executor` take."""


def executor_named(name: str) -> Executor | None:
    """The executor called `name` (`"quickjs"`, `"v8"`), or `None` for an unknown name."""
    if name == "quickjs":
        return QuickJSExecutor()
    if name == "v8":
        from ._v8._executor import V8Executor  # loaded only when chosen

        return V8Executor()
    return None


def checked_executor_name(value: object, where: str) -> str:
    """`value` if it is an executor name.

    Raises:
        ConfigurationError: It is not (`where` says which setting it was).
    """
    if not isinstance(value, str) or value not in EXECUTOR_NAMES:
        raise ConfigurationError(
            f"{where} must be one of {', '.join(map(repr, EXECUTOR_NAMES))}, got {value!r}."
        )
    return value
