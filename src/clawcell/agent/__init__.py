"""The agent runtime: a turn loop over code mode, model adapters and framework integrations.

Start with `Agent`; see `docs/agents.md`.
"""

from __future__ import annotations

from ._agent import Agent
from ._events import (
    AgentEvent,
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
from ._model import Model, ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from ._scripted import ScriptedModel, ScriptedTurn, exec_call, wait_call

__all__ = [
    "Agent",
    "AgentEvent",
    "CellFinished",
    "CellOutput",
    "CellStarted",
    "ErrorEvent",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ModelResponse",
    "ModelText",
    "ReplyEvent",
    "ScriptedModel",
    "ScriptedTurn",
    "TextDelta",
    "ToolCall",
    "TurnFinished",
    "TurnStarted",
    "TurnUsage",
    "exec_call",
    "wait_call",
]
