"""`_jsjson` prints what JavaScript's `JSON.stringify` prints, byte for byte."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawcell._jsjson import (
    dumps,
    js_number,
    json_string_bytes,
    to_well_formed,
    utf8_len,
    utf16_len,
)

NODE = shutil.which("node")

# Node decodes the tagged batch, stringifies each value and measures each string value.
_NODE_SCRIPT = r"""
const input = require("fs").readFileSync(0, "utf8");
const revive = (v) => {
  if (Array.isArray(v)) return v.map(revive);
  if (v === null || typeof v !== "object") return v;
  if ("$n" in v) return Number(v.$n);
  const o = {};
  for (const [k, x] of v.$o) {
    const d = { value: revive(x), enumerable: true, writable: true, configurable: true };
    Object.defineProperty(o, k, d); // plain assignment would treat __proto__ specially
  }
  return o;
};
const out = JSON.parse(input).map((tagged) => {
  const v = revive(tagged);
  return typeof v === "string"
    ? [JSON.stringify(v), Buffer.byteLength(v, "utf8"), v.length]
    : [JSON.stringify(v)];
});
process.stdout.write(JSON.stringify(out));
"""


def _tag(value: Any) -> Any:
    """Encode a value so Node rebuilds it exactly (numbers by repr, keys in order)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return {"$n": repr(value) if isinstance(value, float) else str(value)}
    if isinstance(value, list):
        return [_tag(item) for item in cast("list[Any]", value)]
    pairs = cast("dict[str, Any]", value)
    return {"$o": [[key, _tag(item)] for key, item in pairs.items()]}


def _node_stringify(values: list[Any]) -> list[list[Any]]:
    assert NODE is not None
    batch = json.dumps([_tag(value) for value in values])  # ASCII: surrogates survive
    done = subprocess.run(
        [NODE, "-e", _NODE_SCRIPT], input=batch, capture_output=True, text=True, check=True
    )
    result: list[list[Any]] = json.loads(done.stdout)
    return result


def _is_array_index(key: str) -> bool:
    # JavaScript orders integer-like keys first; `dumps` keeps the given order (documented).
    return key.isascii() and key.isdigit() and str(int(key)) == key


_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    [
        "\ud800",
        "a\udfffb",
        "\ud83d\ude00",
        "\ud83d",
        "\x00\x1f\x7f",
        '"\\/',
        "\u2028\u2029",
        "🦞中é",
    ]
)
_numbers = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 1e21, 1e-7, 1e20, 1.5e-7, 123e-20, 2**53 + 1, 5e-324])
)
_scalars = st.none() | st.booleans() | _numbers | _texts
_json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_texts.filter(lambda k: not _is_array_index(k)), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(_json_values, min_size=40, max_size=80))
def test_dumps_matches_node_json_stringify_on_a_generated_corpus(batch: list[Any]) -> None:
    expected = _node_stringify(batch)
    for value, node in zip(batch, expected, strict=True):
        assert dumps(value) == node[0], value
        if isinstance(value, str):
            assert (utf8_len(value), utf16_len(value)) == (node[1], node[2]), value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (123.456, "123.456"),
        (float("nan"), "null"),
        (float("-inf"), "null"),
        (2**53 + 1, "9007199254740992"),
        (10**400, "null"),
        (-(2**64), "-18446744073709552000"),
    ],
)
def test_numbers_print_as_javascript_prints_them(value: float, text: str) -> None:
    assert js_number(value) == text
    assert dumps([value]) == f"[{text}]"


def test_strings_escape_controls_and_lone_surrogates_in_lowercase() -> None:
    assert (
        dumps('a\x01\x1f\b\f\n\r\t"\\é\u2028') == '"a\\u0001\\u001f\\b\\f\\n\\r\\t\\"\\\\é\u2028"'
    )
    assert dumps({"\ud800": "\udfff"}) == '{"\\ud800":"\\udfff"}'
    assert dumps("\ud83d\ude00") == '"😀"'


def test_number_like_text_inside_strings_is_left_alone() -> None:
    assert dumps({"v1.5e3": "1.0 NaN Infinity 12345678901234567890"}) == (
        '{"v1.5e3":"1.0 NaN Infinity 12345678901234567890"}'
    )


def test_dumps_is_compact_and_keeps_key_order() -> None:
    assert dumps({"b": [1, True, None], "a": {"x": "y"}}) == '{"b":[1,true,null],"a":{"x":"y"}}'


def test_utf8_len_counts_a_lone_surrogate_as_three_bytes() -> None:
    assert utf8_len("a\ud800") == 4
    assert utf8_len("🦞") == 4
    assert utf8_len("\ud83e\udd9e") == 4
    assert json_string_bytes("\ud800") == 8
    assert json_string_bytes('a"') == 5


def test_to_well_formed_replaces_only_lone_surrogates() -> None:
    assert to_well_formed("x\ud800\ud83d\ude00\udfff") == "x\ufffd😀\ufffd"
