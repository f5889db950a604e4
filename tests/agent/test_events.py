"""Each event's wire form: its `type` and camelCase fields, in order."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from clawcell.agent import (
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

CASES: list[tuple[AgentEvent, dict[str, Any]]] = [
    (
        TurnStarted(session_id="s", turn_id="t", text="hi"),
        {"type": "turn_started", "sessionId": "s", "turnId": "t", "text": "hi"},
    ),
    (TextDelta(turn_id="t", text="He"), {"type": "text_delta", "turnId": "t", "text": "He"}),
    (
        CellStarted(turn_id="t", call_id="c", tool="wait", run_id="cm_1"),
        {
            "type": "cell_started",
            "turnId": "t",
            "callId": "c",
            "tool": "wait",
            "code": None,
            "title": None,
            "runId": "cm_1",
        },
    ),
    (
        CellOutput(turn_id="t", call_id="c", item={"type": "text", "text": "x"}),
        {
            "type": "cell_output",
            "turnId": "t",
            "callId": "c",
            "item": {"type": "text", "text": "x"},
        },
    ),
    (
        CellFinished(turn_id="t", call_id="c", envelope={"status": "completed"}),
        {
            "type": "cell_finished",
            "turnId": "t",
            "callId": "c",
            "envelope": {"status": "completed"},
            "error": None,
        },
    ),
    (
        ReplyEvent(turn_id="t", payloads=({"text": "ok"},), content=({"type": "text"},)),
        {
            "type": "reply",
            "turnId": "t",
            "payloads": [{"text": "ok"}],
            "content": [{"type": "text"}],
            "isSilent": False,
            "stopReason": "stop",
        },
    ),
    (
        TurnFinished(turn_id="t", usage=TurnUsage(input_tokens=3, model_turns=1, wall_ms=2.5)),
        {
            "type": "turn_finished",
            "turnId": "t",
            "usage": {
                "inputTokens": 3,
                "outputTokens": None,
                "modelTurns": 1,
                "cells": 0,
                "toolCalls": 0,
                "wallMs": 2.5,
            },
            "state": "replied",
        },
    ),
    (
        ErrorEvent(turn_id="t", code="model_error", message="down", error=RuntimeError("x")),
        {"type": "error", "turnId": "t", "code": "model_error", "message": "down"},
    ),
]


@pytest.mark.parametrize(("event", "wire"), CASES, ids=[c[1]["type"] for c in CASES])
def test_to_dict_gives_the_camel_case_wire_form(event: AgentEvent, wire: dict[str, Any]) -> None:
    assert event.to_dict() == wire
    assert list(event.to_dict()) == list(wire)
    assert event.type == wire["type"]


@pytest.mark.parametrize(("event", "wire"), CASES, ids=[c[1]["type"] for c in CASES])
def test_events_are_frozen(event: AgentEvent, wire: dict[str, Any]) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        cast(Any, event).type = "other"
