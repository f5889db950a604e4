"""Reference copy of `parse_reply_directives` (see the package docstring)."""

from __future__ import annotations

from typing import Any

from clawcell.reply._paths import normalize_media_source

from ._media import split_media_from_output
from ._tags import parse_inline_directives
from ._text import require_str
from ._tokens import SILENT_REPLY_TOKEN, is_silent_reply_payload_text


def parse_reply_directives(
    raw: str,
    *,
    current_message_id: str | None = None,
    silent_token: str | None = None,
    extract_markdown_images: bool = False,
) -> dict[str, Any]:
    """The pre-optimisation `parse_reply_directives`."""
    split = split_media_from_output(
        require_str(raw, "raw"), extract_markdown_images=extract_markdown_images
    )
    text = split["text"]
    tags = parse_inline_directives(
        text, current_message_id=current_message_id, strip_audio_tag=False
    )
    if tags["hasReplyTag"]:
        text = tags["text"]
    silent = is_silent_reply_payload_text(text, silent_token or SILENT_REPLY_TOKEN)
    result: dict[str, Any] = {"text": "" if silent else text}
    urls = [normalize_media_source(url) for url in split.get("mediaUrls", [])]
    if urls:
        result["mediaUrls"] = urls
        result["mediaUrl"] = urls[0]
    if split.get("audioAsVoice"):
        result["audioAsVoice"] = True
    if "replyToId" in tags:
        result["replyToId"] = tags["replyToId"]
    if tags["replyToCurrent"]:
        result["replyToCurrent"] = True
    result["replyToTag"] = tags["hasReplyTag"]
    result["isSilent"] = silent
    return result
