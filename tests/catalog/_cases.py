"""Recorded conformance cases (copied from ../shared/conformance) and the tools DSL they use."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from clawcell import Tool, ToolResult

DATA = Path(__file__).parent / "data" / "catalog_cases.json"
CASES: dict[str, dict[str, Any]] = {case["id"]: case for case in json.loads(DATA.read_text())}

_probe_active: dict[str, int] = defaultdict(int)
_probe_peak: dict[str, int] = defaultdict(int)


def _outcome(behavior: dict[str, Any], params: dict[str, Any], slept: int) -> Any:
    if "throw" in behavior:
        raise RuntimeError(behavior["throw"])
    if "contentText" in behavior:
        return ToolResult(content=[{"type": "text", "text": behavior["contentText"]}])
    if behavior.get("echoSleep"):
        return {"done": True, "ms": slept}
    if behavior.get("echo"):
        return params
    if "bigArray" in behavior:
        spec = behavior["bigArray"]
        count = params.get(spec.get("countFromInput", ""), spec.get("defaultCount", 1000))
        return [{"i": index, **spec.get("item", {})} for index in range(count)]
    if "byInput" in behavior:
        spec = behavior["byInput"]
        cases = spec["cases"]
        key = params.get(spec["property"])
        return cases[key] if isinstance(key, str) and key in cases else spec.get("default")
    return behavior.get("return")


def make_tool(spec: dict[str, Any]) -> Tool:
    """A `Tool` that behaves as the conformance tools DSL describes (no `behavior` = echo)."""
    behavior: dict[str, Any] = spec.get("behavior", {"echo": True})

    async def execute(params: dict[str, Any]) -> Any:
        slept = behavior.get("sleepMs", 0)
        if "sleepMsFromInput" in behavior:
            slept = params.get(behavior["sleepMsFromInput"], behavior.get("defaultSleepMs", 0))
        if "probe" in behavior:
            return await _probe(behavior["probe"])
        if slept:
            await asyncio.sleep(slept / 1000)
        outcome = _outcome(behavior, params, slept)
        return outcome if isinstance(outcome, ToolResult) else json.loads(json.dumps(outcome))

    return Tool(
        name=spec["name"],
        description=spec.get("description", ""),
        label=spec.get("label"),
        parameters=spec.get("parameters", {"type": "object", "properties": {}}),
        output_schema=spec.get("outputSchema"),
        execution_mode=spec.get("executionMode", "parallel"),
        execute=execute,
    )


async def _probe(spec: dict[str, Any]) -> dict[str, int]:
    name = spec["name"]
    _probe_active[name] += 1
    _probe_peak[name] = max(_probe_peak[name], _probe_active[name])
    try:
        await asyncio.sleep(spec.get("sleepMs", 50) / 1000)
    finally:
        _probe_active[name] -= 1
    return {"maxActive": _probe_peak[name]}


def reset_probes() -> None:
    """Forget probe peaks between tests."""
    _probe_active.clear()
    _probe_peak.clear()


def case_tools(case_id: str) -> list[Tool]:
    """The tools of one recorded case."""
    return [make_tool(spec) for spec in CASES[case_id]["tools"]]


def expected_value(case_id: str, step: int = 0) -> Any:
    """The recorded guest value of one step."""
    return CASES[case_id]["expected"][step]["value"]
