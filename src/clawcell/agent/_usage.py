"""Counting what a turn consumes, for `turn_finished` and the turn's span."""

from __future__ import annotations

import time

from ._events import TurnUsage
from ._model import ModelResponse

__all__ = ["UsageCounter"]


class UsageCounter:
    """Tokens, model turns, cells, tool calls and wall time of one turn."""

    def __init__(self) -> None:
        self._started = time.perf_counter()
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.model_turns = 0
        self.cells = 0
        self.tool_calls = 0

    def add(self, response: ModelResponse) -> None:
        """Add one model call's token usage (tokens stay `None` until one is reported)."""
        if response.input_tokens is not None:
            self.input_tokens = (self.input_tokens or 0) + response.input_tokens
        if response.output_tokens is not None:
            self.output_tokens = (self.output_tokens or 0) + response.output_tokens

    def snapshot(self) -> TurnUsage:
        """The usage so far."""
        return TurnUsage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            model_turns=self.model_turns,
            cells=self.cells,
            tool_calls=self.tool_calls,
            wall_ms=round((time.perf_counter() - self._started) * 1000, 3),
        )

    def attributes(self) -> dict[str, int | None]:
        """Span attributes of the usage."""
        return {
            "clawcell.turn.model_turns": self.model_turns,
            "clawcell.turn.cells": self.cells,
            "clawcell.turn.tool_calls": self.tool_calls,
            "clawcell.turn.input_tokens": self.input_tokens,
            "clawcell.turn.output_tokens": self.output_tokens,
        }
