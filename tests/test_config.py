"""`CodeModeOptions`: every option checked where it is given, with the message pinned."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from clawcell import CodeMode, CodeModeOptions, ConfigurationError, Limits, MemoryStore
from clawcell._config import CodeModeKeywords
from clawcell.agent import Agent, ScriptedModel
from clawcell.approvals import ToolPolicy
from clawcell.mcp import StdioServer
from clawcell.runtime import QuickJSExecutor
from tests.conftest import echo_tool, run

_SERVERS = "`clawcell.mcp.StdioServer` or `clawcell.mcp.HttpServer`"
_HOOK = "a hook function taking a `clawcell.catalog.ToolCallEvent`, or an iterable of them"
_OPTION_NAMES = (
    "after_tool_call, approval_ttl_seconds, before_tool_call, executor, guest_thread, limits, "
    "mcp_servers, model_context_tokens, policy, session_id, store, telemetry_in_text"
)

BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "executor",
        {"executor": 8},
        "`executor` must be a `clawcell.runtime.Executor` (an object with `acquire`, `release` "
        "and `close`, such as `QuickJSExecutor()`) or one of 'quickjs', 'v8', got 8.",
    ),
    (
        "executor-name",
        {"executor": "node"},
        "`executor` must be one of 'quickjs', 'v8' or a `clawcell.runtime.Executor`, got 'node'.",
    ),
    (
        "limits",
        {"limits": 5},
        "`limits` must be a `clawcell.Limits` or a mapping of settings, got 5.",
    ),
    (
        "context-zero",
        {"model_context_tokens": 0},
        "`model_context_tokens` must be a positive integer, got 0.",
    ),
    (
        "context-bool",
        {"model_context_tokens": True},
        "`model_context_tokens` must be a positive integer, got True.",
    ),
    (
        "context-float",
        {"model_context_tokens": 128_000.0},
        "`model_context_tokens` must be a positive integer, got 128000.0.",
    ),
    (
        "store",
        {"store": "state.db"},
        "`store` must be a session store such as `clawcell.SQLiteStore(path)`, got 'state.db'.",
    ),
    ("session-empty", {"session_id": ""}, "`session_id` must be a non-empty string, got ''."),
    ("session-int", {"session_id": 7}, "`session_id` must be a non-empty string, got 7."),
    (
        "servers-list",
        {"mcp_servers": ["time"]},
        f"`mcp_servers` must be a mapping of server name to {_SERVERS}, got ['time'].",
    ),
    (
        "servers-value",
        {"mcp_servers": {"time": "mcp-server-time"}},
        f"MCP server 'time' must be a {_SERVERS}, got 'mcp-server-time'.",
    ),
    (
        "servers-name",
        {"mcp_servers": {"": StdioServer(command="x")}},
        "MCP server names must be non-empty strings, got ''.",
    ),
    (
        "before-str",
        {"before_tool_call": "audit"},
        f"`before_tool_call` must be {_HOOK}, got 'audit'.",
    ),
    ("before-items", {"before_tool_call": [1]}, f"`before_tool_call` must be {_HOOK}, got [1]."),
    ("after-int", {"after_tool_call": 3}, f"`after_tool_call` must be {_HOOK}, got 3."),
    (
        "guest-thread",
        {"guest_thread": "yes"},
        "`guest_thread` must be `True` or `False`, got 'yes'.",
    ),
    (
        "telemetry",
        {"telemetry_in_text": 1},
        "`telemetry_in_text` must be `True` or `False`, got 1.",
    ),
    (
        "policy",
        {"policy": ["fs_*"]},
        "`policy` must be a `clawcell.approvals.ToolPolicy` or a mapping with `allow`, `deny` and "
        "`ask` lists, got ['fs_*'].",
    ),
    (
        "policy-keys",
        {"policy": {"alow": ["x"]}},
        "unknown tool policy keys ['alow']; use `allow`, `deny` and `ask`.",
    ),
    (
        "ttl-zero",
        {"approval_ttl_seconds": 0},
        "`approval_ttl_seconds` must be a positive number of seconds, got 0.",
    ),
    (
        "ttl-nan",
        {"approval_ttl_seconds": float("nan")},
        "`approval_ttl_seconds` must be a positive number of seconds, got nan.",
    ),
    (
        "ttl-str",
        {"approval_ttl_seconds": "60"},
        "`approval_ttl_seconds` must be a positive number of seconds, got '60'.",
    ),
    (
        "unknown",
        {"limit": {"timeoutMs": 5}},
        f"unknown option(s) 'limit'; the options are {_OPTION_NAMES}.",
    ),
]
IDS = [case[0] for case in BAD]


@pytest.mark.parametrize(("_id", "keywords", "message"), BAD, ids=IDS)
def test_a_bad_code_mode_keyword_is_refused_when_the_code_mode_is_built(
    _id: str, keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        CodeMode([echo_tool()], **keywords)
    assert caught.value.message == message


@pytest.mark.parametrize(("_id", "keywords", "message"), BAD, ids=IDS)
def test_a_bad_option_is_refused_by_code_mode_options_and_by_an_agent(
    _id: str, keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        CodeModeOptions().replace(**keywords)
    assert caught.value.message == message
    with pytest.raises(ConfigurationError) as caught:
        Agent(model=ScriptedModel([]), **keywords)
    assert caught.value.message == message
    if _id != "unknown":
        with pytest.raises(ConfigurationError) as caught:
            CodeModeOptions(**keywords)
        assert caught.value.message == message


def test_options_that_are_not_code_mode_options_are_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        CodeMode(options=cast(Any, {"timeoutMs": 5}))
    assert caught.value.message == (
        "`options` must be a `clawcell.CodeModeOptions`, got {'timeoutMs': 5}."
    )


def test_a_policy_naming_no_tool_is_refused_by_the_code_mode_that_has_the_tools() -> None:
    options = CodeModeOptions(policy=ToolPolicy(deny=["ech"]))
    with pytest.raises(ConfigurationError) as caught:
        CodeMode([echo_tool()], options=options)
    assert caught.value.message == (
        "tool policy `deny` names 'ech', which is not a tool of this catalog; known tools: "
        "['echo']."
    )


def test_values_given_loosely_are_kept_in_one_shape() -> None:
    def hook(event: object) -> None:
        return None

    options = CodeModeOptions(
        limits=cast(Any, {"timeoutMs": 500}),
        policy=cast(Any, {"ask": ["echo"]}),
        before_tool_call=cast(Any, hook),
        after_tool_call=cast(Any, [hook]),
        mcp_servers=cast(Any, None),
        approval_ttl_seconds=30,
    )
    assert options.limits == Limits(timeout_ms=500)
    assert options.policy == ToolPolicy(ask=("echo",))
    assert options.before_tool_call == (hook,)
    assert options.after_tool_call == (hook,)
    assert options.mcp_servers == {}
    assert options.approval_ttl_seconds == 30.0
    assert isinstance(options.approval_ttl_seconds, float)


def test_keywords_apply_on_top_of_the_options_and_the_code_mode_keeps_them() -> None:
    store = MemoryStore()
    executor = QuickJSExecutor()
    options = CodeModeOptions(limits=Limits(timeout_ms=500), store=store, executor=executor)

    async def main() -> None:
        async with CodeMode([echo_tool()], options=options, session_id="s2") as mode:
            assert mode.options == dataclasses.replace(options, session_id="s2")
            assert (mode.limits, mode.store, mode.session_id) == (options.limits, store, "s2")
            assert (await mode.exec("return 1 + 1"))["value"] == 2
            assert mode.options.executor is executor

    run(main())
    assert options.session_id == "default"  # frozen: the caller's value is unchanged


def test_an_agent_gives_each_session_the_options_with_its_own_session_id() -> None:
    options = CodeModeOptions(limits=Limits(timeout_ms=500), telemetry_in_text=False)

    async def main() -> None:
        async with Agent(model=ScriptedModel([]), options=options) as agent:
            mode = agent.mode("alice")
            assert mode.session_id == "alice"
            assert mode.limits == Limits(timeout_ms=500)
            assert mode.telemetry_in_text is False
            assert mode.store is agent.store  # the agent's own in-memory store, shared

    run(main())


def test_the_keyword_arguments_and_the_options_name_the_same_fields() -> None:
    fields = [f.name for f in dataclasses.fields(CodeModeOptions)]
    assert list(CodeModeKeywords.__annotations__) == fields
    assert ", ".join(sorted(fields)) == _OPTION_NAMES


def test_the_options_table_of_the_docs_names_every_field() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "docs" / "code-mode.md"
    section = doc.read_text("utf-8").split("## Options\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|", section, re.M)
    documented = [name for row in rows for name in re.findall(r"`([a-z_]+)`", row)]
    assert documented == [f.name for f in dataclasses.fields(CodeModeOptions)]


def test_runtimes_without_limits_share_one_default_limits_value() -> None:
    first, second = CodeMode(), CodeMode(limits=None)
    assert first.limits is second.limits  # frozen, so one value serves every runtime
    assert first.limits == Limits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.limits.timeout_ms = 1  # type: ignore[misc]
    assert CodeMode(limits={"timeoutMs": 5000}).limits.timeout_ms == 5000


def test_only_the_options_given_other_than_their_defaults_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawcell import _config  # pyright: ignore[reportPrivateUsage]

    checked: list[str] = []

    def counting(name: str, check: Any) -> Any:
        def wrapped(value: object) -> object:
            checked.append(name)
            return check(value)

        return wrapped

    for name, check in dict(_config._CHECKS).items():  # pyright: ignore[reportPrivateUsage]
        monkeypatch.setitem(_config._CHECKS, name, counting(name, check))  # pyright: ignore[reportPrivateUsage]
    options = CodeModeOptions(session_id="default", guest_thread=True, store=None)
    assert sorted(checked) == ["limits", "mcp_servers"]  # their defaults are built per value
    assert options == CodeModeOptions()
    checked.clear()
    CodeModeOptions(session_id="s1", guest_thread=False, policy=ToolPolicy(deny=["x"]))
    assert {"session_id", "guest_thread", "policy"} <= set(checked)
    with pytest.raises(ConfigurationError):
        CodeModeOptions(guest_thread=cast(Any, 1))  # equal to `True`, but not it: checked
