"""Opt-in built-in tools with declared contracts: workspace files, web fetch and web search.

`workspace(root)` gives the file tools, `web(...)` the web tools (`pip install
'clawcell[web]'`), `browser(...)` the browser tool (`pip install 'clawcell[browser]'`),
`from_config(mapping)` any of them from a configuration mapping. See
`docs/tools.md`.
"""

from __future__ import annotations

from ._browser import browser
from ._browser_settings import BrowserSettings
from ._cache import FetchCache
from ._config import from_config
from ._guard import AddressGuard, Resolver, SystemResolver
from ._limits import WorkspaceLimits
from ._providers import BraveProvider, SearxngProvider
from ._search import SearchOutcome, SearchProvider, SearchResult
from ._sessions import bind_agent, sessions
from ._sessions_policy import SessionVisibility
from ._settings import FetchSettings
from ._web import web
from ._workspace import workspace

__all__ = [
    "AddressGuard",
    "BraveProvider",
    "BrowserSettings",
    "FetchCache",
    "FetchSettings",
    "Resolver",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "SearxngProvider",
    "SessionVisibility",
    "SystemResolver",
    "WorkspaceLimits",
    "bind_agent",
    "browser",
    "from_config",
    "sessions",
    "web",
    "workspace",
]
