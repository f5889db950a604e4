"""The built-in `show_widget` tool: an inline HTML (or SVG) widget shown in the chat reply.

The tool checks the input (a title; `widget_code` of at most 262,144 characters whose inline
scripts all parse), wraps the code once in the canonical page (`_page`), stores it as
a document `wg_<hex>` and returns a canvas preview handle (`details.mcpAppPreview`), so the
turn's reply carries a canvas block and the chat renders the widget, also after a history
reload. Each session keeps its 32 newest widgets: creating another replaces the oldest
document with a short "removed" page (the store keeps documents; it has no delete). The list
of a session's widgets is itself a document (`wgl_<hash of the session id>`, never served).

Widget documents are served only by the canvas host's widget route (with the widget policy);
the hosted-document route and the `canvas` tool refuse every `wg` ref (`is_widget_ref`), so
widget code cannot be rewritten unchecked or served under a looser policy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Mapping
from typing import Any, Final, cast

from ... import Tool
from ...catalog import call_session
from ...errors import ToolError
from .._protocol import DocumentStore
from ._page import REPORT_PREFIX, WIDGETS_PATH, check_widget_scripts, widget_page
from ._report import check_report, report_height, report_page

__all__ = [
    "MAX_TITLE_CHARS",
    "MAX_WIDGETS_PER_SESSION",
    "MAX_WIDGET_CHARS",
    "is_widget_ref",
    "widget_tool",
]

MAX_WIDGET_CHARS: Final = 262_144
MAX_TITLE_CHARS: Final = 120
MAX_WIDGETS_PER_SESSION: Final = 32
_LIST_FILE: Final = "widgets.json"
_REMOVED: Final = (
    "<!doctype html><meta charset=utf-8><title>Widget removed</title>"
    "<p style='font:14px system-ui;color:#66707f;margin:4px'>This widget was removed: a session "
    f"keeps its {MAX_WIDGETS_PER_SESSION} newest widgets.</p>"
)

_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TITLE_CHARS,
            "description": "A short title shown above the widget (and the document title).",
        },
        "widget_code": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_WIDGET_CHARS,
            "description": (
                "An HTML fragment (or SVG when it starts with `<svg`), with optional inline "
                "<style> and <script>. Use the CSS variables (--text, --accent, --card, …) for "
                "colours. Inline scripts only; no network. Call `sendPrompt(text)` from a "
                "click handler to send the user's choice as a chat message. Omit with `report`."
            ),
        },
        "report": {
            "type": "object",
            "description": (
                "Instead of `widget_code`: a static report card, no script. `{blocks: [...]}`, "
                "1-24 blocks (8 KB of JSON at most), each one of "
                '{type: "text", text, title?}, {type: "metrics", items: [{label, value, '
                'detail?}]}, {type: "table", columns, rows: [[cell, ...]], title?}, '
                '{type: "chart", points: [{label, value: number}], style?: "bar"|"line", '
                'title?}, {type: "links", items: [{label, url, detail?}], title?}.'
            ),
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}
_PREVIEW_SCHEMA: Final = {"type": "object"}
_OUTPUT: Final = {
    "type": "object",
    "properties": {
        "status": {"const": "shown"},
        "ref": {"type": "string"},
        "title": {"type": "string"},
        "url": {"type": "string"},
        "mcpAppPreview": _PREVIEW_SCHEMA,
    },
    "required": ["status", "ref", "title", "url", "mcpAppPreview"],
    "additionalProperties": False,
}


def is_widget_ref(ref: str) -> bool:
    """Whether `ref` names a widget document or a session's widget list (`wg…`)."""
    return ref.startswith("wg")


def _text(arguments: Mapping[str, Any], name: str, limit: int) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"`show_widget` needs a non-empty string `{name}`, got {value!r:.80}.")
    if len(value) > limit:
        raise ToolError(
            f"`show_widget` `{name}` has {len(value)} characters; the limit is {limit} "
            f"(make it shorter)."
        )
    return value


def _list_ref(session: str | None) -> str:
    digest = hashlib.sha256((session or "").encode("utf-8", "surrogatepass")).hexdigest()
    return "wgl_" + digest[:40]


class _Widgets:
    """Stores widgets and keeps each session's newest `MAX_WIDGETS_PER_SESSION`."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self.lock = asyncio.Lock()

    async def add(self, page: str, *, prefix: str = "wg_") -> str:
        ref = prefix + secrets.token_hex(10)
        await self.store.put_document(ref, {"index.html": page.encode("utf-8")})
        async with self.lock:
            await self._remember(_list_ref(call_session.get()), ref)
        return ref

    async def _remember(self, list_ref: str, ref: str) -> None:
        stored = await self.store.get_document_file(list_ref, _LIST_FILE)
        try:
            refs: object = json.loads(stored) if stored else []
        except ValueError:
            refs = []
        listed = cast(list[object], refs) if isinstance(refs, list) else []
        kept = [r for r in listed if isinstance(r, str)]
        kept.append(ref)
        while len(kept) > MAX_WIDGETS_PER_SESSION:
            await self.store.put_document(kept.pop(0), {"index.html": _REMOVED.encode()})
        listing = {"index.html": b"", _LIST_FILE: json.dumps(kept).encode()}
        await self.store.put_document(list_ref, listing)


def _preview(ref: str, title: str, height: int | None = None) -> dict[str, Any]:
    url = WIDGETS_PATH.format(ref=ref)
    presentation: dict[str, Any] = {"target": "assistant_message", "title": title}
    if height is not None:
        presentation["preferredHeight"] = height
    return {"kind": "canvas", "view": {"id": ref, "url": url}, "presentation": presentation}


async def _page(arguments: Mapping[str, Any], title: str) -> tuple[str, str, int | None]:
    """The widget's or report's document, its ref prefix and (a report's) height."""
    if ("report" in arguments) == ("widget_code" in arguments):
        raise ToolError(
            "`show_widget` needs exactly one of `widget_code` (HTML or SVG) and `report` "
            f"(a static report), got {sorted(arguments)!r}."
        )
    if "report" in arguments:
        report = check_report(arguments["report"])
        return report_page(title, report), REPORT_PREFIX, report_height(report)
    code = _text(arguments, "widget_code", MAX_WIDGET_CHARS)
    await asyncio.to_thread(check_widget_scripts, code)
    return widget_page(title, code), "wg_", None


def widget_tool(store: DocumentStore) -> Tool:
    """The built-in `show_widget` tool: show an HTML or SVG widget inline in the chat reply.

    Input `title` (1–120 characters) and `widget_code` (at most 262,144 characters; every
    inline script must parse). The result, `{status, ref, title, url, mcpAppPreview}`, has a
    closed output contract; the turn's reply shows the widget. See `docs/widgets.md`.
    """
    widgets = _Widgets(store)

    async def execute(arguments: dict[str, Any]) -> dict[str, Any]:
        title = _text(arguments, "title", MAX_TITLE_CHARS).strip()
        extra = sorted(set(arguments) - {"title", "widget_code", "report"})
        if extra:
            raise ToolError(
                f"`show_widget` takes only `title` and `widget_code` or `report`, got "
                f"{extra!r}; drop the other fields."
            )
        page, prefix, height = await _page(arguments, title)
        ref = await widgets.add(page, prefix=prefix)
        preview = _preview(ref, title, height)
        url = preview["view"]["url"]
        return {"status": "shown", "ref": ref, "title": title, "url": url,
                "mcpAppPreview": preview}  # fmt: skip

    return Tool(
        name="show_widget",
        description=(
            "Show a small self-contained HTML or SVG widget (a chart, a table, a picker) "
            "inline in your reply. Inline CSS and scripts only, no network; buttons may call "
            "`sendPrompt(text)` to send the user's choice back as a chat message. For a "
            "summary of numbers, tables and links, pass `report` instead: a static card."
        ),
        parameters=_PARAMETERS,
        output_schema=_OUTPUT,
        execute=execute,
    )
