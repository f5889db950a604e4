"""`Limits`: the defaults and clamps of spec §5, camelCase configuration, and the fallback of
values that are not positive integers."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from clawcell import Limits
from clawcell.errors import ConfigurationError

# field, camelCase key, default, minimum, maximum
TABLE = [
    ("timeout_ms", "timeoutMs", 10_000, 100, 60_000),
    ("memory_limit_bytes", "memoryLimitBytes", 67_108_864, 1_048_576, 1_073_741_824),
    ("max_output_bytes", "maxOutputBytes", 65_536, 1_024, 10_485_760),
    ("max_snapshot_bytes", "maxSnapshotBytes", 10_485_760, 1_024, 268_435_456),
    ("max_pending_tool_calls", "maxPendingToolCalls", 16, 1, 128),
    ("snapshot_ttl_seconds", "snapshotTtlSeconds", 900, 1, 86_400),
    ("search_default_limit", "searchDefaultLimit", 8, 1, 50),
    ("max_search_limit", "maxSearchLimit", 50, 1, 50),
]
FIELDS = [pytest.param(*row, id=row[0]) for row in TABLE]
# `search_default_limit` is also capped by `max_search_limit`: see its own test.
CLAMPED = [pytest.param(*row, id=row[0]) for row in TABLE if row[0] != "search_default_limit"]


def test_the_defaults_are_the_protocol_defaults() -> None:
    limits = Limits()
    assert {name: getattr(limits, name) for name, *_ in TABLE} == {
        name: default for name, _, default, _, _ in TABLE
    }
    assert limits.inbox_bytes == 10_485_760


@pytest.mark.parametrize(("name", "camel", "default", "low", "high"), CLAMPED)
def test_each_value_is_clamped_into_its_range(
    name: str, camel: str, default: int, low: int, high: int
) -> None:
    del camel, default
    assert getattr(Limits.from_config({name: 1}), name) == low
    assert getattr(Limits.from_config({name: high + 1}), name) == high
    assert getattr(Limits.from_config({name: 10**12}), name) == high
    middle = (low + high) // 2
    assert getattr(Limits.from_config({name: middle}), name) == middle


@pytest.mark.parametrize(("name", "camel", "default", "low", "high"), FIELDS)
def test_bounds_names_each_range_by_either_spelling(
    name: str, camel: str, default: int, low: int, high: int
) -> None:
    del default
    assert Limits.bounds(name) == Limits.bounds(camel) == (low, high)


def test_bounds_of_an_unknown_name_lists_the_limits() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Limits.bounds("timeout")
    assert caught.value.message == (
        "'timeout' is not a limit; the limits are "
        + ", ".join(row[0] for row in TABLE[:6])
        + ", max_search_limit, search_default_limit (or camelCase: "
        + ", ".join(row[1] for row in TABLE[:6])
        + ", searchDefaultLimit, maxSearchLimit)."
    )


@pytest.mark.parametrize(
    ("name", "camel", "default"), [pytest.param(*row[:3], id=row[0]) for row in TABLE]
)
@pytest.mark.parametrize(
    "raw",
    [0, -1, -(10**9), True, False, 1.5, 500.0, float("nan"), "500", None, [500]],
    ids=repr,
)
def test_values_that_are_not_positive_integers_fall_back_to_the_default(
    name: str, camel: str, default: int, raw: Any
) -> None:
    assert getattr(Limits.from_config({camel: raw}), name) == default
    assert getattr(Limits.from_config({name: raw}), name) == default


@pytest.mark.parametrize(("name", "camel", "default", "low", "high"), FIELDS)
def test_from_config_reads_camel_case_and_snake_case_keys(
    name: str, camel: str, default: int, low: int, high: int
) -> None:
    del default, high
    assert getattr(Limits.from_config({camel: low}), name) == low
    assert getattr(Limits.from_config({name: low}), name) == low


def test_from_config_ignores_keys_that_are_not_limits() -> None:
    config = {"enabled": True, "executor": "quickjs", "mode": "only", "timeoutMs": 2_000}
    assert Limits.from_config(config) == Limits(timeout_ms=2_000)


def test_the_search_default_limit_is_capped_by_the_max_search_limit() -> None:
    assert Limits(max_search_limit=5).search_default_limit == 5
    assert Limits(max_search_limit=5, search_default_limit=3).search_default_limit == 3
    assert Limits(search_default_limit=40).search_default_limit == 40
    assert Limits(max_search_limit=20, search_default_limit=40).search_default_limit == 20
    assert Limits.from_config({"searchDefaultLimit": 99}).search_default_limit == 50


def test_keyword_construction_clamps_like_configuration() -> None:
    assert Limits(max_output_bytes=100).max_output_bytes == 1_024
    assert Limits(timeout_ms=0).timeout_ms == 10_000
    assert Limits(snapshot_ttl_seconds=1).snapshot_ttl_seconds == 1


def test_the_inbox_is_the_smaller_of_memory_and_snapshot_limits() -> None:
    assert Limits(memory_limit_bytes=2_000_000).inbox_bytes == 2_000_000
    assert Limits(max_snapshot_bytes=5_000).inbox_bytes == 5_000
    assert Limits(max_snapshot_bytes=300_000_000).inbox_bytes == 67_108_864


def test_limits_are_frozen_values() -> None:
    limits, field = Limits(), "timeout_ms"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(limits, field, 5)
    assert Limits(timeout_ms=2_000) == Limits.from_config({"timeoutMs": 2_000})
