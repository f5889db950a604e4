"""A rogue MCP server (`_rogue_server.py`): floods of notifications and stderr, requests of
its own, stray, duplicate and contradictory responses, content that is not content, bytes
that are not UTF-8, malformed listings and a server that dies at start. Each case ends in
the right envelope, and a clean cell afterwards in the same `CodeMode` sees nothing of it
(the same globals and intrinsics, a working tool, the same `MCP` tree)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.mcp import StdioServer
from tests.conftest import echo_tool
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
)
from tests.mcp._helpers import ROOT

LIMITS = Limits(timeout_ms=120_000)
CATCH = "try { return ['ok', await %s]; } catch (e) { return [e.code, e.message]; }"
NO_ANSWER = (
    "MCP server `rogue` did not answer `tools/call` within 2s; the connection was reset and "
    "the next call reconnects."
)
NOT_STARTED = (
    "MCP server `rogue` could not be started or reached: Connection closed. Check its "
    "configuration; the next call retries."
)
PROBE_MCP = "return [Object.keys(MCP).sort(), Object.keys(MCP.rogue).sort(), Object.isFrozen(MCP)];"


SHORT = 2.0  # cases that never get an answer wait this long
LONG = 60.0  # cases that must get an answer wait long enough for any machine


def _server(scenario: str, timeout: float = LONG) -> StdioServer:
    args = ["-m", "tests.hostile._rogue_server", scenario]
    return StdioServer(command=sys.executable, args=args, cwd=str(ROOT), timeout=timeout)


def _value(envelope: dict[str, Any]) -> Any:
    assert envelope["status"] == "completed", envelope
    return envelope["value"]


def answered(text: str, *, error: bool = False) -> Callable[[dict[str, Any]], None]:
    def check(envelope: dict[str, Any]) -> None:
        content = {"content": [{"type": "text", "text": text}], "isError": error}
        assert _value(envelope) == ["ok", content]

    return check


def caught(code: str, message: str) -> Callable[[dict[str, Any]], None]:
    def check(envelope: dict[str, Any]) -> None:
        assert _value(envelope) == [code, message]

    return check


def _malformed_content(envelope: dict[str, Any]) -> None:
    code, message = _value(envelope)
    assert code == "mcp_error"
    assert message.startswith("MCP server `rogue` failed during `tools/call`: ")
    assert message.endswith(" validation errors for CallToolResult. The next call reconnects.")


def _saved_aside(envelope: dict[str, Any]) -> None:
    value = _value(envelope)
    assert value["truncated"] is True
    assert value["reference"]["id"].startswith("result_")


def _all_answered(envelope: dict[str, Any]) -> None:
    texts = [r["content"][0]["text"] for r in _value(envelope)]
    assert texts == ["notification_flood", "first", "pings_first", "stray_then_real"]


def _odd_schemas(envelope: dict[str, Any]) -> None:
    names, calls = _value(envelope)
    assert names == ["$api", "$serverName", "badTypes", "ok", "refCycle", "selfRef"]
    assert calls == ["ref_cycle", "self_ref", "mcp_error", "bad_types"]  # `missing` is required


def _no_tools(envelope: dict[str, Any]) -> None:
    assert _value(envelope) == [["$api", "$serverName"], "no tools"]


@dataclass(frozen=True)
class Case:
    scenario: str
    code: str
    check: Callable[[dict[str, Any]], None]
    timeout: float = LONG


def _call(name: str) -> str:
    return CATCH % f"MCP.rogue.{name}()"


ODD_CALLS = (
    "const r = [];\nfor (const [f, a] of [['refCycle', { p: 1 }], "
    "['selfRef', { child: { child: {} }, list: [{}] }], ['badTypes', { a: 1 }],\n"
    "  ['badTypes', { a: 1, missing: 2 }]])\n"
    "  r.push(await MCP.rogue[f](a).then((x) => x.content[0].text, (e) => e.code));\n"
    "return [Object.keys(MCP.rogue).sort(), r];"
)
NO_TOOLS = (
    "const names = Object.keys(MCP.rogue).sort();\n"
    "try { await MCP.rogue.ok(); return [names, 'called']; } catch { return [names, 'no tools']; }"
)
CASES: dict[str, Case] = {
    "notification_flood": Case("calls", _call("notificationFlood"), answered("notification_flood")),
    "stderr_flood": Case("calls", _call("stderrFlood"), answered("stderr_flood")),
    "asks_for_sampling": Case("calls", _call("asksForSampling"), answered("asks_for_sampling")),
    "asks_for_roots": Case("calls", _call("asksForRoots"), answered("asks_for_roots")),
    "pings_first": Case("calls", _call("pingsFirst"), answered("pings_first")),
    "stray_response_first": Case("calls", _call("strayThenReal"), answered("stray_then_real")),
    "answers_twice": Case("calls", _call("answersTwice"), answered("first")),
    "result_and_error": Case(
        "calls",
        _call("resultAndError"),
        caught("mcp_error", "MCP server `rogue` rejected `tools/call`: both"),
    ),
    "junk_content": Case("calls", _call("junkContent"), _malformed_content),
    "error_flag_with_comment_text": Case(
        "calls", _call("errorFlagWithJunk"), answered("bad */ end", error=True)
    ),
    "wide_structured_result": Case(
        "calls", "return await MCP.rogue.wideStructured();", _saved_aside
    ),
    "bytes_not_utf8": Case("calls", _call("notUtf8"), caught("mcp_error", NO_ANSWER), SHORT),
    "null_result": Case("calls", _call("nullResult"), caught("mcp_error", NO_ANSWER), SHORT),
    "misbehaving_calls_in_parallel": Case(
        "calls",
        "return await Promise.all([MCP.rogue.notificationFlood(), MCP.rogue.answersTwice(), "
        "MCP.rogue.pingsFirst(), MCP.rogue.strayThenReal()]);",
        _all_answered,
    ),
    "odd_schemas": Case("odd_schemas", ODD_CALLS, _odd_schemas),
    "entries_the_sdk_refuses": Case("bad_entries", NO_TOOLS, _no_tools),
    "tools_not_a_list": Case("not_a_list", NO_TOOLS, _no_tools),
    "exits_at_start": Case(
        "exits_at_start",
        "try { await MCP.rogue.$api(); } catch (e) { return [e.code, e.message]; }",
        caught("mcp_error", NOT_STARTED),
    ),
}


async def _probes(mode: CodeMode) -> tuple[Any, Any]:
    return await _probe(mode), _value(await mode.exec(PROBE_MCP))


@pytest.mark.slow
@pytest.mark.parametrize("case", [pytest.param(c, id=i) for i, c in CASES.items()])
def test_a_rogue_server_gives_the_right_envelope_and_leaves_no_trace(case: Case) -> None:
    async def main() -> tuple[Any, dict[str, Any], Any]:
        servers = {"rogue": _server(case.scenario, case.timeout)}
        async with CodeMode([echo_tool()], limits=LIMITS, mcp_servers=servers) as mode:
            pristine = await _probes(mode)
            envelope = await mode.exec(case.code)
            return pristine, envelope, await _probes(mode)

    pristine, envelope, after = asyncio.run(main())
    case.check(envelope)
    assert after == pristine
    assert pristine[0]["leak"] == "undefined"


def test_a_call_after_a_broken_connection_reconnects() -> None:
    code = (
        "const first = await MCP.rogue.notUtf8().catch((e) => e.code);\n"
        "return [first, (await MCP.rogue.ok()).content[0].text];"
    )

    async def main() -> Any:
        # Long enough for the reconnected server to start and answer on a loaded machine.
        servers = {"rogue": _server("calls", 5.0)}
        async with CodeMode(limits=LIMITS, mcp_servers=servers) as mode:
            return _value(await mode.exec(code))

    assert asyncio.run(main()) == ["mcp_error", "ok"]
