"""The transcript messages an agent stores, and reading them back for a model.

Entries are JSON-shaped and use the original's names, so `clawcell.reply`'s chat-history
projection reads them as they are:

```text
{"role": "user", "content": [{"type": "text", "text": …}, {"type": "image" | "file", …}],
  "timestamp": ms, "turnId": …,
  "sender": {"kind": "session", "sessionId", "turnId", "depth"}}   (sender: when forwarded)
{"role": "assistant", "content": [{"type": "thinking", "thinking", "thinkingSignature"},
  {"type": "text", …}, {"type": "toolCall", "id", "name", "arguments"}],
  "usage": {"input", "output"}, "stopReason": …, "timestamp": ms, "turnId": …}
{"role": "toolResult", "toolCallId", "toolName", "content": [{"type": "text", …}],
  "isError": bool, "timestamp": ms, "turnId": …}
```

The final assistant message of a turn holds the reply's content blocks (text, canvas); a
turn stopped by its consumer ends with an assistant message whose `stopReason` is `"aborted"`;
one cut by the model's output limit has `stopReason` `"length"`. `thinking` blocks (a model's
signed reasoning) stay only with the tool calls they led to, which is where the APIs that
sign them need them back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from ..store import transcript_text
from ._model import ModelResponse, ToolCall

__all__ = [
    "arguments_json",
    "assistant_entry",
    "final_entry",
    "interrupted_entry",
    "message_text",
    "stopped_entry",
    "thinking_of",
    "tool_calls_of",
    "tool_result_entry",
    "user_entry",
]


def _now_ms() -> int:
    return int(time.time() * 1000)


def user_entry(
    text: str,
    *,
    turn_id: str,
    sender: Mapping[str, Any] | None = None,
    attachments: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A user message; `sender` marks one another session or a job posted; `attachments`
    are the content blocks of its files (`Attachment.block()`), after its text (the text
    block is left out when a message is only files)."""
    text_blocks = [{"type": "text", "text": text}] if text or not attachments else []
    entry: dict[str, Any] = {
        "role": "user",
        "content": [*text_blocks, *(dict(block) for block in attachments)],
        "timestamp": _now_ms(),
        "turnId": turn_id,
    }
    if sender is not None:
        entry["sender"] = dict(sender)
    return entry


def _usage(response: ModelResponse) -> dict[str, int]:
    usage: dict[str, int] = {}
    if response.input_tokens is not None:
        usage["input"] = response.input_tokens
    if response.output_tokens is not None:
        usage["output"] = response.output_tokens
    return usage


def assistant_entry(response: ModelResponse, *, model: str, turn_id: str) -> dict[str, Any]:
    """An assistant message with its reasoning, text and tool calls, in that order."""
    content: list[dict[str, Any]] = [dict(block) for block in response.reasoning]
    if response.text:
        content.append({"type": "text", "text": response.text})
    content.extend(
        {"type": "toolCall", "id": call.id, "name": call.name, "arguments": _arguments(call)}
        for call in response.tool_calls
    )
    return {
        "role": "assistant",
        "content": content,
        "model": model,
        "usage": _usage(response),
        "stopReason": response.stop_reason or "toolUse",
        "timestamp": _now_ms(),
        "turnId": turn_id,
    }


def final_entry(
    response: ModelResponse, content: Iterable[Mapping[str, Any]], *, model: str, turn_id: str
) -> dict[str, Any]:
    """The turn's last assistant message, holding the reply's content blocks."""
    return {
        "role": "assistant",
        "content": [dict(block) for block in content],
        "model": model,
        "usage": _usage(response),
        "stopReason": response.stop_reason or "stop",
        "timestamp": _now_ms(),
        "turnId": turn_id,
    }


STOPPED_TEXT = "[stopped by the user]"
"""The text of a stopped turn's last message when the model had written nothing yet."""


def stopped_entry(partial: str, *, model: str, turn_id: str) -> dict[str, Any]:
    """The message that records a turn stopped before its reply (`stopReason: "aborted"`),
    holding the text the model had streamed so far."""
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": partial or STOPPED_TEXT}],
        "model": model,
        "usage": {},
        "stopReason": "aborted",
        "timestamp": _now_ms(),
        "turnId": turn_id,
    }


INTERRUPTED_TEXT = (
    "[interrupted: the worker running this turn stopped before it ended (its session lease "
    "lapsed); what it had not stored is lost. Send the message again to continue.]"
)
"""The text of the message that ends a turn whose worker died, written by the next turn."""


def interrupted_entry(*, model: str, streamed: str | None = None) -> dict[str, Any]:
    """The message that ends a turn whose worker died mid-turn (`stopReason: "error"`), so
    the transcript, the page and the next model call all see that it ended; it keeps what
    the dead worker had `streamed` of its reply."""
    text = f"{streamed}\n\n{INTERRUPTED_TEXT}" if streamed else INTERRUPTED_TEXT
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": model,
        "usage": {},
        "stopReason": "error",
        "errorMessage": "worker_lost",
        "timestamp": _now_ms(),
        "turnId": "",
    }


def tool_result_entry(call: ToolCall, text: str, *, is_error: bool, turn_id: str) -> dict[str, Any]:
    """The answer to one tool call, as the model will read it."""
    return {
        "role": "toolResult",
        "toolCallId": call.id,
        "toolName": call.name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "timestamp": _now_ms(),
        "turnId": turn_id,
    }


def _arguments(call: ToolCall) -> dict[str, Any] | str:
    return call.arguments if isinstance(call.arguments, str) else dict(call.arguments)


def message_text(message: Mapping[str, Any]) -> str:
    """The text blocks of a stored message, one per line (`clawcell.store.transcript_text`)."""
    return transcript_text(message)


def tool_calls_of(message: Mapping[str, Any]) -> list[ToolCall]:
    """The `toolCall` blocks of a stored assistant message."""
    blocks = cast(Sequence[Mapping[str, Any]], message.get("content") or ())
    return [
        ToolCall(id=str(b["id"]), name=str(b["name"]), arguments=b.get("arguments") or {})
        for b in blocks
        if b.get("type") == "toolCall"
    ]


def arguments_json(arguments: Mapping[str, Any] | str) -> str:
    """A call's arguments as the JSON text OpenAI's APIs carry."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def thinking_of(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `thinking` blocks of a stored assistant message, in order."""
    blocks = cast(Sequence[Mapping[str, Any]], message.get("content") or ())
    return [b for b in blocks if b.get("type") == "thinking"]
