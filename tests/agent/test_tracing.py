"""OpenTelemetry spans of turns, model calls, cells and nested tool calls."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sys
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import clawcell
from clawcell.agent import Agent, CellOutput, ScriptedModel, exec_call
from tests.agent._helpers import blocking_tool, collect, shipment_tools
from tests.conftest import run

CELL = "const rows = await list_shipments(); await chart(); return rows.length;"


def _traced(model: ScriptedModel, **options: Any) -> tuple[Agent, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(model=model, tools=shipment_tools(), tracer_provider=provider, **options)
    return agent, exporter


def _by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_a_turn_has_model_call_cell_and_tool_spans_nested_as_they_ran() -> None:
    agent, exporter = _traced(ScriptedModel([exec_call(CELL), "2 shipments"]))

    async def main() -> None:
        async with agent:
            await collect(agent, "s", "count")

    run(main())
    spans = exporter.get_finished_spans()
    (turn,) = _by_name(spans, "clawcell.agent.turn")
    calls = _by_name(spans, "clawcell.model.call")
    (cell,) = _by_name(spans, "clawcell.cell")
    tools = _by_name(spans, "clawcell.tool")
    assert len(calls) == 2
    assert {_parent_id(s) for s in [*calls, cell]} == {_span_id(turn)}
    assert [_parent_id(t) for t in tools] == [_span_id(cell)] * 2
    assert sorted(str((t.attributes or {})["clawcell.tool"]) for t in tools) == [
        "chart",
        "list_shipments",
    ]
    attributes = dict(cell.attributes or {})
    assert attributes["clawcell.cell.code_sha256"] == hashlib.sha256(CELL.encode()).hexdigest()
    assert attributes["clawcell.cell.code_bytes"] == len(CELL)
    assert attributes["clawcell.cell.status"] == "completed"
    assert CELL not in [str(v) for s in spans for v in (s.attributes or {}).values()]
    assert (turn.attributes or {})["clawcell.turn.tool_calls"] == 2
    assert turn.status.status_code == StatusCode.UNSET


def test_a_failed_cell_span_carries_the_envelope_failure_code() -> None:
    agent, exporter = _traced(
        ScriptedModel([exec_call("while (true) {}"), "too slow"]),
        limits=clawcell.Limits(timeout_ms=100),
    )

    async def main() -> None:
        async with agent:
            await collect(agent, "s", "spin")

    run(main())
    (cell,) = _by_name(exporter.get_finished_spans(), "clawcell.cell")
    assert cell.status.status_code == StatusCode.ERROR
    assert (cell.attributes or {})["clawcell.failure_code"] == "timeout"


def test_a_turn_that_hits_a_cap_ends_its_span_with_the_cap_code() -> None:
    agent, exporter = _traced(ScriptedModel([exec_call("return 1")] * 3), max_model_turns=1)

    async def main() -> None:
        async with agent:
            with pytest.raises(clawcell.TurnLimitError):
                await collect(agent, "s", "loop")

    run(main())
    (turn,) = _by_name(exporter.get_finished_spans(), "clawcell.agent.turn")
    assert turn.status.status_code == StatusCode.ERROR
    assert (turn.attributes or {})["clawcell.failure_code"] == "max_model_turns"


def test_without_opentelemetry_the_agent_runs_and_records_no_spans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # the import now fails
    agent, exporter = _traced(ScriptedModel([exec_call(CELL), "two"]))

    async def main() -> str:
        async with agent:
            events = await collect(agent, "s", "go")
        return events[-1].type

    assert run(main()) == "turn_finished"
    assert exporter.get_finished_spans() == ()


def test_a_turn_closed_early_ends_its_open_spans_as_cancelled() -> None:
    started = asyncio.Event()
    model = ScriptedModel([exec_call("text('go'); return await block()")])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def main() -> None:
        tools = [blocking_tool(started)]
        agent = Agent(model=model, tools=tools, tracer_provider=provider)
        async with agent, contextlib.aclosing(agent.run("s", "block")) as events:
            async for event in events:
                if isinstance(event, CellOutput):
                    await asyncio.wait_for(started.wait(), timeout=60)
                    break

    run(main())
    spans = exporter.get_finished_spans()
    codes = {s.name: (s.attributes or {}).get("clawcell.failure_code") for s in spans}
    assert codes == {
        "clawcell.agent.turn": "cancelled",
        "clawcell.model.call": None,
        "clawcell.cell": "cancelled",
        "clawcell.tool": "cancelled",
    }
