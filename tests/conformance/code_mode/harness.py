"""Runs recorded Code Mode conformance cases through the public API.

The case format, the tool DSL, the placeholder rules and the matcher are described in
`tests/conformance/README.md` (copied from the shared conformance data).
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import clawcell
from clawcell import InputError, Limits, Tool

CASES_FILE = Path(__file__).with_name("cases.json")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def load_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(CASES_FILE.read_text("utf-8"))
    return cases


def matches(expected: Any, actual: Any, mode: str = "exact") -> bool:
    """The reference matcher of the conformance README."""
    if isinstance(expected, dict) and set(expected) == {"$regex"}:  # pyright: ignore[reportUnknownArgumentType]
        pattern = str(expected["$regex"])  # pyright: ignore[reportUnknownArgumentType]
        return isinstance(actual, str) and re.fullmatch(pattern, actual, re.S) is not None
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or (mode == "exact" and set(expected) != set(actual)):  # pyright: ignore[reportUnknownArgumentType]
            return False
        return all(k in actual and matches(v, actual[k], mode) for k, v in expected.items())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)  # pyright: ignore[reportUnknownArgumentType]
            and all(matches(e, a, mode) for e, a in zip(expected, actual, strict=True))  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


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


class Placeholders:
    """Maps real ids to `<uuid:N>` / `<counterScope:N>` placeholders and back."""

    def __init__(self) -> None:
        self.uuids: dict[str, str] = {}
        self.scopes: dict[str, str] = {}

    def _uuid(self, match: re.Match[str]) -> str:
        real = match.group(0)
        if real not in self.uuids:
            self.uuids[real] = f"<uuid:{len(self.uuids) + 1}>"
        return self.uuids[real]

    def mask(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {str(k): self.mask(v, str(k)) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if isinstance(value, list):
            return [self.mask(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, str):
            if key == "counterScope":
                if value not in self.scopes:
                    self.scopes[value] = f"<counterScope:{len(self.scopes) + 1}>"
                return self.scopes[value]
            return _UUID.sub(self._uuid, value)
        return value

    def unmask(self, code: str) -> str:
        for real, placeholder in self.uuids.items():
            code = code.replace(placeholder, real)
        return code


async def run_case(case: dict[str, Any], *, guest_thread: bool = True) -> list[Any]:
    """Run every step of a case in one fresh runtime; returns masked envelopes."""
    limits = Limits.from_config(case.get("config", {}))
    placeholders = Placeholders()
    results: list[Any] = []
    last_run: str | None = None
    async with clawcell.CodeMode(
        build_tools(case.get("tools", [])),
        limits=limits,
        model_context_tokens=case.get("contextTokenBudget"),
        guest_thread=guest_thread,
    ) as mode:
        for step in case["steps"]:
            try:
                if step["op"] == "exec":
                    args: dict[str, Any] = {"code": placeholders.unmask(step["code"])}
                    if step.get("restartSafe"):
                        args["restartSafe"] = True
                    envelope = await mode.call_tool("exec", args)
                else:
                    run_id = last_run if step["runId"] == "$last" else step["runId"]
                    envelope = await mode.call_tool("wait", {"runId": run_id})
            except InputError as exc:
                results.append({"thrown": {"name": "ToolInputError", "message": str(exc)}})
                continue
            if envelope.get("status") == "waiting":
                last_run = envelope["runId"]
            results.append(placeholders.mask(envelope))
    return results
