"""The guest's own API inside a cell: output items, `console`, timers, text encoding,
`Math.random`, and the promises of the guest API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from tests.conftest import echo_tool, exec_one, failure, output_of, texts, value_of, with_mode


def test_text_and_json_emit_items_in_call_order_with_fallbacks() -> None:
    code = (
        "text('raw');\ntext({ a: [1, 'x'] });\ntext(undefined);\njson(undefined);\n"
        "json(12n);\nconst o = {};\no.self = o;\njson(o);\njson({ __proto__: null, k: 1 });"
    )
    assert output_of(code) == [
        {"type": "text", "text": "raw"},
        {"type": "text", "text": '{"a":[1,"x"]}'},
        {"type": "text", "text": "null"},
        {"type": "json", "value": None},
        {"type": "json", "value": "12"},
        {"type": "json", "value": "[object Object]"},
        {"type": "json", "value": {"k": 1}},
    ]


def test_output_items_are_converted_when_emitted_not_when_returned() -> None:
    code = "const o = { n: 1 };\njson(o);\no.n = 2;\ntext(o);\no.n = 3;\nreturn o;"
    envelope = exec_one(code)
    assert envelope["output"] == [
        {"type": "json", "value": {"n": 1}},
        {"type": "text", "text": '{"n":2}'},
    ]
    assert envelope["value"] == {"n": 3}


def test_console_methods_prefix_and_inspect_their_arguments() -> None:
    code = (
        "console.log('a', 1, undefined, 5n, () => 1);\nconsole.info('i');\n"
        "console.warn('w');\nconsole.error('e');\nconsole.debug('d %s', 'x');\n"
        "const c = { n: 1 };\nc.c = c;\nconsole.log(c);\n"
        "console.log(Object.defineProperty({}, 'g', { get() { throw 1; }, enumerable: true }));\n"
        "console.log(Promise.resolve(1), new Error('boom'));"
    )
    assert texts(output_of(code)) == [
        "a 1 undefined 5n [Function]",
        "[info] i",
        "[warn] w",
        "[error] e",
        "[debug] d %s x",
        '{"n":1,"c":"[Circular]"}',
        '{"g":"[Accessor]"}',
        "[Unawaited Promise: use await or Promise.all(...) before emitting or returning "
        'values.] {"message":"boom"}',
    ]


def test_console_clips_long_messages_and_deep_values() -> None:
    code = (
        "console.log('x'.repeat(5000));\nconsole.log({ s: 'y'.repeat(600) });\n"
        "console.log({ a: { b: { c: { d: { e: 1 } } } } });\n"
        "console.log(Array.from({ length: 60 }, (_, i) => i).length, "
        "Array.from({ length: 60 }, (_, i) => i));\n"
        "console.log(...Array.from({ length: 10 }, () => 'w'.repeat(500)));"
    )
    items = texts(output_of(code, limits=Limits(max_output_bytes=1 << 20)))
    assert items[0] == "x" * 512 + "…[truncated]"  # a string argument is clipped like a field
    assert items[1] == '{"s":"' + "y" * 512 + '…[truncated]"}'
    assert items[2] == '{"a":{"b":{"c":{"d":"[truncated]"}}}}'
    assert items[3] == "60 [" + ",".join(str(i) for i in range(50)) + ',"[truncated]"]'
    assert items[4] == " ".join(["w" * 500] * 10)[:4096] + "…[truncated]"


def test_console_stops_after_its_cumulative_budget() -> None:
    code = "for (let i = 0; i < 40; i++) console.log('z'.repeat(1000));\ntext('after');"
    items = texts(output_of(code, limits=Limits(max_output_bytes=1 << 20)))
    # Each string is clipped to 512 units, so an entry is 549 JSON units; the budget is
    # 16,384 - 100 units.
    assert items == ["z" * 512 + "…[truncated]"] * 29 + ["[console output truncated]", "after"]


def test_timers_run_callbacks_with_arguments_in_delay_order() -> None:
    code = (
        "const seen = [];\nconst ids = [setTimeout((a) => seen.push(a), 5, 'late'),\n"
        "  setTimeout((a, b) => seen.push(a + b), 0, 'ea', 'rly')];\n"
        "await new Promise((resolve) => setTimeout(resolve, 20));\nreturn { ids, seen };"
    )
    envelope = exec_one(code)
    assert envelope["value"] == {"ids": [1, 2], "seen": ["early", "late"]}
    assert envelope["telemetry"]["callCount"] == 0


def test_clear_timeout_cancels_in_flight_and_queued_timers() -> None:
    code = (
        "const seen = [];\nconst inflight = setTimeout(() => seen.push('in-flight'), 1);\n"
        "const queued = setTimeout(() => seen.push('queued'), 1);\n"
        "clearTimeout(queued);\nclearTimeout(inflight);\nclearTimeout(999);\n"
        "await new Promise((resolve) => setTimeout(resolve, 10));\nreturn seen;"
    )
    assert value_of(code, limits=Limits(timeout_ms=60_000, max_pending_tool_calls=1)) == []


def test_a_timer_cleared_while_on_the_host_does_not_hold_back_completion() -> None:
    # The cleared timer's host task is cancelled; the cell must then finish as soon as its
    # other detached call does, not wait for the budget and park.
    async def slow(tool_input: dict[str, Any]) -> Any:
        await asyncio.sleep(0.02)
        return tool_input

    code = (
        "const t = setTimeout(() => {}, 60000);\nawait echo({});\nclearTimeout(t);\n"
        "void slow({});\nreturn 'done';"
    )
    tools = [echo_tool(), Tool(name="slow", execute=slow)]
    envelope = exec_one(code, tools=tools, limits=Limits(timeout_ms=5000))
    assert (envelope["status"], envelope.get("value")) == ("completed", "done")


def test_set_timeout_rejects_a_non_function_callback() -> None:
    code = "try { setTimeout('1 + 1', 0); } catch (e) { return String(e); }"
    assert value_of(code) == "TypeError: setTimeout callback must be a function"


def test_text_encoder_and_decoder_round_trip_and_replace_invalid_utf8() -> None:
    code = (
        "const enc = new TextEncoder(), dec = new TextDecoder();\n"
        "const s = 'aé中🦞';\nconst bytes = enc.encode(s);\n"
        "return [Array.from(bytes).length, dec.decode(bytes) === s,\n"
        "  Array.from(enc.encode('\\ud800')), dec.decode(new Uint8Array([0xff, 0xc3, 0x28])),\n"
        "  dec.decode(new Uint8Array([0xe0, 0x80, 0x80]).buffer), enc.encoding, dec.decode()];"
    )
    assert value_of(code) == [
        10,
        True,
        [0xEF, 0xBF, 0xBD],
        "\ufffd\ufffd(",
        "\ufffd" * 3,
        "utf-8",
        "",
    ]


def test_math_random_draws_differ_between_cells_and_stay_in_the_unit_interval() -> None:
    # Every cell starts from the same memory image; its generator must still be fresh.
    code = (
        "const a = Array.from({ length: 2000 }, () => Math.random());\n"
        "return { first: a[0], inRange: a.every((x) => x >= 0 && x < 1),\n"
        "  mean: a.reduce((s, x) => s + x, 0) / a.length };"
    )

    async def body(mode: CodeMode) -> list[Any]:
        return [(await mode.exec(code))["value"] for _ in range(3)]

    draws = with_mode(body)
    assert len({d["first"] for d in draws}) == 3
    assert all(d["inRange"] for d in draws)
    assert all(0.4 < d["mean"] < 0.6 for d in draws)


@pytest.mark.parametrize(
    ("code", "label", "name"),
    [
        ("return catalog.search('echo').map((t) => t.name);", "catalog.search", "map"),
        ("return echo({}).length;", "echo", "length"),
        ("return echo.describe().keys;", "echo.describe", "keys"),
        ("return API.list().files;", "API.list", "files"),
        ("return API.read('results.d.ts').content;", "API.read", "content"),
        ("return results.load('r').filter(Boolean);", "results.load", "filter"),
    ],
)
def test_reading_a_property_of_an_unawaited_promise_says_to_await(
    code: str, label: str, name: str
) -> None:
    _, _, error, _ = failure(exec_one(code))
    assert error.startswith(
        f"TypeError: {label} returns a Promise; use await: (await {label}(...)).{name}\n"
        "    at <anonymous> (openclaw-code-mode:user.js:1:"
    )


def test_the_guest_api_promises_still_behave_as_promises() -> None:
    code = (
        "const p = echo({ a: 1 });\n"
        "const [one, two] = await Promise.all([p, echo({ b: 2 })]);\n"
        "const found = await catalog.search('echo');\n"
        "return [p instanceof Promise, one, two, found.map((t) => t.name), typeof p.then];"
    )
    assert value_of(code) == [True, {"a": 1}, {"b": 2}, ["echo"], "function"]
