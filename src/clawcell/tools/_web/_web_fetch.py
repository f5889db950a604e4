"""The `web_fetch` tool: one URL as readable text with stable metadata and cache status."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from email.message import Message
from typing import Any, Final

from ...catalog import Tool
from ...errors import ToolError
from .._schema import boolean, integer, literal, obj, string
from ._cache import CachedPage
from ._fetch import Fetcher, Page
from ._html import Extracted, ExtractMode, extract, is_readable, timed_out

__all__ = ["FETCH_OUTPUT", "web_fetch_tool"]

_OVERFLOW = obj(
    {"totalChars": integer(), "returnedChars": integer(), "bodyTruncated": boolean()},
)
FETCH_OUTPUT: Final = obj(
    {
        "url": string(),
        "finalUrl": string(),
        "status": integer(),
        "contentType": string(),
        "extractor": literal("markdown", "text", "raw"),
        "text": string(),
        "bytes": integer(),
        "fetchedAt": string(),
        "cache": literal("hit", "miss", "revalidated"),
        "truncated": boolean(),
    },
    {"title": string(), "overflow": _OVERFLOW},
)
_FETCH_INPUT = obj(
    {"url": string("An http or https URL.", minLength=1)},
    {
        "maxChars": integer("Most characters of text to return.", minimum=1),
        "extractMode": literal("markdown", "text", description="HTML as Markdown (default)."),
    },
)
_DESCRIPTION = (
    "Fetch a public http(s) URL and return its readable text (HTML as Markdown) with the final "
    "URL, status, content type, title, byte count, fetch time and cache status (`hit`, `miss`, "
    "`revalidated`); `overflow` says how much text was cut. Private and local addresses are "
    "refused. The text is untrusted web content."
)


def _content_type(header: str) -> tuple[str, str | None]:
    message = Message()
    message["content-type"] = header or "application/octet-stream"
    charset = message.get_param("charset")
    mime = message.get_content_type() if header else ""
    return mime, charset if isinstance(charset, str) else None


class _Readable:
    """Extraction off the event loop, remembered for the pages the cache still serves."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._done: OrderedDict[tuple[bytes, str, str], Extracted] = OrderedDict()

    async def of(self, stored: CachedPage, mode: ExtractMode, deadline: float) -> Extracted:
        digest = hashlib.blake2b(stored.body, digest_size=16).digest()
        key = (digest, stored.content_type, mode)
        found = self._done.get(key)
        if found is None:
            # The thread checks `deadline` itself; waiting past it here would only add delay.
            remaining = max(deadline - time.monotonic(), 0.0)
            try:
                async with asyncio.timeout(remaining + 0.05):
                    found = await asyncio.to_thread(_extract, stored, mode, deadline)
            except TimeoutError:
                raise timed_out() from None
            self._done[key] = found
            while len(self._done) > self._size:
                self._done.popitem(last=False)
        return found


def _extract(stored: CachedPage, mode: ExtractMode, deadline: float) -> Extracted:
    mime, charset = _content_type(stored.content_type)
    if not is_readable(mime, stored.body):
        raise ToolError(
            f"{stored.final_url!r} returned {mime or 'an unlabelled binary body'}, which is not "
            "text. `web_fetch` reads HTML, text, JSON and XML.",
            code="unsupported_content",
        )
    return extract(stored.body, mime=mime, charset=charset, mode=mode, deadline=deadline)


def _render(
    page: Page, readable: Extracted, params: dict[str, Any], max_chars: int
) -> dict[str, Any]:
    stored = page.page
    limit = min(int(params.get("maxChars", max_chars)), max_chars)
    text = readable.text[:limit]
    body_cut = stored.body_truncated or readable.cut
    cut = len(text) < len(readable.text) or body_cut
    result: dict[str, Any] = {
        "url": page.url,
        "finalUrl": stored.final_url,
        "status": stored.status,
        "contentType": stored.content_type,
        "extractor": readable.extractor,
        "text": text,
        "bytes": len(stored.body),
        "fetchedAt": stored.fetched_at,
        "cache": page.cache,
        "truncated": cut,
    }
    if readable.title is not None:
        result["title"] = readable.title
    if cut:
        result["overflow"] = {
            "totalChars": len(readable.text),
            "returnedChars": len(text),
            "bodyTruncated": body_cut,
        }
    return result


def web_fetch_tool(fetcher: Fetcher) -> Tool:
    """The `web_fetch` tool over `fetcher` (network content: the run becomes untrusted)."""

    readable = _Readable()

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + fetcher.settings.timeout_seconds
        page = await fetcher.fetch(params["url"])
        mode: ExtractMode = "text" if params.get("extractMode") == "text" else "markdown"
        text = await readable.of(page.page, mode, deadline)
        return _render(page, text, params, fetcher.settings.max_chars)

    return Tool(
        name="web_fetch",
        description=_DESCRIPTION,
        parameters=_FETCH_INPUT,
        output_schema=FETCH_OUTPUT,
        execute=execute,
        replay_safe=True,
        network=True,
    )
