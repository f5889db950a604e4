"""What the templates draw: plain frozen values, built by `_render` from transcript messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["AttachmentView", "CanvasView", "HtmlView", "ItemView", "MessageView"]


@dataclass(frozen=True, kw_only=True)
class HtmlView:
    """Sanitized HTML (rendered Markdown)."""

    kind: Literal["html"] = "html"
    html: str


@dataclass(frozen=True, kw_only=True)
class AttachmentView:
    """A media attachment; `src` is `None` when the media policy refused it."""

    kind: Literal["attachment"] = "attachment"
    media: Literal["image", "audio", "video", "document"]
    src: str | None
    label: str
    mime_type: str | None
    voice_note: bool
    refusal: str | None = None


@dataclass(frozen=True, kw_only=True)
class CanvasView:
    """A canvas iframe; `src` is `None` when the embed policy refused the URL."""

    kind: Literal["canvas"] = "canvas"
    src: str | None
    sandbox: str
    height: int
    title: str
    url: str


ItemView = HtmlView | AttachmentView | CanvasView


@dataclass(frozen=True, kw_only=True)
class MessageView:
    """One chat message: who said it, what to draw, and the reply target marker."""

    role: str
    items: tuple[ItemView, ...]
    reply_target: str | None = None
