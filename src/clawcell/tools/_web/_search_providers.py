"""Search providers: a self-hosted SearXNG instance and the Brave Search API.

Both talk to an endpoint the operator configured (not one the model chose), so they use a
plain httpx client rather than the fetch guard: a SearXNG instance usually lives on the local
network. Every failure (network, HTTP status, malformed JSON) becomes a `kind: "error"`
outcome the model can read; answers that do not have the expected shape come back as
`kind: "raw"` when small.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, cast

from ..._lazy import value_class
from ...errors import ConfigurationError
from ._web_search import SearchOutcome, SearchResult, outcome

__all__ = ["BraveProvider", "SearxngProvider"]

_TAGS: Final = re.compile(r"<[^>]+>")
_RAW_LIMIT: Final = 32_768
_MAX_TITLE: Final = 300
_MAX_URL: Final = 2048
_MAX_SNIPPET: Final = 1000
_BRAVE_URL: Final = "https://api.search.brave.com/res/v1/web/search"


def _plain(text: object, limit: int) -> str:
    return _TAGS.sub("", text)[:limit] if isinstance(text, str) else ""


def _hit(item: Mapping[str, Any], snippet_key: str, date_keys: tuple[str, ...]) -> SearchResult:
    hit: SearchResult = {
        "title": _plain(item.get("title"), _MAX_TITLE),
        "url": str(item.get("url", ""))[:_MAX_URL],
        "snippet": _plain(item.get(snippet_key), _MAX_SNIPPET),
    }
    published = next((item[key] for key in date_keys if isinstance(item.get(key), str)), None)
    if published:
        hit["published"] = published
    return hit


class _Failed(Exception):
    """The provider could not answer; the message becomes a `kind: "error"` outcome."""


async def _get_json(
    url: str, *, params: dict[str, Any], headers: dict[str, str], timeout: float
) -> Any:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            response = await client.get(url, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise _Failed(f"{type(exc).__name__}: {exc or 'no detail'}") from exc
    if response.status_code != 200:
        raise _Failed(f"HTTP {response.status_code}: {response.text[:200]}")
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _Failed(f"The answer is not JSON: {exc}.") from exc


def _raw(provider: str, query: str, value: Any) -> SearchOutcome:
    text = json.dumps(value)
    if len(text) > _RAW_LIMIT:
        return outcome(provider, query, "error", error="The answer had an unexpected shape.")
    return outcome(provider, query, "raw", raw=value)


def _items(value: Any, *path: str) -> list[Mapping[str, Any]] | None:
    for key in path:
        value = cast(Mapping[str, Any], value).get(key) if isinstance(value, Mapping) else None
    if not isinstance(value, list):
        return None
    return [
        cast(Mapping[str, Any], item)
        for item in cast(list[Any], value)
        if isinstance(item, Mapping)
    ]


@value_class
class SearxngProvider:
    """A SearXNG instance's JSON API (`/search?format=json`; enable `json` in its `formats`).

    Attributes:
        url: The instance's base URL, such as `http://searxng.internal:8080`.
        timeout_seconds: Budget of one request.
        categories: SearXNG categories to search (`general` by default).
    """

    url: str
    timeout_seconds: float = 15.0
    categories: str = "general"

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"SearXNG `url` must be an http(s) base URL, got {self.url!r}."
            )

    @property
    def name(self) -> str:
        """`"searxng"`."""
        return "searxng"

    async def search(self, query: str, count: int) -> SearchOutcome:
        """Results (or the instance's direct answer) for `query`."""
        try:
            answer = await _get_json(
                self.url.rstrip("/") + "/search",
                params={"q": query, "format": "json", "categories": self.categories},
                headers={"Accept": "application/json"},
                timeout=self.timeout_seconds,
            )
        except _Failed as exc:
            return outcome(self.name, query, "error", error=str(exc))
        items = _items(answer, "results")
        if items is None:
            return _raw(self.name, query, answer)
        results = [_hit(item, "content", ("publishedDate",)) for item in items][:count]
        direct = _answers(answer)
        if direct:
            return outcome(self.name, query, "answer", answer=direct, results=results)
        return outcome(self.name, query, "results", results=results)


def _answers(answer: Any) -> str:
    texts: list[str] = []
    for item in cast(list[Any], answer.get("answers") or []):
        text = cast(Mapping[str, Any], item).get("answer") if isinstance(item, Mapping) else item
        if isinstance(text, str) and text:
            texts.append(text)
    return "\n".join(texts)


@value_class
class BraveProvider:
    """The Brave Search web API (`X-Subscription-Token`).

    Attributes:
        api_key: The subscription token.
        url: The endpoint (override for a proxy or a test double).
        timeout_seconds: Budget of one request.
    """

    api_key: str
    url: str = _BRAVE_URL
    timeout_seconds: float = 15.0

    def __post_init__(self) -> None:
        if not self.api_key:
            raise ConfigurationError(
                "Brave needs an `api_key`; set `api_key` or the `BRAVE_API_KEY` variable."
            )

    @property
    def name(self) -> str:
        """`"brave"`."""
        return "brave"

    async def search(self, query: str, count: int) -> SearchOutcome:
        """Web results for `query`."""
        try:
            answer = await _get_json(
                self.url,
                params={"q": query, "count": count},
                headers={"Accept": "application/json", "X-Subscription-Token": self.api_key},
                timeout=self.timeout_seconds,
            )
        except _Failed as exc:
            return outcome(self.name, query, "error", error=str(exc))
        items = _items(answer, "web", "results")
        if items is None:
            return _raw(self.name, query, answer)
        results = [_hit(item, "description", ("page_age", "age")) for item in items][:count]
        return outcome(self.name, query, "results", results=results)
