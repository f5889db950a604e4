"""Catalog behaviour: search arguments, counters, hooks, errors and scheduling."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from clawcell import Limits, Tool, ToolResult
from clawcell.catalog import Catalog, ExecutionMode, HookDecision, ToolCallEvent
from clawcell.errors import ContractError, InputError, ToolError


def _tool(name: str, description: str = "", **options: Any) -> Tool:
    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "input": params}

    return Tool(name=name, description=description, execute=execute, **options)


@pytest.mark.parametrize("query", [None, 3, ["x"]])
def test_search_rejects_a_non_string_query(query: object) -> None:
    with pytest.raises(InputError, match=r"^search query must be a string\.$"):
        Catalog([_tool("a")]).search(query)


@pytest.mark.parametrize("limit", [0, -1, 1.5])
def test_search_rejects_a_limit_that_is_not_a_positive_integer(limit: object) -> None:
    catalog = Catalog([_tool("a")])
    with pytest.raises(InputError, match=r"^limit must be a positive integer\.$"):
        catalog.search("a", limit)
    assert catalog.telemetry()["searchCount"] == 1  # counted, as in the release


@pytest.mark.parametrize("limit", ["2", True, None])
def test_search_ignores_a_limit_that_is_no_number(limit: object) -> None:
    tools = [_tool(f"report_{i}", "Make a report") for i in range(12)]
    catalog = Catalog(tools, limits=Limits(search_default_limit=3))
    assert len(catalog.search("report", limit)) == 3


def test_search_limits_default_and_clamp() -> None:
    tools = [_tool(f"report_{i}", "Make a report") for i in range(12)]
    catalog = Catalog(tools, limits=Limits(search_default_limit=3, max_search_limit=5))
    assert len(catalog.search("report")) == 3
    assert len(catalog.search("report", 50)) == 5
    assert catalog.telemetry()["searchCount"] == 2


def test_search_prefers_an_exact_name_case_insensitively() -> None:
    catalog = Catalog([_tool("Send_Mail", "send mail"), _tool("mail_log", "send mail log")])
    assert catalog.search("  send_mail ") == ["Send_Mail"]


def test_search_ranks_stemmed_description_matches() -> None:
    catalog = Catalog(
        [
            _tool("invoices", "Find overdue invoices locally"),
            _tool("weather", "Current weather"),
            _tool("billing", "Invoice totals and payments"),
        ]
    )
    assert catalog.search("overdue invoice") == ["invoices", "billing"]
    assert catalog.search("nothing here") == []


def test_counter_scope_is_stable_within_a_catalog_and_new_per_catalog() -> None:
    first = Catalog([_tool("a")])
    grown = first.with_tools([_tool("b", source="client")])
    first.search("a")
    assert grown.telemetry()["counterScope"] == first.telemetry()["counterScope"]
    assert grown.telemetry()["searchCount"] == 1
    assert Catalog([_tool("a")]).telemetry()["counterScope"] != first.telemetry()["counterScope"]


def test_calling_an_unknown_name_is_an_input_error() -> None:
    with pytest.raises(InputError, match="Unknown tool: nope"):
        asyncio.run(Catalog([_tool("a")]).call("nope", {}))


def test_tool_error_message_reaches_the_guest_verbatim() -> None:
    def fail(params: dict[str, Any]) -> None:
        raise ToolError("quota exhausted; retry tomorrow")

    with pytest.raises(ToolError) as caught:
        asyncio.run(Catalog([Tool(name="t", execute=fail)]).call("t", {}))
    assert (caught.value.code, caught.value.message) == (
        "tool_error",
        "quota exhausted; retry tomorrow",
    )


def test_any_other_exception_becomes_a_tool_error_with_its_text() -> None:
    def fail(params: dict[str, Any]) -> None:
        raise KeyError("missing")

    with pytest.raises(ToolError) as caught:
        asyncio.run(Catalog([Tool(name="t", execute=fail)]).call("t", {}))
    assert caught.value.message == "'missing'"
    assert isinstance(caught.value.__cause__, KeyError)


def test_details_win_over_content_and_values_are_detached_json() -> None:
    shared = {"rows": (1, 2)}
    result = ToolResult(details=shared, content=[{"type": "text", "text": "ignored"}])
    value = asyncio.run(Catalog([Tool(name="t", execute=lambda p: result)]).call("t", {}))
    assert value == {"rows": [1, 2]}


def test_a_blocking_hook_stops_the_call_before_the_tool_runs() -> None:
    ran: list[object] = []

    def deny(event: ToolCallEvent) -> HookDecision:
        return HookDecision(block=True, reason="writes are paused")

    catalog = Catalog([Tool(name="t", execute=ran.append)], before_tool_call=[deny])
    with pytest.raises(ToolError) as caught:
        asyncio.run(catalog.call("t", {}))
    assert caught.value.message == 'Tool "t" was blocked before execution: writes are paused'
    assert ran == []


def test_input_is_validated_after_a_before_hook_rewrites_it() -> None:
    params = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    async def fix(event: ToolCallEvent) -> HookDecision:
        return HookDecision(params={"n": 1})

    catalog = Catalog([Tool(name="t", execute=lambda p: p, parameters=params)])
    with pytest.raises(ContractError):
        asyncio.run(catalog.call("t", {}))
    fixed = Catalog(
        [Tool(name="t", execute=lambda p: p, parameters=params)], before_tool_call=[fix]
    )
    assert asyncio.run(fixed.call("t", {})) == {"n": 1}


def test_an_after_hook_result_is_what_the_contract_checks() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}

    def patch(event: ToolCallEvent) -> ToolResult:
        return ToolResult(details={"n": 2})

    catalog = Catalog(
        [Tool(name="t", execute=lambda p: {"n": "bad"}, output_schema=schema)],
        after_tool_call=[patch],
    )
    assert asyncio.run(catalog.call("t", {})) == {"n": 2}


def _probe_tools(mode_a: str, mode_b: str, log: list[str]) -> list[Tool]:
    def make(name: str, mode: str) -> Tool:
        async def execute(params: dict[str, Any]) -> None:
            log.append(f"start {name}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            log.append(f"end {name}")

        return Tool(name=name, execute=execute, execution_mode=cast("ExecutionMode", mode))

    return [make("a", mode_a), make("b", mode_b)]


def _run_pair(catalog: Catalog) -> None:
    async def run() -> None:
        await asyncio.gather(catalog.call("a", {}), catalog.call("b", {}), catalog.call("a", {}))

    asyncio.run(run())


def test_parallel_tools_overlap() -> None:
    log: list[str] = []
    _run_pair(Catalog(_probe_tools("parallel", "parallel", log)))
    assert log[:3] == ["start a", "start b", "start a"]


def test_a_sequential_tool_waits_for_earlier_calls_and_holds_back_later_ones() -> None:
    log: list[str] = []
    _run_pair(Catalog(_probe_tools("parallel", "sequential", log)))
    assert log == ["start a", "end a", "start b", "end b", "start a", "end a"]


def test_scheduling_is_shared_by_catalogs_grown_from_one_another() -> None:
    log: list[str] = []
    first = Catalog(_probe_tools("sequential", "sequential", log)[:1])
    grown = first.with_tools(_probe_tools("sequential", "sequential", log)[1:])

    async def run() -> None:
        await asyncio.gather(first.call("a", {}), grown.call("b", {}))

    asyncio.run(run())
    assert log == ["start a", "end a", "start b", "end b"]


def test_a_cancelled_waiter_does_not_block_the_queue() -> None:
    gate = asyncio.Event

    async def run() -> list[str]:
        release = gate()
        order: list[str] = []

        async def slow(params: dict[str, Any]) -> None:
            order.append("slow")
            await release.wait()

        async def fast(params: dict[str, Any]) -> None:
            order.append("fast")

        catalog = Catalog(
            [
                Tool(name="slow", execute=slow, execution_mode="sequential"),
                Tool(name="fast", execute=fast, execution_mode="sequential"),
            ]
        )
        first = asyncio.create_task(catalog.call("slow", {}))
        await asyncio.sleep(0)
        doomed = asyncio.create_task(catalog.call("fast", {}))
        await asyncio.sleep(0)
        doomed.cancel()
        release.set()
        await first
        await catalog.call("fast", {})
        return order

    assert asyncio.run(run()) == ["slow", "fast"]


def test_a_query_of_megabytes_is_searched_on_its_first_2048_characters() -> None:
    catalog = Catalog([_tool("weather_now", "current weather"), _tool("mail", "send mail")])
    head = "weather " + "x" * (2048 - 8)
    assert catalog.search(head + " mail" * 1_000_000) == catalog.search(head)
    assert catalog.search(head + " mail" * 1_000_000) == ["weather_now"]


def test_the_search_index_is_built_at_the_first_search_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawcell.catalog import _tool_search as _search

    built: list[int] = []
    original = _search.SearchIndex.__init__

    def counting(self: _search.SearchIndex, documents: Any) -> None:
        built.append(len(documents))
        original(self, documents)

    monkeypatch.setattr(_search.SearchIndex, "__init__", counting)
    catalog = Catalog([_tool("invoices", "Find overdue invoices"), _tool("weather")])
    grown = catalog.with_tools([_tool("billing", "Invoice totals")])
    assert built == []  # building a catalog (or growing one) ranks nothing
    assert catalog.search("invoice") == ["invoices"]
    assert grown.search("invoice") == ["invoices", "billing"]
    assert catalog.search("overdue") == ["invoices"]
    assert built == [2, 3]  # once per catalog, then kept


def test_a_slot_is_taken_at_once_only_when_acquire_would_not_wait() -> None:
    from clawcell.catalog._call_scheduler import CallScheduler

    async def run() -> list[object]:
        scheduler = CallScheduler()
        seen: list[object] = [scheduler.admit_now(False), scheduler.admit_now(False)]
        seen.append(scheduler.admit_now(True))  # shared slots are held
        waiting = asyncio.create_task(scheduler.acquire(True))
        await asyncio.sleep(0)
        scheduler.release(False)
        scheduler.release(False)
        await waiting  # the queued exclusive call got the slot when the last one left
        seen.append(scheduler.admit_now(False))  # an exclusive slot is held
        scheduler.release(True)
        seen.append(scheduler.admit_now(True))
        return seen

    assert asyncio.run(run()) == [True, True, False, False, True]


def test_a_call_does_not_overtake_one_waiting_for_its_slot() -> None:
    from clawcell.catalog._call_scheduler import CallScheduler

    async def run() -> bool:
        scheduler = CallScheduler()
        await scheduler.acquire(False)
        waiting = asyncio.create_task(scheduler.acquire(True))
        await asyncio.sleep(0)
        overtook = scheduler.admit_now(False)  # free for a shared call, but one is queued
        waiting.cancel()
        return overtook

    assert asyncio.run(run()) is False
