"""The tools DSL of the recorded conformance cases (`tests/conformance/README.md`, "tools").

One interpreter for both recorded sets: the Code Mode cases (`code_mode/harness.py`) and the
catalog cases (`tests/catalog/_cases.py`).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

import clawcell
from clawcell import Tool

__all__ = ["build_tools"]


class _Probes:
    def __init__(self) -> None:
        self.active: dict[str, int] = {}
        self.highest: dict[str, int] = {}


def _behaviour(spec: dict[str, Any], probes: _Probes) -> Callable[[dict[str, Any]], Any]:
    behaviour: dict[str, Any] = spec.get("behavior") or {"echo": True}

    async def execute(tool_input: dict[str, Any]) -> Any:
        slept = await _sleep(behaviour, tool_input)
        return copy.deepcopy(await _result(behaviour, tool_input, slept, probes))

    return execute


async def _sleep(behaviour: dict[str, Any], tool_input: dict[str, Any]) -> int:
    ms = 0
    if "sleepMs" in behaviour:
        ms = int(behaviour["sleepMs"])
    elif "sleepMsFromInput" in behaviour:
        ms = int(tool_input.get(behaviour["sleepMsFromInput"], behaviour.get("defaultSleepMs", 0)))
    if ms:
        await asyncio.sleep(ms / 1000)
    return ms


async def _result(
    behaviour: dict[str, Any], tool_input: dict[str, Any], slept: int, probes: _Probes
) -> Any:
    if "throw" in behaviour:
        raise RuntimeError(behaviour["throw"])
    if "contentText" in behaviour:
        return clawcell.ToolResult(content=[{"type": "text", "text": behaviour["contentText"]}])
    if behaviour.get("echoSleep"):
        return {"done": True, "ms": slept}
    if behaviour.get("echo"):
        return tool_input or {}
    if "bigArray" in behaviour:
        big = behaviour["bigArray"]
        count = tool_input.get(big.get("countFromInput", ""), big.get("defaultCount", 1000))
        return [{"i": i, **big.get("item", {})} for i in range(int(count))]
    if "byInput" in behaviour:
        by = behaviour["byInput"]
        key = tool_input.get(by["property"])
        cases = by["cases"]
        if isinstance(key, str) and key in cases:
            return cases[key]
        return by.get("default")
    if "return" in behaviour:
        return behaviour["return"]
    if "probe" in behaviour:
        return await _probe(behaviour["probe"], probes)
    return tool_input or {}


async def _probe(probe: dict[str, Any], probes: _Probes) -> dict[str, int]:
    name = probe["name"]
    probes.active[name] = probes.active.get(name, 0) + 1
    probes.highest[name] = max(probes.highest.get(name, 0), probes.active[name])
    try:
        await asyncio.sleep(probe.get("sleepMs", 50) / 1000)
    finally:
        probes.active[name] -= 1
    return {"maxActive": probes.highest[name]}


def build_tools(specs: list[dict[str, Any]]) -> list[Tool]:
    probes = _Probes()
    tools: list[Tool] = []
    for spec in specs:
        tools.append(
            Tool(
                name=spec["name"],
                label=spec.get("label"),
                description=spec.get("description", ""),
                parameters=spec.get("parameters", {"type": "object", "properties": {}}),
                output_schema=spec.get("outputSchema"),
                execution_mode=spec.get("executionMode", "parallel"),
                execute=_behaviour(spec, probes),
            )
        )
    return tools
