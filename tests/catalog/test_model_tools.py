"""The model-facing `exec` and `wait` definitions."""

from __future__ import annotations

from clawcell import Limits, Tool
from clawcell.catalog import Catalog


def _catalog() -> Catalog:
    return Catalog(
        [Tool(name="exec", execute=print), Tool(name="notes", execute=print)],
        limits=Limits(timeout_ms=2500, max_output_bytes=4096),
    )


def test_exec_requires_only_code_and_bounds_the_title() -> None:
    schema = _catalog().exec_tool()["input_schema"]
    assert schema["required"] == ["code"]
    assert schema["properties"]["title"]["maxLength"] == 120
    assert schema["properties"]["restartSafe"]["type"] == "boolean"


def test_exec_description_quotes_limits_shell_tool_and_quick_index() -> None:
    description = _catalog().exec_tool()["description"]
    assert "has 2500 ms of wall-clock time" in description
    assert "Output, value and errors share 4096 bytes" in description
    assert "For heavy computation call the shell tool `exec`." in description
    assert description.endswith(
        "- exec {} -> ?\n- notes {} -> ?\n\n"
        "Call these globals directly; use catalog.search(query) when lookup is ambiguous."
    )


def test_exporters_produce_openai_and_anthropic_shapes() -> None:
    catalog = _catalog()
    openai = catalog.model_tools("openai")
    anthropic = catalog.model_tools("anthropic")
    assert [t["function"]["name"] for t in openai] == ["exec", "wait"]
    assert openai[1]["function"]["parameters"]["required"] == ["runId"]
    assert [t["name"] for t in anthropic] == ["exec", "wait"]
    assert anthropic[0]["input_schema"] == openai[0]["function"]["parameters"]


def test_an_empty_catalog_has_no_index_and_no_api_guidance() -> None:
    description = Catalog([]).exec_tool()["description"]
    assert "API.list" not in description
    assert "Enabled async tool globals" not in description
