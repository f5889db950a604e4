"""Values crossing the bridge (spec §4): final values, projected errors, tool replies and
arguments, and tool errors as the guest catches them."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import Tool, ToolError
from tests.conftest import exec_one, failure, value_of


def test_final_values_call_no_to_json_and_evaluate_getters_once() -> None:
    code = (
        "let calls = 0;\nlet flag = false;\n"
        "const v = { get g() { calls += 1; return calls; },\n"
        "  toJSON() { flag = true; echo({}); return 'json'; } };\n"
        'const r = Object.assign(JSON.parse(\'{"__proto__": "kept"}\'),\n'
        "  { v, d: new Date(0), t: new Uint8Array([7, 8]), p: Promise.resolve(1) });\n"
        "Object.defineProperty(r, 'flag', { get: () => flag, enumerable: true });\nreturn r;"
    )
    envelope = exec_one(code)
    assert envelope["value"] == {
        "__proto__": "kept",
        "v": {"g": 1},
        "d": {},
        "t": {"0": 7, "1": 8},
        "p": "[Unawaited Promise: use await or Promise.all(...) before emitting or "
        "returning values.]",
        "flag": False,
    }
    assert envelope["telemetry"]["callCount"] == 0


def test_errors_are_projected_with_custom_fields_and_without_their_to_json() -> None:
    code = (
        "const e = new RangeError('r');\ne.extra = 1;\ne.toJSON = () => 'no';\n"
        "json(e);\nreturn [e, await Promise.allSettled([Promise.reject(new Error('x'))])];"
    )
    envelope = exec_one(code)
    assert envelope["output"] == [
        {"type": "json", "value": {"name": "RangeError", "message": "r", "extra": 1}}
    ]
    assert envelope["value"] == [
        {"name": "RangeError", "message": "r", "extra": 1},
        [{"status": "rejected", "reason": {"name": "Error", "message": "x"}}],
    ]


def test_tool_replies_are_normalised_on_the_host() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    async def odd(tool_input: dict[str, Any]) -> Any:
        if tool_input.get("opaque"):
            return {"o": Opaque()}
        return {"t": (1, 2), "nan": float("nan"), "inf": float("-inf"), 3: "int key"}

    code = (
        "const plain = await odd({});\n"
        "try { await odd({ opaque: true }); } catch (e) { return [plain, e.code, e.message]; }"
    )
    value = value_of(code, tools=[Tool(name="odd", execute=odd)])
    assert value[0] == {"t": [1, 2], "nan": None, "inf": None, "3": "int key"}
    # A reply that is not JSON is a tool error naming where and what, never its repr.
    assert value[1:] == [
        "tool_error",
        "value at $.o is not JSON: 'Opaque'; return dicts, lists, strings, numbers, booleans "
        "or None",
    ]


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ({"b": b"\x00\xff"}, "value at $.b is not JSON: 'bytes'"),
        ({"s": {1, 2}}, "value at $.s is not JSON: 'set'"),
        ([{"k": object()}], "value at $[0].k is not JSON: 'object'"),
        ({(1, 2): "tuple key"}, "object key (1, 2) at $ is not a string"),
    ],
    ids=["bytes", "set", "object", "tuple-key"],
)
def test_a_tool_returning_something_that_is_not_json_fails_with_a_tool_error(
    returned: Any, message: str
) -> None:
    async def odd(tool_input: dict[str, Any]) -> Any:
        return returned

    code = "try { await odd(); return 'accepted'; } catch (e) { return [e.code, e.message]; }"
    code_value = value_of(code, tools=[Tool(name="odd", execute=odd)])
    assert code_value[0] == "tool_error"
    assert code_value[1].startswith(message)


def test_a_cyclic_or_very_deep_result_is_refused_without_a_recursion_error() -> None:
    async def deep(tool_input: dict[str, Any]) -> Any:
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        if tool_input.get("cyclic"):
            return cyclic
        nested: list[Any] = []
        for _ in range(5000):
            nested = [nested]
        return nested

    code = (
        "const out = [];\nfor (const cyclic of [true, false]) {\n"
        "  try { await deep({ cyclic }); out.push('accepted'); } catch (e) { out.push(e.code); }\n"
        "}\nreturn out;"
    )
    assert value_of(code, tools=[Tool(name="deep", execute=deep)]) == ["tool_error"] * 2


def test_tool_arguments_that_cannot_be_serialised_reject_the_call() -> None:
    code = (
        "const out = [];\nfor (const bad of [{ n: 1n }, (() => { const o = {}; o.o = o; "
        "return o; })()]) {\n  try { await echo(bad); out.push('sent'); } "
        "catch (e) { out.push(e.name); }\n}\nreturn [out, await echo(undefined)];"
    )
    envelope = exec_one(code)
    assert envelope["value"] == [["TypeError", "TypeError"], {}]
    assert envelope["telemetry"]["callCount"] == 1


async def _boom(_: dict[str, Any]) -> Any:
    raise ToolError("carrier down")


def test_tool_errors_are_catchable_with_code_effect_status_and_location() -> None:
    code = (
        "const x = 1;\ntry {\n  await boom({});\n} catch (e) {\n"
        "  return { m: e.message, c: e.code, s: e.effectStatus, l: e.location, "
        "keys: Object.keys(e), json: JSON.parse(JSON.stringify(e)) };\n}"
    )
    location = "    at <anonymous> (openclaw-code-mode:user.js:3:9)\n"
    value = value_of(code, tools=[Tool(name="boom", execute=_boom)])
    assert value == {
        "m": "carrier down",
        "c": "tool_error",
        "s": "unknown",
        "l": location,
        "keys": ["location", "code", "effectStatus"],
        "json": {"location": location, "code": "tool_error", "effectStatus": "unknown"},
    }


def test_an_uncaught_tool_error_fails_the_cell_in_the_bridge_phase() -> None:
    envelope = exec_one("const x = 1;\nawait boom({});", tools=[Tool(name="boom", execute=_boom)])
    assert failure(envelope) == (
        "internal_error",
        "bridge",
        "Error: carrier down\n    at <anonymous> (openclaw-code-mode:user.js:2:7)\n",
        True,
    )


def test_a_plain_exception_in_a_tool_reaches_the_guest_as_a_tool_error() -> None:
    def broken(_: dict[str, Any]) -> Any:
        raise KeyError("missing")

    code = "try { await broken(); } catch (e) { return [e.message, e.code]; }"
    assert value_of(code, tools=[Tool(name="broken", execute=broken)]) == [
        "'missing'",
        "tool_error",
    ]
