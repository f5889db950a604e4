"""Stopping early, bad `run` arguments and missing optional dependencies."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from typing import Any, cast

import pytest

import clawcell
from clawcell._lazy import install_hint
from clawcell.agent import (
    Agent,
    AnthropicModel,
    CellOutput,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    anthropic_runner_tools,
    exec_call,
    langchain_tools,
    openai_agents_tools,
    pydantic_ai_toolset,
)
from tests.agent._helpers import blocking_tool, collect, types
from tests.conftest import run


def test_closing_the_event_stream_early_cancels_the_cell_and_keeps_the_transcript_valid() -> None:
    started = asyncio.Event()
    model = ScriptedModel([exec_call("text('blocking'); return await block()"), "later"])

    async def main() -> tuple[list[dict[str, Any]], list[str]]:
        limits = clawcell.Limits(timeout_ms=600_000)
        async with Agent(model=model, tools=[blocking_tool(started)], limits=limits) as agent:
            async with contextlib.aclosing(agent.run("s", "block")) as events:
                async for event in events:
                    if isinstance(event, CellOutput):  # the cell is running
                        break
            after = types(await collect(agent, "s", "next"))
            return await agent.transcript("s"), after

    transcript, after = run(main())
    assert [m["role"] for m in transcript[:3]] == ["user", "assistant", "toolResult"]
    assert transcript[2]["isError"] is True
    assert transcript[2]["content"][0]["text"].startswith(
        '{"status": "stopped", "code": "cancelled", "error": "the cell was cancelled: the agent '
        'turn stopped before it ended.", "output": ['
    )
    assert after[-1] == "turn_finished"


def test_a_message_that_is_not_text_is_refused() -> None:
    async def main() -> None:
        async with Agent(model=ScriptedModel([])) as agent:
            await collect(agent, "s", cast(Any, 42))

    with pytest.raises(clawcell.ConfigurationError) as caught:
        run(main())
    assert caught.value.message == "`text` must be the user's message as a string, got 42."


def test_an_empty_session_id_is_refused() -> None:
    async def main() -> None:
        async with Agent(model=ScriptedModel([])) as agent:
            agent.mode("")

    with pytest.raises(clawcell.ConfigurationError, match="`session_id` must be a non-empty"):
        run(main())


def _uninstall(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Make `package` and its submodules fail to import, as if it were not installed."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, package, None)


MISSING: list[tuple[str, Callable[[], object], str]] = [
    (
        "openai",
        lambda: OpenAIChatModel("m"),
        f"`OpenAIChatModel` needs the OpenAI SDK: {install_hint('openai')}.",
    ),
    (
        "openai",
        lambda: OpenAIResponsesModel("m"),
        f"`OpenAIResponsesModel` needs the OpenAI SDK: {install_hint('openai')}.",
    ),
    (
        "anthropic",
        lambda: AnthropicModel("m"),
        f"`AnthropicModel` needs the Anthropic SDK: {install_hint('anthropic')}.",
    ),
]


@pytest.mark.parametrize(("module", "build", "message"), MISSING, ids=[m[2][1:12] for m in MISSING])
def test_an_adapter_without_its_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, build: Callable[[], object], message: str
) -> None:
    _uninstall(monkeypatch, module)
    with pytest.raises(clawcell.ConfigurationError) as caught:
        build()
    assert caught.value.message == message


INTEGRATIONS: list[tuple[str, Callable[[clawcell.CodeMode], object], str]] = [
    (
        "pydantic_ai",
        pydantic_ai_toolset,
        f"`pydantic_ai_toolset` needs pydantic-ai: {install_hint('pydantic-ai')}.",
    ),
    (
        "agents",
        openai_agents_tools,
        f"`openai_agents_tools` needs the OpenAI Agents SDK: {install_hint('openai-agents')}.",
    ),
    (
        "anthropic",
        anthropic_runner_tools,
        f"`anthropic_runner_tools` needs the Anthropic SDK: {install_hint('anthropic')}.",
    ),
    (
        "langchain_core",
        langchain_tools,
        f"`langchain_tools` needs LangChain: {install_hint('langchain')}.",
    ),
]


@pytest.mark.parametrize(
    ("module", "build", "message"), INTEGRATIONS, ids=[i[0] for i in INTEGRATIONS]
)
def test_an_integration_without_its_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    build: Callable[[clawcell.CodeMode], object],
    message: str,
) -> None:
    _uninstall(monkeypatch, module)

    async def main() -> None:
        async with clawcell.CodeMode() as mode:
            build(mode)

    with pytest.raises(clawcell.ConfigurationError) as caught:
        run(main())
    assert caught.value.message == message
