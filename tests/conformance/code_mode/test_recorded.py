"""Cells recorded from the original by `scripts/oracle/record_code_mode.py`, run in clawcell.

Each cell runs in a fresh `CodeMode` through `call_tool("exec" | "wait")`; its envelopes must equal
the recorded ones, with run ids, result ids and counter scopes mapped to placeholders (the only
nondeterministic values). A cell where clawcell differs on purpose is listed in
`docs/divergences.md` and in `_DIVERGENT` below with clawcell's own envelope test beside it.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, cast

import pytest

import clawcell
from clawcell._cell._failures import format_syntax_error
from clawcell._source._checks import MODULE_ACCESS_MESSAGE, SHELL_SOURCE_MESSAGE
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


def _syntax(line: int, column: int, message: str) -> str:
    return format_syntax_error(message, line, column)


_SHELL = SHELL_SOURCE_MESSAGE
_DROP = object()  # an override that removes the key


def _hint(label: str, name: str, column: int) -> str:
    return (
        f"TypeError: {label} returns a Promise; use await: (await {label}(...)).{name}\n"
        f"    at <anonymous> (openclaw-code-mode:user.js:1:{column})\n"
    )


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
    "syntax/ce2981c9e5": (
        "shell-classification",
        {"error": _syntax(1, 1, "Unterminated comment")},
    ),  # '/* unterminated'
    "syntax/c6111a4e8e": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'x => { return }}'
    "syntax/1976636d72": (
        "shell-classification",
        {"error": _syntax(1, 5, "Unexpected token")},
    ),  # 'a + = b'
    "syntax/6ca606efcf": ("shell-classification", {"error": _SHELL}),  # 'interface A {}'
    "syntax/3aac189cbe": (
        "shell-classification",
        {"error": _syntax(1, 2, "Unterminated regular expression")},
    ),  # '/[/'
    "syntax/bae3782448": (
        "shell-classification",
        {"error": _syntax(1, 2, "Duplicate regular expression flag")},
    ),  # '/a/gg'
    "syntax/8f5c60fa94": (
        "shell-classification",
        {"error": _syntax(1, 7, "Identifier directly after number")},
    ),  # 'x = 08n'
    "syntax/9edacc8d4e": ("module-access-first", {"error": MODULE_ACCESS_MESSAGE}),  # 'import.meta'
    "syntax/0aeb7edffc": (
        "shell-classification",
        {"error": _syntax(1, 6, "Unexpected token")},
    ),  # 'x = {,}'
    "syntax/837ee8ae6e": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'a ? b'
    "syntax/7e1c81aa47": (
        "shell-classification",
        {
            "error": _syntax(
                1,
                8,
                "Logical expressions and coalesce expressions cannot be mixed."
                " Wrap either by parentheses",
            )
        },
    ),  # 'a ?? b || c'
    "syntax/d58de3d01f": (
        "shell-classification",
        {"error": _syntax(1, 8, "Unexpected token")},
    ),  # 'x = 1 +* 2'
    "syntax/071af16a95": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'x =>'
    "syntax/6fd0b7e78c": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'a = b = '
    "syntax/606f3cadb5": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'a ||= '
    "syntax/bd3d990725": (
        "shell-classification",
        {"error": _syntax(2, 1, "Unexpected token")},
    ),  # 'a &&= b ??= '
    "errors/not-a-function-on-promise": (
        "promise-hint",
        {"error": _hint("shipping_list", "map", 1), "telemetry.callCount": 0},
    ),
    "errors/length-of-unawaited": ("no-calls-after-failure", {"telemetry.callCount": 0}),
    "errors/search-not-awaited": ("promise-hint", {"error": _hint("catalog.search", "map", 9)}),
    "search/map-without-await": ("promise-hint", {"error": _hint("catalog.search", "map", 16)}),
    "errors/api-list-not-awaited": ("promise-hint", {"error": _hint("API.list", "files", 5)}),
    **{
        f"errors/api-read-{kind}-not-awaited": (
            "promise-hint",
            {"error": _hint("API.read", "content", 5)},
        )
        for kind in ("injected", "tool", "unknown")
    },
    "errors/results-load-not-awaited": (
        "promise-hint",
        {"error": _hint("results.load", "length", 9)},
    ),
    "errors/property-of-unawaited": (
        "promise-hint",
        {
            "status": "failed",
            "code": "internal_error",
            "failurePhase": "bridge",
            "bridgeDispatchStarted": True,
            "error": _hint("shipping_list", "length", 37),
            "value": _DROP,
            "telemetry.callCount": 0,
        },
    ),
    "errors/caught-stack": (
        "own-controller-frames",
        {"value": {"$regex": r"    at <anonymous> \(openclaw-code-mode:user\.js:2:7\)\n" + _TAIL}},
    ),
    "errors/caught-tool-stack": (
        "own-controller-frames",
        {"value": "    at <anonymous> (openclaw-code-mode:user.js:1:13)\n"},
    ),
}


# The V8 executor (docs/divergences.md, "The V8 executor"). The recordings are the original's
# QuickJS executor's; on V8 these cells differ, each for one reason:
# `v8-engine-text`: V8's own error words, columns and frames (no native frames): the error's
# class (or the caught prefix) must still be the recorded one.
_V8_ENGINE_TEXT = frozenset(
    [
        "errors/json-parse",
        "errors/map-callback",
        "errors/sort-callback",
        "errors/nested-functions",
        "errors/not-a-function",
        "errors/not-a-function-on-promise",
        "errors/search-not-awaited",
        "errors/api-list-not-awaited",
        "errors/api-read-injected-not-awaited",
        "errors/api-read-tool-not-awaited",
        "errors/api-read-unknown-not-awaited",
        "errors/results-load-not-awaited",
        "errors/property-of-unawaited",
        "errors/length-of-unawaited",
        "errors/throw-error-no-message",
        "errors/custom-error-class",
        "errors/error-name-changed",
        "errors/promise-reject",
        "errors/async-function",
        "errors/then-callback",
        "errors/timer-callback",
        "errors/tool-failure-in-map",
        "errors/range-error",
        "errors/stack-overflow",
        "errors/uri-error",
        "errors/bigint-mix",
        "errors/assign-const",
        "errors/frozen-catalog",
        "errors/json-stringify-bigint",
        "errors/caught-stack",
        "search/uncaught/null-query",
        "search/map-without-await",
        "syntax/2fd371a693",
        "traps/throwing_getter/return",
        "traps/throwing_proxy/text",
        "traps/throwing_proxy/json",
        "traps/throwing_proxy/return",
        "traps/revoked_proxy/text",
        "traps/revoked_proxy/json",
        "traps/revoked_proxy/return",
        "traps/revoked_proxy/tool_arg",
        "traps/bigint/tool_arg",
        "traps/cycle/tool_arg",
        "traps/array_with_getter_index/text",
        "traps/array_with_getter_index/json",
        "traps/array_with_getter_index/return",
    ]
)
# `v8-cyclic-join`: V8's `Array.prototype.join` writes a cyclic array's cycle as "" where
# QuickJS overflows the stack, so these cells complete with V8's text.
_V8_CYCLIC = {
    **{f"cyclic/text/{n}": {"type": "text", "text": t} for n, t in (("self-array", '"1,"'),
        ("self-array-only", '""'), ("deep-array", '"1,"'), ("two-arrays", '"1,"'))},
    **{f"cyclic/{k}/{n}": {"type": "json", "value": t} for k in ("json", "json-caught")
        for n, t in (("self-array", "1,"), ("self-array-only", ""), ("deep-array", "1,"),
        ("two-arrays", "1,"))},
}  # fmt: skip


def _v8_expected(case_id: str, expected: Any) -> Any:
    """The recorded envelope as the V8 executor answers it (see the reasons above)."""
    if not isinstance(expected, dict):
        return expected
    out: dict[str, Any] = dict(cast(dict[str, Any], expected))
    if "thrown" in out:
        return out
    if "replaySafe" in out:  # `v8-not-durable`: a V8 cell never survives a restart
        out["replaySafe"] = False
    if case_id == "restart-safe/context-budget":  # `false` is one byte longer than `true`
        value = dict(out["value"])
        value.update(omittedBytes=value["omittedBytes"] + 1, prefix=value["prefix"][:-1])
        out["value"] = value
    if case_id in _V8_CYCLIC:
        for key in ("code", "failurePhase", "bridgeDispatchStarted", "error"):
            out.pop(key, None)
        out.update(status="completed", value=1, output=[_V8_CYCLIC[case_id]])
    if case_id in _V8_ENGINE_TEXT:
        for key in ("error", "value"):
            if isinstance(out.get(key), str) and out[key]:
                out[key] = {"$regex": re.escape(_engine_prefix(out[key])) + ".*"}
            elif isinstance(out.get(key), dict) and key == "value":
                out[key] = {"$regex": r"\w*Error: .*"}
    return out


def _engine_prefix(text: str) -> str:
    """What V8 and QuickJS agree on: the error class (`TypeError: `), or `caught: `."""
    head = text.split(":", 1)[0]
    return head + ":" if ":" in text else head


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
        if value is _DROP:
            del target[last]
        else:
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


@pytest.mark.parametrize("executor", ["quickjs", "v8"])
@pytest.mark.parametrize("case", _cases())
def test_recorded_cell(case: dict[str, Any], executor: str) -> None:
    actual = asyncio.run(run_case(case, executor=executor))
    assert len(actual) == len(case["expected"])
    overrides = _DIVERGENT.get(case["id"], ("", {}))[1]
    for step, (entry, got) in enumerate(zip(case["expected"], actual, strict=True)):
        expected = _expected(entry, overrides)
        if executor == "v8":
            expected = _v8_expected(case["id"], expected)
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
