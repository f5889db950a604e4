"""Defining tools from typed functions, pydantic models and plugins."""

from __future__ import annotations

import asyncio
from typing import Any, Literal, TypedDict

import pydantic
import pytest

from clawcell import Tool
from clawcell.catalog import Catalog, define_tool_plugin, json_schema_for, tool
from clawcell.errors import ConfigurationError


class Forecast(TypedDict):
    city: str
    highs: list[float]


@tool
async def forecast(city: str, days: int = 3, unit: Literal["c", "f"] = "c") -> Forecast:
    """Daily high temperatures."""
    return {"city": city, "highs": [20.0] * days}


class Query(pydantic.BaseModel):
    text: str
    limit: int = 5


class Hit(pydantic.BaseModel):
    title: str


@tool(name="find_docs", execution_mode="sequential")
def find(query: Query) -> list[Hit]:
    return [Hit(title=query.text)] * query.limit


def test_signature_becomes_a_closed_input_schema() -> None:
    assert forecast.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 3},
            "unit": {"enum": ["c", "f"], "default": "c"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert forecast.description == "Daily high temperatures."


def test_typed_dict_return_becomes_a_closed_output_schema() -> None:
    catalog = Catalog([forecast])
    assert catalog.all()[0]["output"] == "{ city: string; highs: Array<number> }"
    assert asyncio.run(catalog.call("forecast", {"city": "Oslo", "days": 1})) == {
        "city": "Oslo",
        "highs": [20.0],
    }


def test_a_single_pydantic_parameter_supplies_the_schema_and_is_validated() -> None:
    assert find.name == "find_docs"
    assert find.execution_mode == "sequential"
    assert find.parameters["required"] == ["text"]
    value = asyncio.run(Catalog([find]).call("find_docs", {"text": "q", "limit": 2}))
    assert value == [{"title": "q"}, {"title": "q"}]


def test_unsupported_annotations_fail_with_a_fix() -> None:
    with pytest.raises(ConfigurationError, match="pass `parameters=`"):
        json_schema_for(complex)


def test_variadic_parameters_are_rejected() -> None:
    def spread(*values: int) -> None:
        return None

    with pytest.raises(ConfigurationError, match="one JSON object"):
        tool(spread)


def test_plugin_tools_callback_receives_the_decorator() -> None:
    def alerts(region: str) -> list[str]:
        return [region]

    plugin = define_tool_plugin(
        id="weather",
        name="Weather",
        tools=lambda make: [make(alerts), make(forecast, execution_mode="sequential")],
    )
    assert [(t.name, t.execution_mode) for t in plugin.tools] == [
        ("alerts", "parallel"),
        ("forecast", "sequential"),
    ]


def test_plugin_rejects_non_tools() -> None:
    def bad(make: Any) -> list[Any]:
        return ["nope"]

    with pytest.raises(ConfigurationError, match="must return Tool values"):
        define_tool_plugin(id="p", name="P", tools=bad)


def test_duplicate_tools_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="share the name"):
        Catalog([Tool(name="x", execute=print), Tool(name="x", execute=print)])


class Page(pydantic.BaseModel):
    hits: list[Hit]
    total: int


class Open(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    title: str


class Tree(pydantic.BaseModel):
    children: list[Tree]


def test_a_pydantic_output_model_is_declared_closed_with_nested_models_in_place() -> None:
    @tool
    def page() -> Page:
        return Page(hits=[], total=0)

    assert page.output_schema is not None
    assert page.output_schema["additionalProperties"] is False
    assert Catalog([page]).all()[0]["output"] == "{ hits: Array<{ title: string }>; total: number }"


def test_a_pydantic_output_model_that_allows_extra_fields_stays_open() -> None:
    @tool
    def loose() -> Open:
        return Open(title="t")

    assert loose.output_schema is not None
    assert loose.output_schema["additionalProperties"] is True
    assert "output" not in Catalog([loose]).all()[0]


def test_a_self_referencing_output_model_keeps_its_references() -> None:
    @tool
    def tree() -> Tree:
        return Tree(children=[])

    assert tree.output_schema is not None
    assert "$defs" in tree.output_schema


def test_a_pydantic_input_model_keeps_the_schema_pydantic_gives() -> None:
    assert "additionalProperties" not in find.parameters
