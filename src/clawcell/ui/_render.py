"""Transcript messages to `MessageView`s, through `clawcell.reply`'s Control UI render items.

Assistant text goes through `expand_text_content` (text, attachments, canvases, voice-note
flag, reply target); text becomes sanitized Markdown HTML; attachment URLs pass the media
policy; canvas iframes get their `src` from `resolve_canvas_iframe_url` (onto the canvas
capability host) and their `sandbox` from `resolve_embed_sandbox`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from ..reply import (
    expand_text_content,
    resolve_canvas_iframe_url,
    resolve_embed_sandbox,
)
from ._markdown import render_markdown
from ._media import MediaRoots
from ._settings import UiSettings
from ._views import AttachmentView, CanvasView, HtmlView, ItemView, MessageView

__all__ = ["DEFAULT_CANVAS_HEIGHT", "Renderer"]

DEFAULT_CANVAS_HEIGHT: Final = 360


@dataclass(frozen=True, kw_only=True)
class Renderer:
    """Renders messages for one request (the canvas host depends on the request's origin)."""

    settings: UiSettings
    media: MediaRoots
    canvas_host_url: str | None

    def message(self, message: Mapping[str, Any]) -> MessageView:
        """One transcript message (`{"role", "content"}`) as a view."""
        role = str(message.get("role", "assistant"))
        content = message.get("content", message.get("text", ""))
        blocks = _blocks(content)
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        if role != "assistant":
            return MessageView(role=role, items=(HtmlView(html=render_markdown(text)),))
        rendered = expand_text_content(text)
        items = list(rendered["content"])
        seen = {_canvas_url(i) for i in items if i["type"] == "canvas"}
        items += [b for b in blocks if b.get("type") == "canvas" and _canvas_url(b) not in seen]
        voice = rendered["audioAsVoice"] or _delivery(message, "audioAsVoice") is True
        views = tuple(v for i in items if (v := self.item(i, voice=voice)) is not None)
        return MessageView(role=role, items=views, reply_target=_target(rendered, message))

    def reply_text(self, text: str) -> MessageView:
        """A final reply's raw text (directives still in it) as an assistant message."""
        return self.message({"role": "assistant", "content": text})

    def item(self, item: Mapping[str, Any], *, voice: bool = False) -> ItemView | None:
        """One Control UI render item (`text`, `attachment` or `canvas`) as a view."""
        if item["type"] == "text":
            return HtmlView(html=render_markdown(str(item["text"])))
        if item["type"] == "attachment":
            return self.attachment(item["attachment"], voice=voice)
        preview = item.get("preview")
        if item["type"] == "canvas" and isinstance(preview, Mapping):
            return self.canvas(cast(Mapping[str, Any], preview))
        return None

    def attachment(self, attachment: Mapping[str, Any], *, voice: bool) -> AttachmentView:
        """An attachment, its URL checked by the media policy."""
        src, refusal = self.media.page_url(str(attachment["url"]))
        kind = attachment["kind"]
        return AttachmentView(
            media=kind,
            src=src,
            label=str(attachment.get("label") or attachment["url"]),
            mime_type=attachment.get("mimeType"),
            voice_note=kind == "audio" and (voice or attachment.get("isVoiceNote") is True),
            refusal=refusal,
        )

    def canvas(self, preview: Mapping[str, Any]) -> CanvasView:
        """A canvas preview as an iframe (or a refusal when its URL may not be embedded)."""
        url = str(preview.get("url", ""))
        src = resolve_canvas_iframe_url(
            url,
            self.canvas_host_url,
            allow_external_embed_urls=self.settings.allow_external_embed_urls,
        )
        ceiling = preview.get("sandbox")
        return CanvasView(
            src=src,
            sandbox=resolve_embed_sandbox(self.settings.embed_sandbox, ceiling),
            height=int(preview.get("preferredHeight") or DEFAULT_CANVAS_HEIGHT),
            title=str(preview.get("title") or preview.get("viewId") or "Canvas"),
            url=url,
        )

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> list[MessageView]:
        """Every displayable message of a projected history."""
        views = [self.message(m) for m in messages if m.get("role") in _ROLES]
        return [view for view in views if view.items]


_ROLES: Final = frozenset({"user", "assistant"})


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    blocks: list[dict[str, Any]] = []
    for block in cast(list[object], content):
        if isinstance(block, Mapping):
            record = cast(Mapping[str, Any], block)
            if record.get("type") == "text" and isinstance(record.get("text"), str):
                blocks.append(dict(record))
            elif record.get("type") == "canvas":
                preview = record.get("preview")
                if isinstance(preview, Mapping):
                    blocks.append({"type": "canvas", "preview": preview})
    return blocks


def _canvas_url(item: Mapping[str, Any]) -> object:
    preview = item.get("preview")
    return cast(Mapping[str, Any], preview).get("url") if isinstance(preview, Mapping) else None


def _delivery(message: Mapping[str, Any], key: str) -> object:
    facts = message.get("openclawDelivery")
    if isinstance(facts, Mapping) and key in facts:
        return cast(Mapping[str, Any], facts)[key]
    return message.get(key)


def _target(rendered: Mapping[str, Any], message: Mapping[str, Any]) -> str | None:
    target = rendered.get("replyTarget")
    if isinstance(target, Mapping):
        fields = cast(Mapping[str, str], target)
        return "the current message" if fields["kind"] == "current" else f"message {fields['id']}"
    explicit = _delivery(message, "replyToId")
    return f"message {explicit}" if isinstance(explicit, str) and explicit else None
