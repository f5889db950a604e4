"""The chat-history display projection: what a chat UI shows of a stored transcript.

Inline directive tags are stripped from visible text (outside code), silent control replies
(`NO_REPLY`, `ANNOUNCE_SKIP`, `REPLY_SKIP`) and heartbeat prompts/acknowledgements are hidden,
commentary-phase drafts are dropped, image and audio payloads are replaced by their size, and
long texts are truncated. The stored transcript itself is never rewritten.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._tags import strip_inline_directive_tags_for_display
from ._text import as_list, as_record, js_trim, utf16_len, utf16_prefix
from ._tokens import strip_heartbeat_token

__all__ = ["DEFAULT_HEARTBEAT_PROMPT", "project_chat_display_messages"]

Message = dict[str, Any]

DEFAULT_MAX_CHARS: Final = 8000
TRUNCATION_MARKER: Final = "\n...(truncated)..."
DEFAULT_HEARTBEAT_PROMPT: Final = (
    "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or "
    "repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK."
)
_PERIODIC_PROMPT: Final = (
    "Run the following periodic tasks (only those due based on their intervals):"
)
_PERIODIC_ACK: Final = "After completing all due tasks, reply HEARTBEAT_OK."
_CONTROL_REPLIES: Final = frozenset({"no_reply", "announce_skip", "reply_skip"})
_USAGE_FIELDS: Final = (
    "input",
    "output",
    "totalTokens",
    "inputTokens",
    "outputTokens",
    "cacheRead",
    "cacheWrite",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_TOOL_ROLES: Final = frozenset({"toolResult", "tool_result", "tool", "function"})
_TOOL_KEYS: Final = ("toolCallId", "tool_call_id", "toolName", "tool_name", "toolUseId")
_TOOL_BLOCKS: Final = frozenset(
    {"toolCall", "tool_call", "toolUse", "tool_use", "toolResult", "tool_result", "functionCall"}
)


def _blocks(message: Mapping[str, Any]) -> list[Any] | None:
    return as_list(message.get("content"))


def _block_type(block: Any) -> object:
    record = as_record(block)
    return None if record is None else record.get("type")


def _text_of(message: Mapping[str, Any], joiner: str) -> str | None:
    """The message text; `None` when content holds anything but text blocks."""
    for key in ("text", "content"):
        if isinstance(message.get(key), str):
            return message[key]
    blocks = _blocks(message)
    if blocks is None or any(_block_type(b) != "text" for b in blocks):
        return None
    return joiner.join(str(b.get("text") or "") for b in blocks)


def _phase(block: Any) -> object:
    record = as_record(block)
    signature = None if record is None else record.get("textSignature")
    if not isinstance(signature, str):
        return None
    try:
        parsed = json.loads(signature)
    except (ValueError, RecursionError):
        return None
    fields = as_record(parsed)
    return None if fields is None else fields.get("phase")


def _mixes_tools(message: Mapping[str, Any]) -> bool:
    blocks = _blocks(message) or []
    return any(_block_type(b) in _TOOL_BLOCKS for b in blocks) and any(
        _block_type(b) == "text" for b in blocks
    )


def _hidden(message: Mapping[str, Any]) -> bool:
    if message.get("role") != "assistant" or _mixes_tools(message):
        return False
    texts = [b for b in _blocks(message) or [] if _block_type(b) == "text"]
    if message.get("phase") == "commentary" or (
        texts and all(_phase(b) == "commentary" for b in texts)
    ):
        return True
    text = _text_of(message, "\n")
    return text is not None and js_trim(text).lower() in _CONTROL_REPLIES


def _truncate(text: str, limit: float) -> str:
    if utf16_len(text) <= limit:
        return text
    return utf16_prefix(text, int(limit)) + TRUNCATION_MARKER


def _is_tool_payload(message: Mapping[str, Any]) -> bool:
    if message.get("role") in _TOOL_ROLES or any(key in message for key in _TOOL_KEYS):
        return True
    return any(_block_type(b) in _TOOL_BLOCKS for b in _blocks(message) or [])


def _visible(text: str, limit: float) -> str:
    return _truncate(strip_inline_directive_tags_for_display(text)["text"], limit)


def _sanitize_block(block: Any, limit: float) -> Any:
    record = as_record(block)
    if record is None:
        return block
    out: dict[str, Any] = dict(record)
    out.pop("thinkingSignature", None)
    out.pop("openclawReasoningReplay", None)
    if out.get("type") == "text" and isinstance(out.get("text"), str):
        out["text"] = _visible(out["text"], limit)
    if out.get("type") == "thinking" and isinstance(out.get("thinking"), str):
        out["thinking"] = _truncate(out["thinking"], limit)
    if out.get("type") == "image" and isinstance(out.get("data"), str):
        data = out.pop("data")
        out["omitted"] = True
        out["bytes"] = len(data.encode("utf-8", "surrogatepass"))
    source = as_record(out.get("source"))
    if out.get("type") == "audio" and source is not None:
        audio: dict[str, Any] = dict(source)
        if isinstance(audio.get("data"), str):
            data = audio.pop("data")
            audio["omitted"] = True
            audio["bytes"] = len(data.encode("utf-8", "surrogatepass"))
            out["source"] = audio
    return out


def _sanitize_usage(out: Message) -> None:
    usage = as_record(out.get("usage"))
    if usage is not None:
        kept: dict[str, object] = {k: usage[k] for k in _USAGE_FIELDS if _finite(usage.get(k))}
        usage_cost = as_record(usage.get("cost"))
        if usage_cost is not None and _finite(usage_cost.get("total")):
            kept["cost"] = {"total": usage_cost["total"]}
        out["usage"] = kept
    cost = as_record(out.get("cost"))
    if cost is not None:
        out["cost"] = {"total": cost["total"]} if _finite(cost.get("total")) else {}


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _sanitize(message: Mapping[str, Any], limit: float) -> Message:
    out: Message = dict(message)
    out.pop("details", None)
    if out.get("role") == "assistant":
        _sanitize_usage(out)
    else:
        out.pop("usage", None)
        out.pop("cost", None)
    bound = math.inf if _is_tool_payload(out) else limit
    for key in ("text", "content"):
        if isinstance(out.get(key), str):
            out[key] = _visible(out[key], bound)
    blocks = _blocks(out)
    if blocks is not None:
        out["content"] = _sanitize_blocks(out, blocks, bound)
    return out


def _sanitize_blocks(message: Message, blocks: list[Any], limit: float) -> list[Any]:
    if message.get("role") == "assistant" and _mixes_tools(message):
        blocks = [b for b in blocks if _block_type(b) == "text"]
        if message.get("phase") == "commentary":
            message.pop("phase")
    kept = [b for b in blocks if _block_type(b) != "text" or _phase(b) in (None, "final_answer")]
    return [_sanitize_block(b, limit) for b in kept]


def _sanitize_all(messages: Sequence[Any], limit: float) -> list[Any]:
    out: list[Any] = []
    for item in messages:
        message = as_record(item)
        if message is None:
            out.append(item)
            continue
        if _hidden(message):
            continue
        sanitized = _sanitize(message, limit)
        if not _hidden(sanitized):
            out.append(sanitized)
    return out


def _is_heartbeat_prompt(message: Mapping[str, Any], prompt: str) -> bool:
    text = _text_of(message, "") if message.get("role") == "user" else None
    if text is None:
        return False
    trimmed = js_trim(text)
    return trimmed.startswith(prompt) or (
        trimmed.startswith(_PERIODIC_PROMPT) and _PERIODIC_ACK in trimmed
    )


def _is_heartbeat_ack(message: Mapping[str, Any]) -> bool:
    text = _text_of(message, "\n") if message.get("role") == "assistant" else None
    if text is None or not js_trim(text):
        return False
    return strip_heartbeat_token(text, mode="heartbeat", max_ack_chars=300)["shouldSkip"]


def _displayed(message: Any, prompt: str) -> bool:
    entry = as_record(message)
    if entry is None:
        return False
    if entry.get("display") is False or entry.get("customType") == "openclaw.runtime-context":
        return False
    if entry.get("role") == "user" and not ("MediaPaths" in entry or "MediaPath" in entry):
        text = _text_of(entry, "")
        if text is not None and not js_trim(text):
            return False
    return not _is_heartbeat_prompt(entry, prompt) and not _is_heartbeat_ack(entry)


def project_chat_display_messages(
    messages: Sequence[Any],
    *,
    max_chars: int | None = None,
    heartbeat_prompt: str | None = None,
) -> list[Message]:
    """Project stored transcript messages to what a chat history view should display."""
    limit = DEFAULT_MAX_CHARS if max_chars is None else max_chars
    prompt = heartbeat_prompt or DEFAULT_HEARTBEAT_PROMPT
    visible = [m for m in _sanitize_all(messages, math.inf) if _displayed(m, prompt)]
    return _sanitize_all(visible, limit)
