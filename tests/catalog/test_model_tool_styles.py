"""`model_tools(style)` gives shapes the model SDKs' own typed params accept."""

from __future__ import annotations

from typing import Any, cast

import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter, ValidationError

import clawcell
from clawcell.catalog import Catalog
from tests.conftest import with_mode

STYLES: list[tuple[str, Any]] = [
    ("anthropic", ToolParam),
    ("openai", ChatCompletionFunctionToolParam),
    ("openai-chat", ChatCompletionFunctionToolParam),
    ("openai-responses", FunctionToolParam),
]


def _catalog() -> Catalog:
    async def quote(params: dict[str, Any]) -> dict[str, Any]:
        return params

    return Catalog([clawcell.Tool(name="quote", description="Price it.", execute=quote)])


@pytest.mark.parametrize(("style", "param_type"), STYLES, ids=[s for s, _ in STYLES])
def test_each_style_validates_unchanged_against_the_sdk_param_type(
    style: Any, param_type: Any
) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(param_type)
    for definition in _catalog().model_tools(style):
        # Unknown keys would be dropped by the TypedDict validator, so equality also
        # proves that nothing outside the SDK's shape was sent.
        assert adapter.validate_python(definition) == definition


def test_the_chat_shape_is_rejected_by_the_responses_param_type() -> None:
    chat = _catalog().model_tools("openai-chat")[0]
    with pytest.raises(ValidationError):
        TypeAdapter(FunctionToolParam).validate_python(chat)


def test_responses_tools_are_flat_with_a_strict_flag() -> None:
    exec_tool, wait_tool = _catalog().model_tools("openai-responses")
    assert (exec_tool["type"], exec_tool["name"], exec_tool["strict"]) == (
        "function",
        "exec",
        False,
    )
    assert (wait_tool["name"], wait_tool["strict"]) == ("wait", True)
    assert wait_tool["parameters"]["additionalProperties"] is False


def test_strict_mode_is_used_only_where_the_schema_allows_it() -> None:
    exec_tool, wait_tool = _catalog().model_tools("openai-chat")
    # `exec` has optional properties (`title`, `restartSafe`) and a `maxLength`.
    assert exec_tool["function"]["strict"] is False
    assert "additionalProperties" not in exec_tool["function"]["parameters"]
    assert wait_tool["function"]["strict"] is True
    assert wait_tool["function"]["parameters"]["required"] == ["runId"]


def test_openai_is_an_alias_of_openai_chat() -> None:
    catalog = _catalog()
    assert catalog.model_tools("openai") == catalog.model_tools("openai-chat")


def test_the_anthropic_style_carries_the_json_schema_unchanged() -> None:
    exec_tool, _ = _catalog().model_tools("anthropic")
    assert exec_tool["input_schema"]["required"] == ["code"]
    assert set(exec_tool) == {"name", "description", "input_schema"}


@pytest.mark.parametrize("style", ["gemini", "", "OpenAI", None])
def test_an_unknown_style_is_a_configuration_error(style: Any) -> None:
    with pytest.raises(clawcell.ConfigurationError) as caught:
        _catalog().model_tools(style)
    assert caught.value.message == (
        f"unknown model tool style {style!r}; use 'anthropic', 'openai-chat' or "
        "'openai-responses' ('openai' is an alias of 'openai-chat')."
    )


def test_code_mode_offers_the_same_styles() -> None:
    async def body(mode: clawcell.CodeMode) -> None:
        assert [t["name"] for t in mode.model_tools("openai-responses")] == ["exec", "wait"]
        with pytest.raises(clawcell.ConfigurationError):
            mode.model_tools(cast(Any, "gemini"))

    with_mode(body)
