"""Transcript messages to `MessageView`s, through `clawcell.reply`'s Control UI render items.

Assistant text goes through `expand_text_content` (text, attachments, canvases, voice-note
flag, reply target); text becomes sanitized Markdown HTML; attachment URLs pass the media
policy; canvas iframes get their `src` from `resolve_canvas_iframe_url` (onto the canvas
capability host) and their `sandbox` from `resolve_embed_sandbox`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from ..._lazy import value_class
from ...reply import (
    expand_text_content,
    parse_inline_directives,
    resolve_canvas_iframe_url,
    resolve_embed_sandbox,
    split_canvas_shortcodes,
)
from .._attachments import sent_file_views
from .._media import MediaRoots
from .._settings import UiSettings
from .._subagent_rows import SUBAGENT_ROLE, subagent_view
from ._blocked import BLOCKED_KEY, blocked_directives
from ._markdown import join_parts, render_markdown_parts
from ._surfaces import surface_view
from ._views import AttachmentView, CanvasView, CellView, HtmlView, ItemView, MessageView

__all__ = ["DEFAULT_CANVAS_HEIGHT", "Renderer", "grouped", "with_delivery_facts"]

DEFAULT_CANVAS_HEIGHT: Final = 360


@value_class
class Renderer:
    """Renders messages for one request (the canvas host depends on the request's origin)."""

    settings: UiSettings
    media: MediaRoots
    canvas_host_url: str | None
    session_id: str | None = None
    """The session the messages belong to (where the files its user messages sent load)."""

    def message(self, message: Mapping[str, Any]) -> MessageView:
        """One transcript message (`{"role", "content"}`) as a view."""
        role = str(message.get("role", "assistant"))
        content = message.get("content", message.get("text", ""))
        blocks = _blocks(content)
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        if role != "assistant":
            files = sent_file_views(content, self.session_id) if role == "user" else []
            items = (_html(text),) if text or not files else ()
            return MessageView(role=role, items=(*items, *files), chars=len(text), source=text)
        rendered = expand_text_content(text)
        items = blocked_directives(_in_place(text, rendered["content"]))  # refused `MEDIA:`
        seen = {_canvas_url(i) for i in items if i["type"] == "canvas"}
        items += [b for b in blocks if b.get("type") == "canvas" and _canvas_url(b) not in seen]
        voice = rendered["audioAsVoice"] or _delivery(message, "audioAsVoice") is True
        views = tuple(v for i in items if (v := self.item(i, voice=voice)) is not None)
        target, stopped = _target(rendered, message), message.get("stopReason") == "aborted"
        source = "\n\n".join(str(i["text"]) for i in items if i["type"] == "text")
        return MessageView(role=role, items=views, reply_target=target, chars=len(text),
                           stopped=stopped, source=source)  # fmt: skip

    def reply_text(self, text: str) -> MessageView:
        """A final reply's raw text (directives still in it) as an assistant message."""
        return self.message({"role": "assistant", "content": text})

    def item(self, item: Mapping[str, Any], *, voice: bool = False) -> ItemView | None:
        """One Control UI render item (`text`, `attachment` or `canvas`) as a view."""
        if item["type"] == "text":
            return _html(str(item["text"]))
        if item["type"] == "attachment":
            return self.attachment(item["attachment"], voice=voice)
        preview = item.get("preview")
        if item["type"] == "canvas" and isinstance(preview, Mapping):
            return self.canvas(cast(Mapping[str, Any], preview))
        return None

    def attachment(self, attachment: Mapping[str, Any], *, voice: bool) -> AttachmentView:
        """An attachment, its URL checked by the media policy."""
        blocked = attachment.get(BLOCKED_KEY)
        src, refusal = (
            (None, str(blocked)) if blocked else self.media.page_url(str(attachment["url"]))
        )
        kind = attachment["kind"]
        return AttachmentView(
            media=kind,
            src=src,
            label=str(attachment.get("label") or attachment["url"]),
            mime_type=attachment.get("mimeType"),
            voice_note=kind == "audio" and (voice or attachment.get("isVoiceNote") is True),
            refusal=refusal,
        )

    def canvas(self, preview: Mapping[str, Any]) -> ItemView:
        """A canvas preview as an iframe (or a refusal when its URL may not be embedded);
        widgets, YouTube cards and MCP Apps as their own views (`_surfaces`)."""
        special = surface_view(preview, self.settings, self.canvas_host_url)
        if special is not None:
            return special
        url = str(preview.get("url", ""))
        src = resolve_canvas_iframe_url(
            url,
            self.canvas_host_url,
            allow_external_embed_urls=self.settings.allow_external_embed_urls,
        )
        if src is not None and not src.startswith(("http://", "https://")):
            src = None  # never framed from the app's own origin (no canvas host: blocked)
        ceiling = preview.get("sandbox")
        return CanvasView(
            src=src,
            sandbox=resolve_embed_sandbox(self.settings.embed_sandbox, ceiling),
            height=int(preview.get("preferredHeight") or DEFAULT_CANVAS_HEIGHT),
            title=str(preview.get("title") or preview.get("viewId") or "Canvas"),
            url=url,
        )

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> list[MessageView]:
        """Every displayable message of a projected history; cell results become cards."""
        calls: dict[str, Mapping[str, Any]] = {}
        views: list[MessageView] = []
        last: object = None  # the previous entry's timestamp (ms): a cell ran since then
        for message in messages:
            calls.update(_tool_calls(message))
            if message.get("role") == "toolResult" and message.get("toolName") in _CELL_TOOLS:
                views.append(_cell_view(message, calls, len(views), _seconds(last, message)))
            elif message.get("role") in _ROLES:
                views.append(self.message(message))
            elif message.get("role") == SUBAGENT_ROLE:
                views.append(subagent_view(message))
            last = message.get("timestamp", last)
        return [view for view in views if view.items]


def _in_place(text: str, content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`content` (`text`'s render items) with each `[embed]` canvas where its shortcode stood,
    not after all the text as the protocol lists them (`expand_text_content`)."""
    pieces = split_canvas_shortcodes(text)
    if len(pieces) == 1:
        return content
    items: list[dict[str, Any]] = []
    for piece in pieces:
        if isinstance(piece, str):
            expanded = expand_text_content(piece)["content"]
            items += [item for item in expanded if item["type"] != "canvas"]
        else:
            items.append({"type": "canvas", "preview": piece, "rawText": None})
    return items


def _html(text: str) -> HtmlView:
    parts = tuple(render_markdown_parts(text))
    return HtmlView(html=join_parts(parts), parts=parts)


def _seconds(since: object, message: Mapping[str, Any]) -> float | None:
    until = message.get("timestamp")
    if isinstance(since, int | float) and isinstance(until, int | float) and until >= since:
        return (until - since) / 1000
    return None


def grouped(views: Sequence[MessageView]) -> list[MessageView]:
    """Each run of cell views as one `work` view: a turn's cells in one disclosure."""
    out: list[MessageView] = []
    for view in views:
        if view.role != "cell":
            out.append(view)
            continue
        if not out or out[-1].role != "work":
            out.append(MessageView(role="work", items=(), seconds=None))
        group = out[-1]
        cells = (*group.items, *view.items)
        times = [c.seconds for c in cells if isinstance(c, CellView) and c.seconds is not None]
        out[-1] = MessageView(role="work", items=cells, seconds=sum(times) if times else None)
    return out


_ROLES: Final = frozenset({"user", "assistant"})
_CELL_TOOLS: Final = frozenset({"exec", "wait"})


def _tool_calls(message: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return {}
    blocks = [
        cast(Mapping[str, Any], b) for b in cast(list[object], content) if isinstance(b, Mapping)
    ]
    return {str(b.get("id")): b for b in blocks if b.get("type") == "toolCall"}


def _cell_view(
    message: Mapping[str, Any],
    calls: Mapping[str, Mapping[str, Any]],
    index: int,
    seconds: float | None,
) -> MessageView:
    text = "".join(b.get("text", "") for b in _blocks(message.get("content")))
    try:
        parsed: object = json.loads(text)
    except ValueError:
        parsed = None
    envelope: Mapping[str, Any] = (
        cast(Mapping[str, Any], parsed)
        if isinstance(parsed, Mapping)
        else {"status": "failed", "error": text}
    )
    call = calls.get(str(message.get("toolCallId")), {})
    arguments = call.get("arguments")
    args: Mapping[str, Any] = (
        cast(Mapping[str, Any], arguments) if isinstance(arguments, Mapping) else {}
    )
    code, run_id, title = args.get("code"), args.get("runId"), args.get("title")
    cell = CellView(
        id=f"history-cell-{index}",
        tool=str(message.get("toolName")),
        title=title if isinstance(title, str) else None,
        code=code if isinstance(code, str) else None,
        run_id=run_id if isinstance(run_id, str) else None,
        envelope=envelope,
        seconds=seconds,
    )
    return MessageView(role="cell", items=(cell,))


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
    if isinstance(explicit, str) and explicit:
        return f"message {explicit}"
    return "the current message" if _delivery(message, "replyToCurrent") is True else None


def with_delivery_facts(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Stored messages with their directive facts beside them, before display projection.

    The chat-history projection strips `[[audio_as_voice]]` and reply tags from the text; the
    facts they carried travel on as `openclawDelivery` (as newer Control UI revisions read
    them), so history still shows voice notes and reply targets.
    """
    annotated: list[dict[str, Any]] = []
    for message in messages:
        out = dict(message)
        if message.get("role") == "assistant" and "openclawDelivery" not in message:
            text = "\n".join(b["text"] for b in _blocks(message.get("content")) if "text" in b)
            facts = parse_inline_directives(text)
            delivery: dict[str, Any] = {"audioAsVoice": facts["audioAsVoice"]}
            if "replyToExplicitId" in facts:
                delivery["replyToId"] = facts["replyToExplicitId"]
            elif facts["replyToCurrent"]:
                delivery["replyToCurrent"] = True
            out["openclawDelivery"] = delivery
        annotated.append(out)
    return annotated
