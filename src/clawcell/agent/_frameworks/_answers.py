"""Answering `exec`/`wait` for agent frameworks that run their own loop.

Every integration hands the framework two tools whose definitions come from
`CodeMode.model_tools` and whose calls go to `CodeMode.call_tool`; the model reads the
rendered envelope. A call rejected outright (`InputError`) becomes the framework's own kind
of error result, so the model sees the protocol's message and can correct itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import CodeMode
from ..._lazy import value_class
from ...errors import InputError

__all__ = ["Answer", "answer", "definitions"]


@value_class
class Answer:
    """What a tool call answered: the text for the model, and whether it was rejected."""

    text: str
    rejected: bool


async def answer(mode: CodeMode, name: str, arguments: Mapping[str, Any] | str) -> Answer:
    """Run the call; the rendered envelope, or the rejection message."""
    try:
        envelope = await mode.call_tool(name, arguments)
    except InputError as exc:
        return Answer(text=exc.message, rejected=True)
    return Answer(text=mode.render(envelope), rejected=False)


def definitions(mode: CodeMode) -> list[dict[str, Any]]:
    """`exec` and `wait` as `{name, description, input_schema}`."""
    return mode.model_tools("anthropic")
