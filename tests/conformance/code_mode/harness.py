"""Runs recorded Code Mode conformance cases through the public API.

The case format, the tool DSL, the placeholder rules and the matcher are described in
`tests/conformance/README.md` (copied from the shared conformance data).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import clawcell
from clawcell import InputError, Limits
from clawcell.runtime import executor_named
from tests.conformance.dsl import build_tools

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


async def run_case(
    case: dict[str, Any], *, guest_thread: bool = True, executor: str | None = None
) -> list[Any]:
    """Run every step of a case in one fresh runtime (on `executor`, by name; `None`: the
    default); returns masked envelopes."""
    limits = Limits.from_config(case.get("config", {}))
    placeholders = Placeholders()
    results: list[Any] = []
    last_run: str | None = None
    async with clawcell.CodeMode(
        build_tools(case.get("tools", [])),
        limits=limits,
        model_context_tokens=case.get("contextTokenBudget"),
        guest_thread=guest_thread,
        executor=None if executor is None else executor_named(executor),
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
