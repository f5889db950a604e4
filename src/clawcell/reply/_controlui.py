"""Control UI render items: assistant text expanded into text, attachments and canvases."""

from __future__ import annotations

import posixpath
import re
import urllib.parse
from typing import Any, Final, Literal, NotRequired, TypedDict

from ._canvas import CanvasPreview
from ._embeds import extract_canvas_shortcodes
from ._media import MediaSegment, split_media_from_output
from ._tags import parse_inline_directives
from ._text import js_trim, require_str

__all__ = ["Attachment", "RenderedText", "expand_text_content"]

_RENDERABLE: Final = re.compile(
    r"(?:https?://|data:(?:image|audio|video)/|/(?:__openclaw__|media)/|file://|~|/|[a-zA-Z]:[\\/])",
    re.IGNORECASE,
)
_HTTP: Final = re.compile(r"https?://", re.IGNORECASE)
_MIME_TYPES: Final = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp",
    "gif": "image/gif", "heic": "image/heic", "heif": "image/heif", "ogg": "audio/ogg",
    "oga": "audio/ogg", "mp3": "audio/mpeg", "wav": "audio/wav", "flac": "audio/flac",
    "aac": "audio/aac", "opus": "audio/opus", "m4a": "audio/mp4", "mp4": "video/mp4",
    "mov": "video/quicktime", "pdf": "application/pdf", "txt": "text/plain",
    "md": "text/markdown", "csv": "text/csv", "json": "application/json",
    "zip": "application/zip",
}  # fmt: skip


AttachmentKind = Literal["image", "audio", "video", "document"]


class Attachment(TypedDict):
    """A media attachment the UI renders."""

    url: str
    kind: AttachmentKind
    label: str
    mimeType: NotRequired[str]
    isVoiceNote: NotRequired[bool]


class RenderedText(TypedDict):
    """Result of `expand_text_content`."""

    content: list[dict[str, Any]]
    audioAsVoice: bool
    replyTarget: dict[str, str] | None


def _label(url: str) -> str:
    path = urllib.parse.urlsplit(url).path if _HTTP.match(url) else url
    name = re.split(r"[/\\]", path.rstrip("/\\"))[-1]
    return urllib.parse.unquote(name) if _HTTP.match(url) else name


def _attachment(url: str) -> Attachment:
    base = url.split("?", 1)[0].split("#", 1)[0] if _HTTP.match(url) else url
    extension = posixpath.splitext(base)[1][1:].lower()
    mime = _MIME_TYPES.get(extension)
    family = mime.split("/", 1)[0] if mime else ""
    kind: AttachmentKind = "document"
    if family == "image":
        kind = "image"
    elif family == "audio":
        kind = "audio"
    elif family == "video":
        kind = "video"
    attachment: Attachment = {"url": url, "kind": kind, "label": _label(url) or url}
    if mime:
        attachment["mimeType"] = mime
    return attachment


def _merge_texts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for item in items:
        if item["type"] == "text":
            if not js_trim(item["text"]):
                continue
            if merged and merged[-1]["type"] == "text":
                merged[-1] = {"type": "text", "text": merged[-1]["text"] + "\n" + item["text"]}
                continue
        merged.append(item)
    return merged


def expand_text_content(text: str) -> RenderedText:
    """Expand assistant text into Control UI items: text, attachments, then canvases."""
    extracted = extract_canvas_shortcodes(require_str(text, "text"))
    parsed = split_media_from_output(extracted["text"])
    segments: list[MediaSegment] = parsed.get("segments") or (
        [{"type": "text", "text": parsed["text"]}] if parsed["text"] else []
    )
    items: list[dict[str, Any]] = []
    audio = False
    target: dict[str, str] | None = None
    for segment in segments:
        if segment["type"] == "media":
            url = segment.get("url", "")
            if _RENDERABLE.match(url):
                items.append({"type": "attachment", "attachment": _attachment(url)})
            else:
                items.append({"type": "text", "text": f"MEDIA:{url}"})
            continue
        directives = parse_inline_directives(segment.get("text", ""))
        audio = audio or directives["audioAsVoice"]
        if "replyToExplicitId" in directives:
            target = {"kind": "id", "id": directives["replyToExplicitId"]}
        elif directives["replyToCurrent"] and target is None:
            target = {"kind": "current"}
        items.append({"type": "text", "text": directives["text"]})
    if audio:
        for item in items:
            if item["type"] == "attachment" and item["attachment"]["kind"] == "audio":
                item["attachment"]["isVoiceNote"] = True
    previews: list[CanvasPreview] = extracted["previews"]
    content = _merge_texts(items)
    content.extend({"type": "canvas", "preview": p, "rawText": None} for p in previews)
    return {"content": content, "audioAsVoice": audio, "replyTarget": target}
