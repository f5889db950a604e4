"""Cells through `CodeMode`: output API, conversions, tool errors, the bridge queue,
failures, `wait`, parking limits, concurrency, model-result fitting and closing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from clawcell import (
    ClawcellError,
    ClosedError,
    CodeMode,
    ConfigurationError,
    InputError,
    Limits,
    Tool,
    ToolError,
    render,
)
from tests.conftest import FAST, ROOMY, echo_tool, exec_one, failure, run, with_mode

OVERFLOW = (
    "code mode bridge queue limit exceeded (128 ordinary requests queued; {n} in-flight "
    "slots). Await smaller batches before creating more tool calls or timers."
)


def value_of(code: str, **options: Any) -> Any:
    envelope = exec_one(code, **options)
    assert envelope["status"] == "completed", envelope
    return envelope["value"]


def output_of(code: str, **options: Any) -> list[Any]:
    envelope = exec_one(code, **options)
    assert envelope["status"] == "completed", envelope
    return envelope["output"]


def texts(items: list[Any]) -> list[str]:
    assert all(item["type"] == "text" for item in items)
    return [item["text"] for item in items]


# -- output API -------------------------------------------------------------------------


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


# -- the four conversion points (spec §4) -------------------------------------------------


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


# -- tool errors ------------------------------------------------------------------------


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


# -- the bridge queue ---------------------------------------------------------------------


def test_at_most_max_pending_tool_calls_run_at_once() -> None:
    active = [0, 0]

    async def busy(tool_input: dict[str, Any]) -> Any:
        active[0] += 1
        active[1] = max(active)
        for _ in range(3):
            await asyncio.sleep(0)
        active[0] -= 1
        return tool_input["i"]

    code = "return await Promise.all(Array.from({ length: 20 }, (_, i) => busy({ i })));"
    limits = Limits(timeout_ms=2000, max_pending_tool_calls=3)
    assert value_of(code, tools=[Tool(name="busy", execute=busy)], limits=limits) == list(range(20))
    assert active == [0, 3]


def test_a_full_bridge_queue_fails_the_cell_with_the_overflow_message() -> None:
    code = (
        "const ps = [];\ntry { for (let i = 0; i < 200; i++) ps.push(echo({ i })); }\n"
        "catch (e) { text('caught'); }\ntry { echo({}); } catch (e) { text('sticky'); }\n"
        "return ps.length;"
    )
    envelope = exec_one(code, limits=Limits(timeout_ms=60_000, max_pending_tool_calls=4))
    assert envelope["output"] == [
        {"type": "text", "text": "caught"},
        {"type": "text", "text": "sticky"},
    ]
    assert failure(envelope)[0] == "invalid_input"
    assert failure(envelope)[2] == OVERFLOW.format(n=4)


def test_timers_count_against_the_bridge_queue() -> None:
    code = "for (let i = 0; i < 200; i++) setTimeout(() => {}, 1);"
    envelope = exec_one(code)
    assert failure(envelope) == ("invalid_input", "input", OVERFLOW.format(n=16), False)


def test_a_queue_overflow_after_dispatch_is_a_bridge_phase_failure() -> None:
    code = "await echo({});\nfor (let i = 0; i < 200; i++) echo({ i });"
    assert failure(exec_one(code)) == ("invalid_input", "bridge", OVERFLOW.format(n=16), True)


def test_a_queue_overflow_in_the_first_frontier_is_an_input_failure() -> None:
    # The recorded release (queue/overflow-129, release-differences §2 item 10) reports the
    # input phase and no dispatch: the overflowing frontier never reaches the host.
    code = "for (let i = 0; i < 200; i++) echo({ i });"
    assert failure(exec_one(code)) == ("invalid_input", "input", OVERFLOW.format(n=16), False)


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            "const x = 1;\nthrow new TypeError('bad');",
            (
                "internal_error",
                "guest",
                "TypeError: bad\n    at <anonymous> (openclaw-code-mode:user.js:2:11)\n",
                False,
            ),
            id="uncaught_error_reports_the_user_line",
        ),
        pytest.param(
            "const x = 1;\nlet = = 2;",
            (
                "invalid_input",
                "input",
                "SyntaxError at openclaw-code-mode:user.js:2:7: Unexpected token. No tools were "
                "dispatched; correct the JavaScript source and submit it again.",
                False,
            ),
            id="syntax_error",
        ),
        pytest.param(
            "Promise.reject(new Error('late'));\nreturn 1;",
            (
                "internal_error",
                "guest",
                "Error: late\n    at <anonymous> (openclaw-code-mode:user.js:1:20)\n",
                False,
            ),
            id="unhandled_rejection",
        ),
        pytest.param(
            "await new Promise(() => {});",
            ("internal_error", "guest", "code mode promise is pending without host work", False),
            id="pending_without_host_work",
        ),
        pytest.param(
            "while (true) {}",
            ("timeout", "guest", "code mode timeout exceeded", False),
            id="timeout",
        ),
        pytest.param(
            "ls -la",
            (
                "invalid_input",
                "input",
                "code-mode exec runs JavaScript, not shell commands. Call an "
                "enabled async tool global from guest JavaScript; use catalog.search(query) "
                "when the bounded quick index omits it. Do not retry the same shell command "
                "as code.",
                False,
            ),
            id="shell_source",
        ),
    ],
)
def test_failures_carry_their_code_phase_and_message(
    code: str, expected: tuple[str, str, str, bool]
) -> None:
    assert failure(exec_one(code, limits=FAST)) == expected


def test_rejected_calls_raise_input_error_with_the_protocol_message() -> None:
    async def body(mode: CodeMode) -> list[str]:
        messages: list[str] = []
        for name, args in [
            ("exec", {"code": "  "}),
            ("wait", {"runId": ""}),
            ("wait", {"runId": "cm_nope"}),
            ("nope", {}),
        ]:
            with pytest.raises(InputError) as caught:
                await mode.call_tool(name, args)
            assert caught.value.code == "invalid_input"
            messages.append(caught.value.message)
        return messages

    assert with_mode(body) == [
        "code or command must be a non-empty string.",
        "runId must be a non-empty string.",
        "code mode run is unavailable or expired.",
        "unknown Code Mode tool 'nope'; the tools are `exec` and `wait`.",
    ]


def test_a_title_longer_than_120_characters_is_a_failed_envelope() -> None:
    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        long = await mode.call_tool("exec", {"code": "return 1", "title": "t" * 121})
        ok = await mode.call_tool("exec", {"code": "return 1", "title": "t" * 120})
        return long, ok

    long, ok = with_mode(body)
    assert failure(long)[:2] == ("invalid_input", "input")
    assert ok["value"] == 1


# -- wait, parking and expiry ---------------------------------------------------------------


def test_output_is_delivered_incrementally_across_yield_and_wait() -> None:
    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        first = await mode.exec(
            "text('a');\nconst r = await yield_control('check');\ntext('b');\nreturn r;"
        )
        return [first, await mode.wait(first["runId"])]

    first, second = with_mode(body)
    assert first["status"] == "waiting"
    assert re.fullmatch(r"cm_[0-9a-f-]{36}", first["runId"])
    assert (first["reason"], first["pendingToolCalls"]) == (
        "yield",
        [{"id": "bridge:yield:1", "method": "yield"}],
    )
    assert first["output"] == [{"type": "text", "text": "a"}]
    assert second["status"] == "completed"
    assert second["output"] == [{"type": "text", "text": "b"}]
    assert second["value"] == {"status": "yielded", "reason": "check"}


def test_a_finished_run_cannot_be_waited_on_again() -> None:
    async def body(mode: CodeMode) -> str:
        first = await mode.exec("await yield_control();\nreturn 1;")
        assert (await mode.wait(first["runId"]))["value"] == 1
        with pytest.raises(InputError) as caught:
            await mode.wait(first["runId"])
        return caught.value.message

    assert with_mode(body) == "code mode run is unavailable or expired."


def test_a_second_wait_while_one_is_in_flight_is_refused() -> None:
    gate = asyncio.Event()

    async def slow(_: dict[str, Any]) -> Any:
        await gate.wait()
        return "done"

    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        parked = await mode.exec("return await slow();")
        assert parked["status"] == "waiting"
        first = asyncio.ensure_future(mode.wait(parked["runId"]))
        await asyncio.sleep(0)  # let the first wait start; no time passes
        second = await mode.call_tool("wait", {"runId": parked["runId"]})
        gate.set()
        return parked, await first, second

    parked, first, second = with_mode(
        body, tools=[Tool(name="slow", execute=slow)], limits=Limits(timeout_ms=200)
    )
    assert parked["reason"] == "pending_tools"
    assert parked["pendingToolCalls"] == [{"id": "bridge:callValue:1", "method": "callValue"}]
    assert failure(second) == (
        "invalid_input",
        "input",
        "code mode run is already being resumed.",
        False,
    )
    assert first["value"] == "done"


def test_parked_runs_expire_after_their_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    clock["monotonic"] = clock["time"] = lambda: now[0]
    # Expiry is read in whichever module keeps the parked runs; each sees the fake clock.
    for name in ("clawcell._runs._lifecycle", "clawcell._runs._parked"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "time"):
            monkeypatch.setattr(module, "time", SimpleNamespace(**clock))

    async def body(mode: CodeMode) -> list[Any]:
        kept = await mode.exec("await yield_control();\nreturn 'kept';")
        lost = await mode.exec("await yield_control();\nreturn 'lost';")
        now[0] += 4.5
        kept_value = (await mode.wait(kept["runId"]))["value"]
        now[0] += 0.6  # `lost` has been idle for 5.1 s
        with pytest.raises(InputError) as caught:
            await mode.wait(lost["runId"])
        return [kept_value, caught.value.message]

    limits = Limits(timeout_ms=250, snapshot_ttl_seconds=5)
    assert with_mode(body, limits=limits) == ["kept", "code mode run is unavailable or expired."]


def test_the_65th_parked_run_is_refused() -> None:
    async def body(mode: CodeMode) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        parked = [await mode.exec("await yield_control();\nreturn 1;") for _ in range(64)]
        refused = await mode.exec("await yield_control();\nreturn 1;")
        resumed = await mode.wait(parked[0]["runId"])
        return [p["status"] for p in parked], refused, resumed

    statuses, refused, resumed = with_mode(body)
    assert statuses == ["waiting"] * 64
    assert failure(refused)[:3] == ("invalid_input", "input", "too many suspended code mode runs.")
    assert resumed["value"] == 1


# -- concurrency, budgets, lifecycle --------------------------------------------------------


def test_cells_run_concurrently_in_one_code_mode() -> None:
    gate = asyncio.Event()
    arrived: list[int] = []

    async def meet(tool_input: dict[str, Any]) -> Any:
        arrived.append(tool_input["i"])
        if len(arrived) == 4:
            gate.set()
        await gate.wait()
        return tool_input["i"] * 10

    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        cells = [
            mode.exec(
                f"globalThis.mine = {i};\nconst r = await meet({{ i: {i} }});\n"
                "return [r, globalThis.mine];"
            )
            for i in range(4)
        ]
        return list(await asyncio.gather(*cells))

    envelopes = with_mode(
        body, tools=[Tool(name="meet", execute=meet)], limits=Limits(timeout_ms=2000)
    )
    assert [e["value"] for e in envelopes] == [[0, 0], [10, 1], [20, 2], [30, 3]]
    assert sorted(arrived) == [0, 1, 2, 3]


def test_envelopes_are_fitted_to_a_stated_model_context() -> None:
    envelope = exec_one("return 'x'.repeat(5000);", model_context_tokens=1000)
    assert envelope["status"] == "completed"
    assert envelope["value"]["truncated"] is True
    assert len(render(envelope)) <= 512  # 2 * chars must fit max(1024, 1000)


def test_a_model_context_too_small_for_the_status_is_an_error() -> None:
    with pytest.raises(ClawcellError) as caught:
        exec_one("return 1;", model_context_tokens=1)
    assert caught.value.message == (
        "Model tool-result budget cannot fit Code Mode status; use a larger model context."
    )


def test_a_closed_code_mode_refuses_work_and_closes_idempotently() -> None:
    async def main() -> None:
        mode = CodeMode([echo_tool()], limits=ROOMY)
        parked = await mode.exec("await yield_control();\nreturn 1;")
        await mode.aclose()
        await mode.aclose()
        with pytest.raises(ClosedError):
            await mode.exec("return 1;")
        with pytest.raises(ClosedError):
            await mode.wait(parked["runId"])
        with pytest.raises(ClosedError):
            await mode.call_tool("exec", {"code": "return 1;"})

    run(main())


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
    ("arguments", "expected"),
    [
        pytest.param('{"code": "return 2"}', 2, id="json_text_of_an_object"),
        pytest.param({"code": "return 3"}, 3, id="mapping"),
    ],
)
def test_call_tool_accepts_an_argument_object_or_its_json_text(
    arguments: Any, expected: int
) -> None:
    async def body(mode: CodeMode) -> Any:
        return (await mode.call_tool("exec", arguments))["value"]

    assert with_mode(body) == expected


@pytest.mark.parametrize("arguments", ["not json", "[1, 2]", None, 5, ["code"]])
def test_call_tool_rejects_arguments_that_are_not_an_object(arguments: Any) -> None:
    async def body(mode: CodeMode) -> None:
        await mode.call_tool("exec", arguments)

    with pytest.raises(InputError, match=r"^exec arguments must be a JSON object such as"):
        with_mode(body)


def test_code_mode_configuration_mistakes_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"^`tools` must be an iterable"):
        CodeMode(cast(Any, 5))
    with pytest.raises(ConfigurationError, match=r"^`limits` must be a `clawcell.Limits`"):
        CodeMode(limits=cast(Any, 5))
    with pytest.raises(ConfigurationError, match=r"^`session_id` must be a non-empty string"):
        CodeMode(session_id="")
    with pytest.raises(ConfigurationError, match=r"^`store` must be a session store"):
        CodeMode(store=cast(Any, "state.db"))


def test_code_mode_takes_a_single_tool_no_tools_or_a_settings_mapping() -> None:
    assert CodeMode(echo_tool()).catalog.telemetry()["catalogSize"] == 1
    assert CodeMode(None).catalog.telemetry()["catalogSize"] == 0
    assert CodeMode(limits={"timeoutMs": 500}).limits.timeout_ms == 500


def test_a_busy_cell_does_not_block_the_event_loop() -> None:
    # The guest runs on clawcell's worker thread: other coroutines keep running meanwhile.
    # Once the cell is past its tool call and spinning, the loop must still turn 1,000 times
    # before the cell ends (a loop blocked by the guest would turn only after its deadline).
    async def main() -> tuple[bool, Any]:
        started = asyncio.Event()

        async def begin(_: dict[str, Any]) -> None:
            started.set()

        async with CodeMode(
            [Tool(name="begin", execute=begin)], limits=Limits(timeout_ms=60_000)
        ) as mode:
            cell = asyncio.ensure_future(mode.exec("await begin({}); while (true) {}"))
            await started.wait()
            for _ in range(1000):
                await asyncio.sleep(0)  # one loop turn: counts turns, not time
            spinning = not cell.done()
            cell.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await cell
            return spinning, (await mode.exec("return 1"))["value"]

    assert run(main()) == (True, 1)


def test_the_guest_can_run_on_the_loop_thread_for_latency() -> None:
    async def main() -> Any:
        async with CodeMode([echo_tool()], guest_thread=False) as mode:
            return (await mode.exec("return (await echo({ a: 1 })).a + 1"))["value"]

    assert run(main()) == 2


def test_a_cancelled_wait_ends_the_run_and_the_next_cell_runs_normally() -> None:
    started = asyncio.Event()

    async def slow(tool_input: dict[str, Any]) -> Any:
        started.set()
        await asyncio.Event().wait()  # never settles: only the cancellation ends it
        return tool_input

    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        parked = await mode.exec("await yield_control();\nreturn await slow({});")
        assert parked["status"] == "waiting"
        waiting = asyncio.ensure_future(mode.wait(parked["runId"]))
        await started.wait()  # the resumed leg is inside the tool call
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        with pytest.raises(InputError, match="unavailable or expired"):
            await mode.wait(parked["runId"])
        return parked, await mode.exec("return 7")

    parked, after = with_mode(body, tools=[Tool(name="slow", execute=slow)])
    assert parked["reason"] == "yield"
    assert after["value"] == 7


def test_a_guest_shared_between_runtimes_keeps_nothing_of_the_previous_one() -> None:
    async def main() -> list[Any]:
        async with CodeMode() as first:
            await first.exec("globalThis.secret = 'from the first runtime'; return 1")
        async with CodeMode() as second:
            seen = await second.exec("return typeof globalThis.secret")
        return [seen["status"], seen["value"]]

    assert asyncio.run(main()) == ["completed", "undefined"]


# -- what the model reads ---------------------------------------------------------------


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


def test_the_exec_description_says_the_guest_api_returns_promises() -> None:
    description = CodeMode([echo_tool()]).model_tools()[0]["description"]
    assert (
        "Tool calls, `catalog.search`, `describe()`, `results.*` and `API.*` all return "
        "Promises: `await` them before using the value" in description
    )


def test_telemetry_can_be_left_out_of_the_model_text_but_stays_in_the_envelope() -> None:
    async def body(mode: CodeMode) -> tuple[dict[str, Any], str]:
        envelope = await mode.exec("return 1;")
        return envelope, mode.render(envelope)

    envelope, text = with_mode(body, telemetry_in_text=False)
    assert "telemetry" in envelope
    assert text == '{"status":"completed","replaySafe":false,"output":[],"value":1}'
    assert render(envelope, telemetry=False) == text
    assert json.loads(render(envelope)) == envelope  # the default text is the whole envelope


def test_telemetry_is_in_the_model_text_by_default() -> None:
    async def body(mode: CodeMode) -> str:
        return mode.render(await mode.exec("return 1;"))

    assert '"telemetry":{"catalogSize":1' in with_mode(body)
