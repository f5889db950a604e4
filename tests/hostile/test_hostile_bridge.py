"""Deep and huge bridge arguments: always an envelope, a catchable error, bounded host
memory (D1, D9, D14)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell._cell import _requests as requests  # pyright: ignore[reportPrivateUsage]
from tests.conftest import echo_tool, failure, run

DEPTH = (
    "Code Mode bridge arguments nest deeper than 128 levels. "
    "Flatten the value before passing it to the host."
)
ROOMY = Limits(timeout_ms=60_000)
# Every bridge method that carries a guest value, called with the value `o`.
CALLS = {
    "tool_call": "echo({ o })",
    "tool_call_bare": "echo(o)",
    "results_save": "results.save(o)",
    "store": "store('k', o)",
    "load": "load(o)",
    "catalog_search": "catalog.search(o)",
    "catalog_search_options": "catalog.search('x', { limit: o })",
    "api_read": "API.read(o)",
    "api_list": "API.list(o)",
    "results_load": "results.load(o)",
    "results_delete": "results.delete(o)",
    "yield_control": "yield_control(o)",
}
NESTED = "let o = [];\nfor (let i = 0; i < {depth}; i++) o = {wrap};\n"
CAUGHT = "try {{ await {call}; return 'no error'; }} catch (e) {{ return e.message; }}"


def _exec(code: str, tools: list[Tool] | None = None, limits: Limits = ROOMY) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with CodeMode([echo_tool()] if tools is None else tools, limits=limits) as mode:
            first = await mode.exec(code)
            after = await mode.exec("return await echo({ clean: true });")
            assert after["value"] == {"clean": True}, after
            return first

    return run(main())


@pytest.mark.parametrize("depth", [200, 1000, 3000])
@pytest.mark.parametrize("wrap", ["[o]", "{ o }"])
@pytest.mark.parametrize("call", [pytest.param(v, id=k) for k, v in CALLS.items()])
def test_deeply_nested_bridge_arguments_reject_with_a_catchable_error(
    call: str, wrap: str, depth: int
) -> None:
    code = NESTED.format(depth=depth, wrap=wrap) + CAUGHT.format(call=call)
    envelope = _exec(code)
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == DEPTH


def test_arguments_just_inside_the_depth_cap_reach_the_tool() -> None:
    code = NESTED.format(depth=125, wrap="[o]") + "const r = await echo({ o });\n"
    code += "let d = 0;\nfor (let x = r.o; Array.isArray(x); x = x[0]) d++;\nreturn d;"
    assert _exec(code)["value"] == 126  # with the argument list and `{ o }`: 128 levels


def test_an_uncaught_deep_argument_fails_the_cell_with_the_depth_message() -> None:
    code = NESTED.format(depth=3000, wrap="[o]") + "await echo({ o });"
    code_, _phase, error, _ = failure(_exec(code))
    assert code_ == "internal_error"
    assert error.startswith("Error: " + DEPTH + "\n    at ")


def _holding_tool(started: asyncio.Event | None = None) -> tuple[Tool, asyncio.Event]:
    release = asyncio.Event()

    async def hold(_: dict[str, Any]) -> Any:
        if started is not None:
            started.set()
        await release.wait()
        return "held"

    return Tool(name="hold", execute=hold), release


CELL_BUDGET = (
    "Code Mode pending-request budget exceeded: this request's arguments would hold about "
    "{cost} bytes on the host, and the cell's pending requests may hold 10485760 bytes. "
    "Pass smaller arguments, or await pending calls before starting more."
)


def test_arguments_that_parse_into_huge_host_objects_are_refused_before_parsing() -> None:
    code = "try { await echo({ a: new Array(2e6).fill({}) }); }\ncatch (e) { return e.message; }"
    cost = requests.host_cost("[" + '"echo",{"a":[' + ",".join(["{}"] * 2_000_000) + "]}]")
    assert _exec(code)["value"] == CELL_BUDGET.format(cost=cost)


def test_a_sparse_array_of_a_million_holes_reaches_a_tool() -> None:
    async def count(params: dict[str, Any]) -> int:
        return len(params["a"])

    size = Tool(name="size", execute=count, parameters={"type": "object"})
    envelope = _exec("return await size({ a: new Array(1e6) });", [size, echo_tool()])
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == 1_000_000


def test_pending_arguments_of_one_cell_share_its_allowance() -> None:
    # Four 3 MB arguments in one frontier: the fourth does not fit the 10 MiB allowance,
    # whatever the tools do meanwhile.
    code = (
        "const s = 'x'.repeat(3e6);\n"
        "const ps = [0, 1, 2, 3].map((i) => echo({ i, s }).then((r) => r.i, (e) => e.message));\n"
        "return await Promise.all(ps);"
    )
    cost = requests.host_cost('["echo",{"i":3,"s":"' + "x" * 3_000_000 + '"}]')
    assert _exec(code)["value"] == [0, 1, 2, CELL_BUDGET.format(cost=cost)]


def test_pending_arguments_held_by_a_running_tool_count_until_it_answers() -> None:
    async def main() -> list[Any]:
        tool, release = _holding_tool()
        async with CodeMode([tool, echo_tool()], limits=ROOMY) as mode:
            code = (
                "const s = 'x'.repeat(4e6);\nconst held = hold({ s });\n"
                "let refused;\ntry { await echo({ s: s + s }); } catch (e) { refused = e.code; }\n"
                "return [refused, typeof held];"
            )
            task = asyncio.ensure_future(mode.exec(code))
            envelope = await asyncio.wait_for(_park_or_finish(task, release), 60)
            return [envelope["status"], envelope.get("value")]

    assert run(main()) == ["completed", [None, "object"]]


async def _park_or_finish(task: asyncio.Future[dict[str, Any]], release: asyncio.Event) -> Any:
    while not task.done():
        await asyncio.sleep(0)
        release.set()
    return task.result()


def test_the_process_allowance_is_shared_by_all_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(requests, "PROCESS_PENDING_BYTES", 6_000_000)
    started = asyncio.Event()

    async def main() -> Any:
        tool, release = _holding_tool(started)
        async with (
            CodeMode([tool], limits=ROOMY) as first,
            CodeMode([echo_tool()], limits=ROOMY) as second,
        ):
            holding = asyncio.ensure_future(
                first.exec("return await hold({ s: 'x'.repeat(4e6) });")
            )
            await started.wait()
            refused = await second.exec(
                "try { await echo({ s: 'y'.repeat(4e6) }); } catch (e) { return e.message; }"
            )
            release.set()
            return [refused["value"], (await holding)["value"]]

    busy = (
        "Code Mode host is busy: the pending requests of all cells in this process would hold "
        "more than 6000000 bytes. Await pending calls or retry later with smaller arguments."
    )
    assert run(main()) == [busy, "held"]


def test_eight_parallel_4mb_tool_calls_overflow_the_cell_allowance_catchably() -> None:
    code = (
        "return await Promise.all(Array.from({ length: 8 }, () => echo({ s: 'x'.repeat(4e6) })));"
    )
    code_, phase, error, _ = failure(_exec(code))
    assert (code_, phase) == ("internal_error", "bridge")
    cost = requests.host_cost('["echo",{"s":"' + "x" * 4_000_000 + '"}]')
    assert error.startswith("Error: " + CELL_BUDGET.format(cost=cost) + "\n    at ")


def test_a_step_report_too_large_for_guest_memory_is_an_out_of_memory_envelope() -> None:
    # Sixteen 4 MB queries and their JSON do not fit the 64 MiB guest heap: the report
    # cannot be built, and the cell fails instead of `exec` raising.
    code = (
        "return await Promise.all(Array.from({ length: 16 }, () => "
        "catalog.search('q'.repeat(4e6))));"
    )
    assert failure(_exec(code))[:3] == ("internal_error", "guest", "InternalError: out of memory")


def test_a_five_megabyte_search_query_is_searched_on_its_start() -> None:
    code = "return (await catalog.search('echo ' + 'x'.repeat(5e6))).map((t) => t.callableName);"
    envelope = _exec(code)
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == ["echo"]
