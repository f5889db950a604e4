"""Cells recorded from the original by `scripts/oracle/record_code_mode.py`, run in clawcell.

Each cell runs in a fresh `CodeMode` through `call_tool("exec" | "wait")`; its envelopes must equal
the recorded ones, with run ids, result ids and counter scopes mapped to placeholders (the only
nondeterministic values). A cell where clawcell differs on purpose is listed in
`docs/divergences.md` and in `_DIVERGENT` below with clawcell's own envelope test beside it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

import clawcell
from tests.conformance.dsl import build_tools

from .harness import matches, run_case

RECORDED = Path(__file__).with_name("recorded")


def _documents() -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text("utf-8"))
        for path in sorted(RECORDED.glob("*.json"))
        if path.name != "describe.json"
    ]


def _cases() -> list[Any]:
    params: list[Any] = []
    for document in _documents():
        for cell in document["cells"]:
            case = {**cell, "tools": document["catalogs"][cell["catalog"]], "match": "exact"}
            params.append(pytest.param(case, id=cell["id"]))
    return params


_NATIVE_CYCLE = {
    "$regex": r"RangeError: Maximum call stack size exceeded\n"
    r"(    at (join|toString) \(native\)\n){10}"
}
_TAIL = r"    at start \(clawcell:controller\.js:\d+:\d+\)\n"

# Cell id -> (reason in docs/divergences.md, clawcell's own value of the keys that differ).
_DIVERGENT: dict[str, tuple[str, dict[str, Any]]] = {
    **{
        f"cyclic/text/{name}": ("engine-stack-depth", {"error": _NATIVE_CYCLE})
        for name in ("self-array", "self-array-only", "deep-array", "two-arrays")
    },
    **{
        f"traps/revoked_proxy/{sink}": (
            "native-frame-name",
            {
                "error": "TypeError: revoked proxy\n    at String (native)\n"
                "    at <anonymous> (openclaw-code-mode:user.js:2:6)\n"
            },
        )
        for sink in ("text", "json")
    },
    "errors/not-a-function-on-promise": ("no-calls-after-failure", {"telemetry.callCount": 0}),
    "errors/length-of-unawaited": ("no-calls-after-failure", {"telemetry.callCount": 0}),
    "errors/caught-stack": (
        "own-controller-frames",
        {"value": {"$regex": r"    at <anonymous> \(openclaw-code-mode:user\.js:2:7\)\n" + _TAIL}},
    ),
    "errors/caught-tool-stack": (
        "own-controller-frames",
        {"value": "    at <anonymous> (openclaw-code-mode:user.js:1:13)\n"},
    ),
}


def _expected(entry: Any, overrides: dict[str, Any] | None = None) -> Any:
    expected: dict[str, Any] = json.loads(json.dumps(entry))
    if "thrown" in expected:
        thrown: dict[str, Any] = cast(dict[str, Any], expected["thrown"])
        return {"thrown": {"name": "ToolInputError", **thrown}}
    for dotted, value in (overrides or {}).items():
        *parents, last = dotted.split(".")
        target = expected
        for key in parents:
            target = target[key]
        target[last] = value
    return expected


def test_every_divergent_cell_is_recorded_and_still_differs() -> None:
    ids = {param.values[0]["id"]: param.values[0] for param in _cases()}
    for cell_id, (_, overrides) in _DIVERGENT.items():
        recorded = ids[cell_id]["expected"][0]
        assert _expected(recorded, overrides) != recorded, cell_id


def test_the_recordings_say_which_oracle_wrote_them() -> None:
    for document in _documents():
        assert document["oracle"]["openclawVersion"] == "2026.9.6"
        assert document["generator"] == "scripts/oracle/record_code_mode.py"


@pytest.mark.parametrize("case", _cases())
def test_recorded_cell(case: dict[str, Any]) -> None:
    actual = asyncio.run(run_case(case))
    assert len(actual) == len(case["expected"])
    overrides = _DIVERGENT.get(case["id"], ("", {}))[1]
    for step, (entry, got) in enumerate(zip(case["expected"], actual, strict=True)):
        expected = _expected(entry, overrides)
        assert matches(expected, got), (
            f"step {step} differs\nexpected: {json.dumps(expected)[:4000]}\n"
            f"actual:   {json.dumps(got)[:4000]}"
        )


def _describes() -> list[Any]:
    document = json.loads((RECORDED / "describe.json").read_text("utf-8"))
    return [pytest.param(entry, id=entry["id"]) for entry in document["describes"]]


@pytest.mark.parametrize("entry", _describes())
def test_recorded_quick_index(entry: dict[str, Any]) -> None:
    # The prose before the index is clawcell's own wording; the index is compared exactly.
    mode = clawcell.CodeMode(build_tools(entry["tools"]))
    tools = {tool["name"]: tool for tool in mode.model_tools()}
    index = entry["expected"]["exec"]["description"].split("\n\n", 1)[1]
    assert tools["exec"]["description"].split("\n\n", 1)[1] == index
