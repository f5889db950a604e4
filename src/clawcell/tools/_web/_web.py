"""`web(...)`: the `web_fetch` and `web_search` tools (the `[web]` extra)."""

from __future__ import annotations

from ..._lazy import install_hint
from ...catalog import Tool
from ...errors import ConfigurationError
from .._guard import AddressGuard, Resolver, SystemResolver
from ._cache import FetchCache
from ._fetch_settings import FetchSettings
from ._web_search import SearchProvider, web_search_tool

__all__ = ["web"]


def web(
    *,
    search: SearchProvider | None = None,
    fetch: bool = True,
    settings: FetchSettings | None = None,
    cache: FetchCache | None = None,
    resolver: Resolver | None = None,
    allow_loopback_for_tests: bool = False,
) -> list[Tool]:
    """The web tools: `web_fetch` (unless `fetch=False`) and `web_search` (with a provider).

    Both tools are network content (`Tool(network=True)`): a run that calls them is
    network-derived, so its model-facing text is wrapped as untrusted content.

    Args:
        search: The search provider (`SearxngProvider`, `BraveProvider`); no `web_search`
            without one.
        fetch: Include `web_fetch`.
        settings: Byte, character, time and redirect caps of `web_fetch`.
        cache: The page cache (a new 15-minute in-memory `FetchCache` by default).
        resolver: The DNS seam (`SystemResolver()` by default).
        allow_loopback_for_tests: Let `web_fetch` reach loopback addresses. Tests only:
            production must leave it `False`, which refuses loopback, private, link-local and
            every other special-use range.

    Raises:
        ConfigurationError: The `[web]` extra is not installed, or nothing was asked for.
    """
    tools: list[Tool] = []
    if fetch:
        try:
            from ._fetch import Fetcher
            from ._web_fetch import web_fetch_tool
        except ImportError as exc:
            raise ConfigurationError(
                f"`web_fetch` needs httpx, beautifulsoup4 and markdownify ({exc.name} is "
                f"missing): {install_hint('web')}."
            ) from exc
        guard = AddressGuard(
            resolver=resolver or SystemResolver(),
            allow_loopback_for_tests=allow_loopback_for_tests,
        )
        fetcher = Fetcher(
            guard=guard,
            settings=settings or FetchSettings(),
            cache=cache if cache is not None else FetchCache(),
        )
        tools.append(web_fetch_tool(fetcher))
    if search is not None:
        tools.append(web_search_tool(search))
    if not tools:
        raise ConfigurationError(
            "`web()` was asked for no tool: pass `search=` a provider, or leave `fetch=True`."
        )
    return tools
