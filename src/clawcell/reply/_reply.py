"""The reply pipeline: final assistant text plus tool results in, channel payloads out.

`build_reply` is the one entry point. It reads the assistant text's delivery directives
(`MEDIA:` lines, `[[audio_as_voice]]`, reply tags, the silent token, `HEARTBEAT_OK`), removes the
Control-UI-only `[embed]` shortcodes from what channels see, merges media produced by tools into
the first payload, strips media already delivered by block streaming, and returns the channel
payloads together with the assistant content blocks to store in the transcript.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Final, NotRequired, TypedDict, cast

from .._lazy import value_class
from ._canvas import CanvasPreview, extract_canvas_from_details
from ._directives import strip_malformed_leading_reply_tag
from ._embeds import extract_canvas_shortcodes
from ._media import split_media_from_output
from ._paths import normalize_media_source
from ._payloads import (
    Payload,
    filter_messaging_tool_media_duplicates,
    merge_attempt_tool_media_payloads,
    outbound_media,
)
from ._tags import parse_inline_directives
from ._text import JS_SPACE, as_list, as_record, js_trim, require_str
from ._tokens import SILENT_REPLY_TOKEN, is_silent_reply_directive_text, strip_heartbeat_token

__all__ = ["Reply", "ReplyDirectives", "ToolMedia", "build_reply", "parse_reply_directives"]

_HTTP: Final = re.compile(r"https?://", re.IGNORECASE)


class ReplyDirectives(TypedDict):
    """Result of `parse_reply_directives` (protocol keys)."""

    text: str
    mediaUrls: NotRequired[list[str]]
    replyToId: NotRequired[str]
    replyToCurrent: NotRequired[bool]
    replyToTag: bool
    audioAsVoice: NotRequired[bool]
    isSilent: bool


def parse_reply_directives(
    raw: str,
    *,
    current_message_id: str | None = None,
    silent_token: str | None = None,
    extract_markdown_images: bool = False,
) -> ReplyDirectives:
    """Read every delivery directive of a final reply text.

    Media lines (and opted-in Markdown images) and `[[audio_as_voice]]` are split out first,
    then reply tags; a reply that is only the silent token (default `NO_REPLY`) becomes empty
    with `isSilent: true`. `file:` media URLs are returned as paths. The keys are the
    release's (no `mediaUrl` alias; `build_reply` payloads add it).
    """
    if type(raw) is str and silent_token is None and "[" not in raw and ":" not in raw:
        # The common short reply: no tag, image, shortcode or `MEDIA:` can exist, so only the
        # trailing whitespace goes, and only an underscore or a brace could make it silent.
        text = raw.rstrip(JS_SPACE)
        if "_" not in text and "{" not in text:
            return {"text": text, "replyToTag": False, "isSilent": False}
    split = split_media_from_output(
        require_str(raw, "raw"), extract_markdown_images=extract_markdown_images
    )
    text = split["text"]
    tags = None
    if "[[" in text:
        tags = parse_inline_directives(
            text, current_message_id=current_message_id, strip_audio_tag=False
        )
        text = strip_malformed_leading_reply_tag(tags["text"] if tags["hasReplyTag"] else text)
    token = SILENT_REPLY_TOKEN if silent_token is None else silent_token
    silent = is_silent_reply_directive_text(text, token)
    result: dict[str, Any] = {"text": "" if silent else text}
    if "mediaUrls" in split:
        result["mediaUrls"] = [
            normalize_media_source(url) if url[:5].lower() == "file:" else url
            for url in split["mediaUrls"]
        ]
    if split.get("audioAsVoice"):
        result["audioAsVoice"] = True
    if tags is not None and "replyToId" in tags:
        result["replyToId"] = tags["replyToId"]
    if tags is not None and tags["replyToCurrent"]:
        result["replyToCurrent"] = True
    result["replyToTag"] = tags is not None and tags["hasReplyTag"]
    result["isSilent"] = silent
    return cast("ReplyDirectives", result)


@value_class
class ToolMedia:
    """Media a tool call produced for delivery.

    Attributes:
        urls: Media references, in order.
        audio_as_voice: Send audio as a voice note.
        trusted: The tool is trusted to attach local files (untrusted tools keep only URLs).
        canvas: A canvas preview the tool asked to show (from `details.mcpAppPreview`).
    """

    urls: tuple[str, ...] = ()
    audio_as_voice: bool = False
    trusted: bool = False
    canvas: CanvasPreview | None = None

    @classmethod
    def from_result(cls, result: Mapping[str, Any], *, trusted: bool = False) -> ToolMedia:
        """Read a tool result `{content: [...], details?: {...}}` like the original does.

        Structured `details.media` (`mediaUrl`, `mediaUrls`, `audioAsVoice`; `outbound: false`
        means "not for delivery") wins over `MEDIA:` lines in the text content blocks.
        """
        details = as_record(result.get("details")) or {}
        canvas = extract_canvas_from_details(details)
        media = as_record(details.get("media"))
        if media is not None:
            return cls._from_structured(media, trusted=trusted, canvas=canvas)
        urls: list[str] = []
        voice = False
        for item in as_list(result.get("content")) or []:
            block = as_record(item) or {}
            if block.get("type") == "text":
                text = block.get("text")
                split = split_media_from_output(text if isinstance(text, str) else "")
                urls.extend(split.get("mediaUrls", []))
                voice = voice or bool(split.get("audioAsVoice"))
        return cls(
            urls=_allowed(urls, trusted), audio_as_voice=voice, trusted=trusted, canvas=canvas
        )

    @classmethod
    def _from_structured(
        cls, media: Mapping[str, Any], *, trusted: bool, canvas: CanvasPreview | None
    ) -> ToolMedia:
        if media.get("outbound") is False:
            return cls(canvas=canvas)
        single = media.get("mediaUrl")
        listed = media.get("mediaUrls")
        urls = [single] if isinstance(single, str) else []
        urls += [u for u in as_list(listed) or [] if isinstance(u, str)]
        cleaned = list(dict.fromkeys(js_trim(u) for u in urls if js_trim(u)))
        trusted = trusted or media.get("trustedLocalMedia") is True
        voice = media.get("audioAsVoice") is True
        return cls(
            urls=_allowed(cleaned, trusted), audio_as_voice=voice, trusted=trusted, canvas=canvas
        )


def _allowed(urls: Sequence[str], trusted: bool) -> tuple[str, ...]:
    return tuple(urls) if trusted else tuple(u for u in urls if _HTTP.match(u))


@value_class
class Reply:
    """What `build_reply` returns.

    Attributes:
        payloads: Channel payloads to deliver, in order (protocol keys).
        content: Assistant content blocks to store: one `text` block, then `canvas` blocks.
        is_silent: The reply was the silent token; nothing but voice media is delivered.
    """

    payloads: tuple[Payload, ...]
    content: tuple[dict[str, Any], ...]
    is_silent: bool = field(default=False)

    def to_dict(self) -> dict[str, Any]:
        """`{"payloads": [...], "content": [...], "isSilent": bool}`."""
        return {
            "payloads": [dict(p) for p in self.payloads],
            "content": [dict(c) for c in self.content],
            "isSilent": self.is_silent,
        }


def _text_payload(text: str, current_message_id: str | None, silent_token: str | None) -> Payload:
    parsed = parse_reply_directives(
        text, current_message_id=current_message_id, silent_token=silent_token
    )
    payload: Payload = {k: v for k, v in parsed.items() if k != "isSilent"}
    if "mediaUrls" in parsed:
        payload["mediaUrl"] = parsed["mediaUrls"][0]
    heartbeat = strip_heartbeat_token(parsed["text"]) if parsed["text"] else None
    if heartbeat is not None and heartbeat["didStrip"]:
        payload["text"] = heartbeat["text"]
    if not payload.get("text"):
        payload.pop("text", None)
    if not payload.get("replyToTag"):
        payload.pop("replyToTag", None)
    payload["isSilent"] = parsed["isSilent"]
    return payload


def build_reply(
    text: str,
    *,
    tool_media: Sequence[ToolMedia] = (),
    current_message_id: str | None = None,
    silent_token: str | None = None,
    already_sent_media_urls: Sequence[str] = (),
) -> Reply:
    """Build the channel payloads and stored content blocks of one assistant turn.

    Args:
        text: The final assistant text.
        tool_media: Media the turn's tool calls produced (see `ToolMedia.from_result`).
        current_message_id: The inbound message id `[[reply_to_current]]` refers to.
        silent_token: The silent reply token (default `NO_REPLY`).
        already_sent_media_urls: Media block streaming or a messaging tool already delivered.

    Raises:
        TypeError: `text` is not a string.
    """
    embeds = extract_canvas_shortcodes(require_str(text, "text"))
    payload = _text_payload(embeds["text"], current_message_id, silent_token)
    silent = bool(payload.pop("isSilent"))
    urls = [u for media in tool_media for u in media.urls]
    merged = merge_attempt_tool_media_payloads(
        payloads=[payload],
        tool_media_urls=urls,
        tool_audio_as_voice=any(m.audio_as_voice for m in tool_media),
        tool_trusted_local_media=any(m.trusted and m.urls for m in tool_media),
    ) or [payload]
    if already_sent_media_urls:
        merged = filter_messaging_tool_media_duplicates(
            payloads=merged, sent_media_urls=already_sent_media_urls
        )
    kept = [p for p in merged if _deliverable(p, silent)]
    previews = [*embeds["previews"], *(m.canvas for m in tool_media if m.canvas is not None)]
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend({"type": "canvas", "preview": preview} for preview in previews)
    return Reply(payloads=tuple(kept), content=tuple(content), is_silent=silent)


def _deliverable(payload: Payload, silent: bool) -> bool:
    media = outbound_media(payload)
    if silent:
        return bool(media) and bool(payload.get("audioAsVoice"))
    return bool(payload.get("text") or media or payload.get("audioAsVoice"))
