"""`Bridge` on its own: reply payloads for values and failures (with and without a `code`),
`RawJson` pass-through, the program-data inbox bound, JSON normalisation of tool results and
the settle batch encoding."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from clawcell import ContractError, ToolError
from clawcell._cell._bridge import Bridge, RawJson, Reply, encode_settle_batch, to_guest_json
from tests.conftest import run

PROGRAM_DATA = (
    "Code Mode program-data budget exceeded. Paginate or narrow the tool request, "
    "or consume pending replies before requesting more data."
)


@dataclass
class FakeCatalog:
    """A `HostCatalog` whose tool calls run (and await) `tools[name](input)`."""

    tools: dict[str, Callable[[Any], Any]]

    async def call(self, callable_name: str, input: Any = None) -> Any:
        value = self.tools[callable_name](input)
        return await value if inspect.isawaitable(value) else value

    def search(self, query: object, limit: object = None) -> list[str]:
        if not isinstance(query, str):
            raise TypeError("catalog.search query must be a string.")
        return [f"{query}:{limit}"]

    def describe(self, callable_name: str) -> dict[str, Any]:
        raise KeyError(f"unknown tool {callable_name!r}")

    def api_list(self, prefix: object = None) -> dict[str, Any]:
        return {"prefix": prefix}

    def api_read(self, path: object) -> dict[str, Any]:
        raise ValueError(f"no such file {path!r}")


class FakeResults:
    def load(self, reference: object) -> str:
        return '{"kept": 1.50, "as":"written"}'


def bridge(*, inbox_bytes: int = 1 << 20, **tools: Callable[[Any], Any]) -> Bridge:
    return Bridge(catalog=FakeCatalog(tools), inbox_bytes=inbox_bytes, results=FakeResults())


def call(b: Bridge, method: str, *args: Any) -> Reply:
    """Run one request as the cell would: at once when possible, else as a coroutine."""
    reply = b.run_now("r1", method, list(args))
    return reply if reply is not None else run(b.run("r1", method, list(args)))


def payload(reply: Reply) -> Any:
    return json.loads(reply.payload)


def raises(exc: Exception) -> Callable[[Any], Any]:
    def tool(_: Any) -> Any:
        raise exc

    return tool


# -- failures ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "body"),
    [
        pytest.param(
            ToolError("no stock"), {"message": "no stock", "code": "tool_error"}, id="tool"
        ),
        pytest.param(RuntimeError("boom"), {"message": "boom", "code": "tool_error"}, id="plain"),
        pytest.param(RuntimeError(), {"message": "RuntimeError", "code": "tool_error"}, id="empty"),
        pytest.param(
            ContractError("bad input", code="input_contract"),
            {"message": "bad input", "code": "input_contract"},
            id="contract",
        ),
    ],
)
def test_tool_failures_carry_their_message_and_code(exc: Exception, body: Any) -> None:
    reply = call(bridge(fail=raises(exc)), "callValue", "fail", {})
    assert (reply.id, reply.ok, payload(reply)) == ("r1", False, body)


@pytest.mark.parametrize(
    ("method", "args", "message"),
    [
        ("search", [5], "catalog.search query must be a string."),
        ("describe", ["nope"], "\"unknown tool 'nope'\""),
        ("apiRead", ["x.d.ts"], "no such file 'x.d.ts'"),
        ("teleport", [], "unknown bridge method 'teleport'"),
        ("store", ["k", 1], "store is not available in this runtime"),
        ("load", ["k"], "load is not available in this runtime"),
    ],
)
def test_argument_and_service_failures_have_no_code(
    method: str, args: list[Any], message: str
) -> None:
    reply = call(bridge(), method, *args)
    assert (reply.ok, payload(reply)) == (False, {"message": message})


def test_a_cancelled_request_propagates_cancellation() -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def hang(_: Any) -> Any:
            started.set()
            await asyncio.Event().wait()

        b = Bridge(catalog=FakeCatalog({"hang": hang}), inbox_bytes=1 << 20)
        task = asyncio.ensure_future(b.run("r1", "callValue", ["hang", {}]))
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


# -- values -----------------------------------------------------------------------------


def test_values_are_compact_json() -> None:
    reply = call(bridge(echo=lambda x: x), "callValue", "echo", {"a": [1, "two", None]})
    assert (reply.ok, reply.payload) == (True, '{"a":[1,"two",null]}')


def test_a_missing_tool_input_is_an_empty_object() -> None:
    reply = call(bridge(echo=lambda x: x), "callValue", "echo")
    assert reply.payload == "{}"


def test_nan_and_infinity_become_null() -> None:
    value = {"nan": float("nan"), "inf": [float("inf"), float("-inf")], "ok": 1.5}
    reply = call(bridge(f=lambda _: value), "callValue", "f", {})
    assert reply.payload == '{"nan":null,"inf":[null,null],"ok":1.5}'


def test_tuples_become_lists_and_keys_become_strings() -> None:
    reply = call(bridge(f=lambda _: {1: (True, None), "s": "x"}), "callValue", "f", {})
    assert reply.payload == '{"1":[true,null],"s":"x"}'


def test_objects_with_model_dump_are_dumped_in_json_mode() -> None:
    class Model:
        def model_dump(self, *, mode: str) -> Any:
            return {"mode": mode, "nested": float("inf")}

    reply = call(bridge(f=lambda _: [Model()]), "callValue", "f", {})
    assert reply.payload == '[{"mode":"json","nested":null}]'


@pytest.mark.parametrize(
    ("value", "kind", "path"),
    [
        (object(), "object", "$"),
        ({1, 2}, "set", "$"),
        (b"bytes", "bytes", "$"),
        ({"deep": [1j]}, "complex", "$.deep[0]"),
    ],
    ids=["object", "set", "bytes", "nested_complex"],
)
def test_a_result_that_is_not_json_is_a_tool_error(value: Any, kind: str, path: str) -> None:
    reply = call(bridge(f=lambda _: value), "callValue", "f", {})
    assert (reply.ok, payload(reply)) == (
        False,
        {
            "message": f"value at {path} is not JSON: {kind!r}; "
            "return dicts, lists, strings, numbers, booleans or None",
            "code": "tool_error",
        },
    )


def test_lone_surrogates_are_escaped_for_the_guest() -> None:
    assert to_guest_json("a\ud800b") == '"a\\ud800b"'


def test_raw_json_passes_through_unchanged() -> None:
    reply = call(bridge(), "resultLoad", "ref_1")
    assert (reply.ok, reply.payload) == (True, '{"kept": 1.50, "as":"written"}')
    assert RawJson("[1]").text == "[1]"


def test_host_only_requests_are_answered_without_a_task() -> None:
    b = bridge()
    reply = b.run_now("r7", "search", ["weather", {"limit": 3}])
    assert reply == Reply(id="r7", ok=True, payload='["weather:3"]')
    assert b.run_now("r8", "callValue", ["f", {}]) is None
    assert b.run_now("r9", "sleep", [1]) is None


# -- the program-data inbox ---------------------------------------------------------------


def test_a_reply_larger_than_the_inbox_is_the_program_data_failure() -> None:
    fits = call(bridge(inbox_bytes=12, f=lambda _: "x" * 10), "callValue", "f", {})
    assert (fits.ok, fits.payload) == (True, '"' + "x" * 10 + '"')
    over = call(bridge(inbox_bytes=12, f=lambda _: "x" * 11), "callValue", "f", {})
    assert (over.ok, payload(over)) == (False, {"message": PROGRAM_DATA})


def test_the_inbox_bound_applies_to_raw_json_too() -> None:
    reply = call(bridge(inbox_bytes=10), "resultLoad", "ref_1")
    assert (reply.ok, payload(reply)) == (False, {"message": PROGRAM_DATA})


# -- settle batches -----------------------------------------------------------------------


def test_settle_batches_embed_payloads_verbatim() -> None:
    batch = encode_settle_batch(
        [
            Reply(id="bridge:callValue:1", ok=True, payload='{"a":1}'),
            Reply(id='odd"id', ok=False, payload='{"message":"m","code":"tool_error"}'),
        ]
    )
    assert batch == (
        '[["bridge:callValue:1",true,{"a":1}],'
        '["odd\\"id",false,{"message":"m","code":"tool_error"}]]'
    )
    assert json.loads(batch)[1][0] == 'odd"id'
    assert encode_settle_batch([]) == "[]"
