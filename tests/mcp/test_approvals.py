"""MCP tools and approvals: per server and per tool name (glob patterns, `ask`) in the server
config beside `allow`/`deny`, and the session policy by callable name (`MCP.<server>.<tool>`)."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from clawcell import CodeMode, Limits
from clawcell.approvals import ToolPolicy
from clawcell.errors import ConfigurationError
from clawcell.mcp import StdioServer, parse_servers
from tests.conftest import run

from ._helpers import kitchen

ECHO = """
try {
  return (await MCP.kitchen.echo({ value: "hi" })).structuredContent.input.value;
} catch (e) {
  return { code: e.code, message: e.message };
}
"""
REASON = "the configuration of MCP server `kitchen` asks before `echo`"


async def _parked(
    config: StdioServer,
    decision: Literal["approve", "deny"] | None,
    *,
    policy: ToolPolicy | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    async with CodeMode(
        mcp_servers={"kitchen": config}, limits=Limits(timeout_ms=20_000), policy=policy
    ) as mode:
        first = await mode.exec(ECHO)
        if decision is None or first["status"] != "waiting":
            return first, None
        approval = first["pendingApprovals"][0]["id"]
        await mode.decide(first["runId"], approval, decision, note="not now")
        return first, await mode.wait(first["runId"])


@pytest.mark.parametrize("patterns", [["echo"], ["ec*"], ["*"]], ids=["name", "glob", "server"])
def test_a_tool_matching_the_servers_ask_patterns_waits_and_runs_once_approved(
    patterns: list[str],
) -> None:
    first, second = run(_parked(kitchen(ask=patterns), "approve"))
    assert (first["status"], first["reason"]) == ("waiting", "approval")
    pending = first["pendingApprovals"]
    assert [(p["tool"], p["input"], p["reason"]) for p in pending] == [
        ("MCP.kitchen.echo", {"value": "hi"}, REASON)
    ]
    assert second is not None and (second["status"], second["value"]) == ("completed", "hi")


def test_a_denied_mcp_call_rejects_into_the_cell_and_never_reaches_the_server() -> None:
    _, second = run(_parked(kitchen(ask=["echo"]), "deny"))
    assert second is not None and second["value"] == {
        "code": "approval_denied",
        "message": 'Tool "MCP.kitchen.echo" was not approved: not now.',
    }


def test_tools_outside_the_patterns_run_without_asking() -> None:
    first, _ = run(_parked(kitchen(ask=["delete*"]), None))
    assert (first["status"], first["value"]) == ("completed", "hi")


def test_the_session_policy_applies_to_mcp_tools_by_callable_name() -> None:
    first, _ = run(_parked(kitchen(), None, policy=ToolPolicy(deny=["MCP.kitchen.*"])))
    assert first["value"] == {
        "code": "approval_denied",
        "message": 'Tool "MCP.kitchen.echo" was not approved: the session policy denies this tool.',
    }
    allowed, _ = run(_parked(kitchen(ask=["*"]), None, policy=ToolPolicy(allow=["MCP.*"])))
    assert allowed["value"] == "hi"


def test_ask_is_read_from_a_server_file_entry() -> None:
    servers = parse_servers({"git": {"command": "mcp-server-git", "ask": ["git_commit", "git_p*"]}})
    git = servers["git"]
    assert git.ask == ("git_commit", "git_p*")
    assert [git.asks(n) for n in ("git_commit", "git_push", "git_status")] == [True, True, False]


@pytest.mark.parametrize("ask", ["*", [""], [3]], ids=["string", "empty", "number"])
def test_a_wrong_ask_is_refused_with_how_to_write_it(ask: Any) -> None:
    with pytest.raises(ConfigurationError) as refused:
        StdioServer(command="x", ask=ask)
    assert refused.value.message == (
        'StdioServer: `ask` must be a list of tool names or glob patterns (`["*"]` for every '
        f"tool), got {ask!r}."
    )


OPERATIONS = {
    "resources.read": '{ uri: "memo://one" }',
    "resources.list": "{}",
    "prompts.get": '{ name: "brief", arguments: { topic: "tides" } }',
    "prompts.list": "{}",
}


def _operation_cell(operation: str) -> str:
    return (
        f"try {{ await MCP.kitchen.{operation}({OPERATIONS[operation]}); return 'reached'; }}\n"
        "catch (e) { return { code: e.code, message: e.message }; }"
    )


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_denied_server_is_denied_for_every_operation_not_only_its_tools(operation: str) -> None:
    async def body() -> tuple[Any, Any]:
        policy = ToolPolicy(deny=["MCP.kitchen.*"])
        async with CodeMode(
            mcp_servers={"kitchen": kitchen()}, limits=Limits(timeout_ms=20_000), policy=policy
        ) as mode:
            refused = (await mode.exec(_operation_cell(operation)))["value"]
            clean = (await mode.exec("return 1 + 1"))["value"]
        return refused, clean

    refused, clean = run(body())
    assert refused == {
        "code": "approval_denied",
        "message": f'Tool "MCP.kitchen.{operation}" was not approved: the session policy '
        "denies this tool.",
    }
    assert clean == 2


@pytest.mark.parametrize("operation", ["resources.read", "prompts.get"])
def test_ask_on_a_server_asks_for_its_resources_and_prompts_too(operation: str) -> None:
    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        policy = ToolPolicy(ask=["MCP.kitchen.*"])
        async with CodeMode(
            mcp_servers={"kitchen": kitchen()}, limits=Limits(timeout_ms=20_000), policy=policy
        ) as mode:
            first = await mode.exec(_operation_cell(operation))
            approval = first["pendingApprovals"][0]["id"]
            await mode.decide(first["runId"], approval, "approve")
            return first, await mode.wait(first["runId"])

    first, second = run(body())
    assert (first["status"], first["reason"]) == ("waiting", "approval")
    assert [p["tool"] for p in first["pendingApprovals"]] == [f"MCP.kitchen.{operation}"]
    assert (second["status"], second["value"]) == ("completed", "reached")
