"""Code Mode limits: defaults and clamps of the protocol (spec §5).

Every numeric setting must be a positive integer; anything else falls back to the default,
then the value is clamped into its range. This mirrors the original's configuration reader,
so `Limits(max_output_bytes=100)` behaves as 1,024 bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from ._lazy import value_class
from .errors import ConfigurationError

__all__ = ["Limits"]

_RANGES: Final[dict[str, tuple[int, int, int]]] = {
    # field: (default, minimum, maximum)
    "timeout_ms": (10_000, 100, 60_000),
    "memory_limit_bytes": (67_108_864, 1_048_576, 1_073_741_824),
    "max_output_bytes": (65_536, 1_024, 10_485_760),
    "max_snapshot_bytes": (10_485_760, 1_024, 268_435_456),
    "max_pending_tool_calls": (16, 1, 128),
    "snapshot_ttl_seconds": (900, 1, 86_400),
    "max_search_limit": (50, 1, 50),
    "search_default_limit": (8, 1, 50),
}

_CAMEL: Final[dict[str, str]] = {
    "timeoutMs": "timeout_ms",
    "memoryLimitBytes": "memory_limit_bytes",
    "maxOutputBytes": "max_output_bytes",
    "maxSnapshotBytes": "max_snapshot_bytes",
    "maxPendingToolCalls": "max_pending_tool_calls",
    "snapshotTtlSeconds": "snapshot_ttl_seconds",
    "searchDefaultLimit": "search_default_limit",
    "maxSearchLimit": "max_search_limit",
}


def _coerce(name: str, raw: object) -> int:
    default, low, high = _RANGES[name]
    value = raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else default
    return min(max(value, low), high)


@value_class
class Limits:
    """Per-call budgets of a Code Mode runtime.

    Values that are not positive integers fall back to their default, then every value is
    clamped into the protocol's range (spec §5). `search_default_limit` is further capped by
    `max_search_limit`.

    Attributes:
        timeout_ms: Wall-clock budget of each `exec` and each `wait` call (100–60,000).
        memory_limit_bytes: Guest heap limit (1 MiB–1 GiB).
        max_output_bytes: Shared UTF-8 budget for output, value and error (1 KiB–10 MiB).
        max_snapshot_bytes: Largest parked-cell snapshot; also the program-data inbox and the
            saved-results allowance together with `memory_limit_bytes` (1 KiB–256 MiB).
        max_pending_tool_calls: Host calls in flight per cell (1–128).
        snapshot_ttl_seconds: Idle lifetime of a parked cell (1 s–1 day).
        search_default_limit: Default `catalog.search` result count.
        max_search_limit: Cap for requested `catalog.search` limits (1–50).
    """

    timeout_ms: int = 10_000
    memory_limit_bytes: int = 67_108_864
    max_output_bytes: int = 65_536
    max_snapshot_bytes: int = 10_485_760
    max_pending_tool_calls: int = 16
    snapshot_ttl_seconds: int = 900
    search_default_limit: int = 8
    max_search_limit: int = 50

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            object.__setattr__(self, field.name, _coerce(field.name, getattr(self, field.name)))
        if self.search_default_limit > self.max_search_limit:
            object.__setattr__(self, "search_default_limit", self.max_search_limit)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Limits:
        """Build limits from a `tools.codeMode`-style mapping with camelCase keys.

        Unknown keys (such as `executor` or `enabled`) are ignored; snake_case keys work too.
        """
        known = {field.name for field in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in config.items():
            name = _CAMEL.get(key, key)
            if name in known:
                values[name] = value
        return cls(**values)

    @staticmethod
    def bounds(name: str) -> tuple[int, int]:
        """The smallest and largest value the limit `name` keeps (snake_case or camelCase);
        a value outside is clamped, so a configuration reader can refuse it instead.

        >>> Limits.bounds("timeoutMs")
        (100, 60000)

        Raises:
            ConfigurationError: `name` is not a limit.
        """
        field = _CAMEL.get(name, name)
        if field not in _RANGES:
            raise ConfigurationError(
                f"{name!r} is not a limit; the limits are {', '.join(_RANGES)} "
                f"(or camelCase: {', '.join(_CAMEL)})."
            )
        _, low, high = _RANGES[field]
        return low, high

    @property
    def inbox_bytes(self) -> int:
        """Program-data inbox and saved-results allowance: `min(memory, snapshot)` bytes."""
        return min(self.memory_limit_bytes, self.max_snapshot_bytes)
