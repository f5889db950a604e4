"""`clawcell.agent` exports exactly its public names, each documented."""

from __future__ import annotations

import types

import pytest

import clawcell.agent

AGENT = [
    "Agent",
    "AgentEvent",
    "AnthropicModel",
    "ApprovalDecided",
    "ApprovalRequested",
    "Attachment",
    "CellFinished",
    "CellOutput",
    "CellStarted",
    "Companion",
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
    "SubagentProfile",
    "Subagents",
    "TextDelta",
    "ToolCall",
    "TurnFinished",
    "TurnStarted",
    "TurnUsage",
    "anthropic_runner_tools",
    "exec_call",
    "langchain_tools",
    "openai_agents_tools",
    "pydantic_ai_toolset",
    "subagent_runs",
    "subagent_tools",
    "wait_call",
]


def _public_attributes(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }


def test_the_agent_package_exports_exactly_its_public_names() -> None:
    assert clawcell.agent.__all__ == AGENT == sorted(AGENT)
    assert set(AGENT) == _public_attributes(clawcell.agent)


@pytest.mark.parametrize("name", AGENT)
def test_every_agent_name_has_a_docstring(name: str) -> None:
    assert getattr(clawcell.agent, name).__doc__
