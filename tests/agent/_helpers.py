"""Shared helpers of the agent tests: tools, a turn runner and event filters."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from clawcell import Tool, ToolResult
from clawcell.agent import Agent, AgentEvent


async def list_shipments(_: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": "a-101", "paid": True, "tons": 3.5}, {"id": "b-202", "paid": False, "tons": 12}]


async def chart(_: dict[str, Any]) -> ToolResult:
    return ToolResult(
        details={"drawn": True},
        content=[{"type": "text", "text": "MEDIA:https://example.com/chart.png"}],
    )


def shipment_tools() -> list[Tool]:
    return [
        Tool(name="list_shipments", description="List shipments.", execute=list_shipments),
        Tool(name="chart", description="Draw a chart.", execute=chart),
    ]


def blocking_tool(started: asyncio.Event) -> Tool:
    async def block(_: dict[str, Any]) -> None:
        started.set()
        await asyncio.Event().wait()  # never set: only cancellation ends it

    return Tool(name="block", execute=block)


async def collect(agent: Agent, session_id: str, text: str) -> list[AgentEvent]:
    return [event async for event in agent.run(session_id, text)]


def types(events: Sequence[AgentEvent]) -> list[str]:
    return [event.type for event in events]


def last_of(events: Sequence[AgentEvent], kind: type[Any]) -> Any:
    return next(event for event in reversed(events) if isinstance(event, kind))
