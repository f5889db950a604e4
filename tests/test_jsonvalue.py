"""The one JSON normaliser: its fast paths give exactly what `json` gives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawcell._jsonvalue import json_text, parse_json_text
from clawcell.errors import ToolError

TEXTS = [
    '{"s":1,"q":0,"r":[["bridge:callValue:1","callValue"]]}',
    '["echo",{"i":1}]',
    "[]",
    '"x\\ud800y"',
    "1e400",
    "-0",
    "NaN",
    "[Infinity,-Infinity]",
    '{"a":{"a":{"a":[1,2.5,null,true,false]}}}',
    ' {"padded": true} ',
    "\n[1]\n",
]
BAD = ["", "[1,", '{"a" 1}', "[1] x", "1 2", '"unterminated', "{}}", "tru"]


@pytest.mark.parametrize("text", TEXTS)
def test_parse_json_text_gives_what_json_loads_gives(text: str) -> None:
    assert json.dumps(parse_json_text(text)) == json.dumps(json.loads(text))


@pytest.mark.parametrize("text", BAD)
def test_parse_json_text_raises_the_error_json_loads_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        parse_json_text(text)
    assert str(got.value) == str(expected.value)


def test_parse_json_text_of_very_deep_text_raises_recursion_error() -> None:
    with pytest.raises(RecursionError):
        parse_json_text("[" * 100_000 + "]" * 100_000)


VALUES: list[Any] = [
    {"i": 1},
    "x\ud800y é \u2028",
    [1.5, 1e300, -0.0, None, True, 2**70],
    {"a": [{"b": {}}], "c": ""},
    {1: 2, "k": (1, 2)},
]


@pytest.mark.parametrize("value", VALUES)
def test_json_text_gives_what_json_dumps_gives(value: Any) -> None:
    assert json_text(value) == json.dumps(value, separators=(",", ":"), allow_nan=False)


def test_json_text_keeps_its_policy_for_values_json_refuses() -> None:
    assert json_text({"x": float("nan")}) == '{"x":null}'
    with pytest.raises(ToolError, match=r"\$\.b.*bytes"):
        json_text({"b": b"\x00"})
