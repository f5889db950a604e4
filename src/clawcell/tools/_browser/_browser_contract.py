"""The `browser` tool's input schema and its output contract, a union on `action`."""

from __future__ import annotations

from typing import Final

from ...catalog import define_output_schema
from .._schema import array, boolean, integer, literal, obj, string

__all__ = ["ACTIONS", "BROWSER_INPUT", "BROWSER_OUTPUT", "DESCRIPTION"]

PAGE_ACTIONS: Final = (
    "open", "navigate", "focus", "back", "forward", "reload",
    "click", "type", "press", "select", "hover", "wait",
)  # fmt: skip
ACTIONS: Final = (*PAGE_ACTIONS, "tabs", "close", "snapshot", "text", "screenshot", "pdf")

_DOWNLOAD = obj({"url": string(), "suggestedFilename": string(), "path": string()})
_TAB = obj({"targetId": string(), "url": string(), "title": string(), "active": boolean()})
_PAGE = obj(
    {"action": string(), "targetId": string(), "url": string(), "title": string()},
    {"status": integer(), "downloads": array(_DOWNLOAD)},
)
_TABS = obj({"action": string(), "tabs": array(_TAB)}, {"targetId": string()})
_OBSERVED = obj(
    {
        "action": string(),
        "targetId": string(),
        "url": string(),
        "title": string(),
        "text": string("Untrusted page content, wrapped."),
        "truncated": boolean(),
        "totalChars": integer(),
        "returnedChars": integer(),
    },
    {"matches": integer()},
)
_MEDIA = obj(
    {
        "action": string(),
        "targetId": string(),
        "url": string(),
        "title": string(),
        "path": string(),
        "mimeType": string(),
        "bytes": integer(),
        "media": obj({"mediaUrl": string()}),
    }
)
BROWSER_OUTPUT: Final = define_output_schema(
    input_property="action",
    variants={
        **dict.fromkeys(PAGE_ACTIONS, _PAGE),
        "tabs": _TABS,
        "close": _TABS,
        "snapshot": _OBSERVED,
        "text": _OBSERVED,
        "screenshot": _MEDIA,
        "pdf": _MEDIA,
    },
)
BROWSER_INPUT: Final = obj(
    {"action": literal(*ACTIONS, description="What to do.")},
    {
        "url": string("open/navigate: an http(s) URL.", minLength=1),
        "targetId": string("The tab (from `open` or `tabs`); the active tab when omitted."),
        "ref": string("click/type/select/hover: an element ref from the last snapshot (`e12`)."),
        "text": string("type: the text to enter; wait: text to wait for."),
        "submit": boolean("type: press Enter afterwards."),
        "key": string("press: a key such as `Enter` or `Control+A`."),
        "values": array(string()),
        "selector": string("snapshot/text: a CSS selector to read from; wait: to wait for."),
        "query": string("snapshot/text: keep only lines holding every word of it."),
        "maxChars": integer("snapshot/text: most characters of text.", minimum=1),
        "fullPage": boolean("screenshot: the whole page, not only the viewport."),
        "timeoutMs": integer("wait and actions: milliseconds to wait.", minimum=1),
    },
)
DESCRIPTION: Final = (
    "Drive an isolated Chromium for this session. Actions: open (new tab) / navigate, tabs, "
    "focus, close, snapshot (accessibility tree with element refs like e12), text (readable "
    "page text), click / type / press / select / hover (by ref), wait (selector or text), "
    "screenshot / pdf (saved as media, returned by path), back / forward / reload. `query`, "
    "`selector` and `maxChars` narrow a snapshot or text; its `text` is untrusted page "
    "content. Private and local addresses are refused."
)
