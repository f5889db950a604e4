"""`Catalog.call_text`, the guest bridge's way in: the text of what `call` returns, with the
same checks and errors, encoded once instead of copied first."""

from __future__ import annotations

import asyncio
import enum
import math
from typing import Any

import pytest

from clawcell import Tool, ToolResult
from clawcell._jsonvalue import json_text, json_value
from clawcell.catalog import Catalog, ToolCallEvent
from clawcell.errors import ClawcellError


class _Level(enum.IntEnum):
    HIGH = 3


class _Color(enum.StrEnum):
    RED = "red"


class _Model:
    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {"dumped": mode}


def _cycle() -> dict[str, Any]:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    return looped


RESULTS: dict[str, Any] = {
    "flat object": {"a": 1, "b": "x", "c": None, "d": 1.5, "e": True},
    "nested": {"rows": [{"i": 1}, {"i": [2, (3, 4)]}], "n": None},
    "large flat object": {f"k{i}": i for i in range(40)},
    "non-finite floats": {"nan": math.nan, "inf": [math.inf, -math.inf]},
    "keys that are not strings": {1: "one", False: "no", None: "none", 2.5: "f"},
    "enum members": {"level": _Level.HIGH, "color": _Color.RED},
    "lone surrogate": {"s": "a\ud800b"},
    "a model": {"m": _Model()},
    "an exception": {"error": ValueError("bad")},
    "a string": "text",
    "None": None,
    "a list": [1, "two", [3]],
    "a tuple": (1, 2),
    "details and content": ToolResult(details={"d": 1}, content=[{"type": "text", "text": "x"}]),
    "content only": ToolResult(content=[{"type": "text", "text": "x"}]),
    "nothing at all": ToolResult(),
    "not JSON": {"when": {1, 2}},
    "a cycle": _cycle(),
    "bytes": {"b": b"raw"},
}
SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def _both(catalog: Catalog, name: str, params: Any) -> tuple[Any, Any]:
    """(`json_text(call(...))`, `call_text(...)`), each the text or the error raised; the
    callable `text_caller()` returns (the bridge's way in) answers as `call_text` does."""

    async def outcome(way: str) -> Any:
        try:
            if way == "text":
                return await catalog.call_text(name, params)
            if way == "caller":
                return await catalog.text_caller()(name, params)
            return json_text(await catalog.call(name, params))
        except ClawcellError as exc:
            return (type(exc), exc.code, exc.message)

    via_text = asyncio.run(outcome("text"))
    assert asyncio.run(outcome("caller")) == via_text
    return asyncio.run(outcome("value")), via_text


@pytest.mark.parametrize("result", [pytest.param(v, id=k) for k, v in RESULTS.items()])
def test_call_text_is_the_text_of_what_call_returns(result: Any) -> None:
    catalog = Catalog([Tool(name="t", execute=lambda params: result)])
    via_value, via_text = _both(catalog, "t", {})
    assert via_text == via_value


@pytest.mark.parametrize(
    ("details", "fails"), [({"n": 1}, False), ({"n": "one"}, True)], ids=["valid", "invalid"]
)
def test_call_text_checks_the_output_contract_as_call_does(details: Any, fails: bool) -> None:
    catalog = Catalog([Tool(name="t", execute=lambda params: details, output_schema=SCHEMA)])
    via_value, via_text = _both(catalog, "t", {})
    assert via_text == via_value
    assert isinstance(via_text, tuple) is fails


def test_call_text_sends_what_an_after_hook_returns() -> None:
    def patch(event: ToolCallEvent) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "patched"}])

    catalog = Catalog([Tool(name="t", execute=lambda params: {"n": 1})], after_tool_call=[patch])
    via_value, via_text = _both(catalog, "t", {})
    assert via_text == via_value == '{"content":[{"type":"text","text":"patched"}]}'


def test_call_text_counts_and_fails_as_call_does() -> None:
    catalog = Catalog([Tool(name="t", execute=lambda params: params)])
    assert _both(catalog, "missing", {})[0] == _both(catalog, "missing", {})[1]
    assert catalog.telemetry()["callCount"] == 0
    assert asyncio.run(catalog.call_text("t", None)) == "{}"
    assert catalog.telemetry()["callCount"] == 1


def test_the_tool_gets_its_own_copy_of_the_input() -> None:
    seen: list[Any] = []

    def mutate(params: dict[str, Any]) -> str:
        params["added"] = True
        seen.append(params)
        return "ok"

    given: dict[str, Any] = {"n": 1}
    catalog = Catalog([Tool(name="t", execute=mutate)])
    assert asyncio.run(catalog.call_text("t", given)) == '"ok"'
    assert given == {"n": 1}
    assert seen == [{"n": 1, "added": True}]


def test_a_tools_input_is_its_own_copy_under_the_normalisers_policy() -> None:
    # A small flat object of plain values, a float, an enum, a key that is not a string, a
    # nested value, a larger object: the tool sees `json_value`'s copy, never what it was given.
    seen: list[Any] = []
    catalog = Catalog([Tool(name="t", execute=lambda params: seen.append(params) or {})])
    given: list[dict[Any, Any]] = [
        {"a": 1, "b": "x", "c": True, "d": None},
        {"n": float("nan"), "f": 1.5},
        {"level": _Level.HIGH},  # (the module's own IntEnum)
        {1: "an int key"},
        {"nested": {"list": [1, 2]}},
        {str(i): i for i in range(17)},
    ]
    for params in given:
        asyncio.run(catalog.call_text("t", params))
    assert seen == [json_value(params) for params in given]
    assert all(s is not g for s, g in zip(seen, given, strict=True))
    assert [type(v) for v in seen[2].values()] == [int]
