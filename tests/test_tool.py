"""`Tool`: configuration errors with clear messages, and catalog ids per source."""

from __future__ import annotations

from typing import Any, cast

import pytest

from clawcell import ClawcellError, ConfigurationError, Tool


async def noop(_: dict[str, Any]) -> Any:
    return None


def bad(**fields: Any) -> str:
    """The message of the `ConfigurationError` a `Tool` with these fields raises."""
    options: dict[str, Any] = {"name": "lookup", "execute": noop, **fields}
    with pytest.raises(ConfigurationError) as caught:
        Tool(**options)
    assert isinstance(caught.value, ClawcellError)
    assert isinstance(caught.value, ValueError)
    assert caught.value.code == "invalid_config"
    return caught.value.message


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        pytest.param("", "''", id="empty"),
        pytest.param("x" * 129, repr("x" * 129), id="too_long"),
        pytest.param("tab\there", "'tab\\there'", id="control_character"),
        pytest.param("nul\x00", "'nul\\x00'", id="nul"),
        pytest.param(5, "5", id="not_a_string"),
        pytest.param(None, "None", id="none"),
    ],
)
def test_a_bad_name_is_a_configuration_error_showing_the_name(name: object, shown: str) -> None:
    assert bad(name=name) == f"Tool name must be 1-128 printable characters, got {shown}."


def test_names_of_1_to_128_printable_characters_are_accepted() -> None:
    for name in ("a", "x" * 128, "weather.lookup v2", "ünïcode-名前"):
        assert Tool(name=name, execute=noop).name == name


def test_execute_must_be_callable() -> None:
    assert bad(execute="not callable") == "Tool 'lookup': `execute` must be an async callable."


def test_a_plain_function_is_accepted_as_execute() -> None:
    assert Tool(name="sync", execute=lambda _: 1).name == "sync"


def test_execution_mode_must_be_parallel_or_sequential() -> None:
    assert bad(execution_mode="serial") == (
        "Tool 'lookup': `execution_mode` must be 'parallel' or 'sequential', got 'serial'."
    )


def test_source_must_be_a_known_trust_source() -> None:
    assert bad(source="plugin") == (
        "Tool 'lookup': `source` must be 'openclaw', 'client' or 'mcp', got 'plugin'."
    )


def test_parameters_must_be_a_mapping() -> None:
    message = "Tool 'lookup': `parameters` must be a JSON Schema dict."
    assert bad(parameters=cast(Any, ["not", "a", "schema"])) == message
    assert bad(parameters=cast(Any, None)) == message


@pytest.mark.parametrize(
    ("source", "catalog_id"),
    [
        ("openclaw", "openclaw:core:lookup"),
        ("client", "client:lookup"),
        ("mcp", "mcp:lookup"),
    ],
)
def test_the_catalog_id_is_prefixed_by_the_source(source: Any, catalog_id: str) -> None:
    assert Tool(name="lookup", execute=noop, source=source).catalog_id == catalog_id


def test_defaults_are_a_parallel_host_tool_that_is_not_replay_safe() -> None:
    tool = Tool(name="lookup", execute=noop)
    assert (tool.execution_mode, tool.source, tool.replay_safe) == ("parallel", "openclaw", False)
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.output_schema is None
    assert Tool(name="lookup", execute=noop, replay_safe=True).replay_safe is True
