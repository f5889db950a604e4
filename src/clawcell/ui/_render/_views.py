"""What the templates draw: plain frozen values, built by `_render` from transcript messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal

from ..._lazy import value_class
from ._surfaces import McpAppView, WidgetView, YouTubeView

__all__ = [
    "AttachmentView",
    "CanvasView",
    "CellView",
    "HtmlView",
    "ItemView",
    "MessageView",
    "SubagentRowView",
]


@value_class
class HtmlView:
    """Sanitized HTML (rendered Markdown); `parts` is the same HTML cut between top-level
    blocks (see `render_markdown_parts`), and `id` names its element on a streamed page."""

    kind: Literal["html"] = "html"
    html: str
    parts: tuple[str, ...] = field(default=(), compare=False)
    id: str | None = None


@value_class
class AttachmentView:
    """A media attachment; `src` is `None` when the media policy refused it."""

    kind: Literal["attachment"] = "attachment"
    media: Literal["image", "audio", "video", "document"]
    src: str | None
    label: str
    mime_type: str | None
    voice_note: bool
    refusal: str | None = None


@value_class
class CanvasView:
    """A canvas iframe; `src` is `None` when the embed policy refused the URL."""

    kind: Literal["canvas"] = "canvas"
    src: str | None
    sandbox: str
    height: int
    title: str
    url: str


@value_class
class CellView:
    """A finished `exec`/`wait` call from the transcript: its code and its envelope.

    `approvals` holds the `pendingApprovals` entries still waiting for a decision, when this
    cell parked the session's last turn on them (so a reloaded page can still decide);
    `expired` says a later user message superseded them (the agent expired them then).
    """

    kind: Literal["cell"] = "cell"
    id: str
    tool: str
    title: str | None
    code: str | None
    run_id: str | None
    envelope: Mapping[str, Any]
    approvals: tuple[Mapping[str, Any], ...] = ()
    expired: bool = False
    """Whether it parked on approvals that a later user message superseded."""
    seconds: float | None = None
    """How long it took, from the transcript's timestamps (when they are there)."""


@value_class
class SubagentRowView:
    """A sub-agent run in its parent's turn (`_subagent_rows.py`): a collapsed row that opens
    the child session."""

    kind: Literal["subagent"] = "subagent"
    run_id: str
    session_id: str
    href: str
    profile: str
    label: str | None
    status: Literal["running", "completed", "failed", "cancelled", "interrupted"]
    task: str
    reply: str | None
    error: str | None


ItemView = (
    HtmlView
    | AttachmentView
    | CanvasView
    | CellView
    | SubagentRowView
    | WidgetView
    | YouTubeView
    | McpAppView
)


@value_class
class MessageView:
    """One chat message: who said it, what to draw, and the reply target marker."""

    role: str
    items: tuple[ItemView, ...]
    reply_target: str | None = None
    chars: int = 0
    """The length of the message's text (long ones fold behind "Show more")."""
    stopped: bool = False
    """Whether it records a turn stopped before its reply (`stopReason: "aborted"`)."""
    seconds: float | None = None
    """For a `work` group (a turn's cells in one disclosure): the time they took."""
    source: str = ""
    """The Markdown the message's text was written in (what **Copy message** copies)."""
