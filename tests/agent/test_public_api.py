"""`clawcell.agent` exports exactly its public names, each documented."""

from __future__ import annotations

import pytest

import clawcell.agent
from tests.test_public_api import _public_attributes  # pyright: ignore[reportPrivateUsage]

AGENT = [
    "Agent",
    "AgentEvent",
    "AnthropicModel",
    "CellFinished",
    "CellOutput",
    "CellStarted",
    "ErrorEvent",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ModelResponse",
    "ModelText",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "ReplyEvent",
    "ScriptedModel",
    "ScriptedTurn",
    "TextDelta",
    "ToolCall",
    "TurnFinished",
    "TurnStarted",
    "TurnUsage",
    "anthropic_runner_tools",
    "configure_chat",
    "exec_call",
    "langchain_tools",
    "openai_agents_tools",
    "pydantic_ai_toolset",
    "run_chat",
    "wait_call",
]


def test_the_agent_package_exports_exactly_its_public_names() -> None:
    assert clawcell.agent.__all__ == AGENT
    assert set(AGENT) == _public_attributes(clawcell.agent)


@pytest.mark.parametrize("name", AGENT)
def test_every_agent_name_has_a_docstring(name: str) -> None:
    assert getattr(clawcell.agent, name).__doc__
