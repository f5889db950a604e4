"""The agent runtime: a turn loop over code mode, model adapters and framework integrations.

Start with `Agent`; see `docs/agents.md`.
"""

from __future__ import annotations

from .. import _lazy
from ._agent import Agent, Companion
from ._attachments import Attachment
from ._events import (
    AgentEvent,
    ApprovalDecided,
    ApprovalRequested,
    CellFinished,
    CellOutput,
    CellStarted,
    ErrorEvent,
    ReplyEvent,
    TextDelta,
    TurnFinished,
    TurnStarted,
    TurnUsage,
)
from ._frameworks._anthropic_runner import anthropic_runner_tools
from ._frameworks._langchain import langchain_tools
from ._frameworks._openai_agents import openai_agents_tools
from ._frameworks._pydantic_ai import pydantic_ai_toolset
from ._model import Model, ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from ._models._anthropic import AnthropicModel
from ._models._openai_chat import OpenAIChatModel
from ._models._openai_responses import OpenAIResponsesModel
from ._models._scripted import ScriptedModel, ScriptedTurn, exec_call, wait_call
from ._subagents._profile import SubagentProfile
from ._subagents._run_book import subagent_runs
from ._subagents._subagents import Subagents, subagent_tools

__all__ = [
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

# Moved to `clawcell.cli` (the chat command is a face, not part of the agent runtime).
__getattr__ = _lazy.moved_exports(
    __name__,
    dict.fromkeys(("configure_chat", "configured_agent", "run_chat"), "clawcell.cli._chat"),
)
