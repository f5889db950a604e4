"""Opt-in built-in tools with declared contracts: workspace files, shell commands, web fetch
and web search.

`workspace(root)` gives the file tools, `shell(root)` `exec` and `process`,
`automations(store)` the scheduler's jobs, `web(...)` the web tools (the `[web]` extra),
`browser(...)` the browser tool (the `[browser]` extra), `sessions(agent)` the session tools,
`from_config(mapping)` any of them from a configuration mapping. See `docs/tools.md`.
"""

from __future__ import annotations

from ._automations._automations import automations
from ._browser._browser import browser
from ._browser._browser_settings import BrowserSettings
from ._guard import AddressGuard, Resolver, SystemResolver
from ._sessions._sessions import bind_agent, sessions
from ._sessions._sessions_policy import SessionVisibility
from ._sessions._sessions_sends import SendLimits
from ._shell._shell import shell
from ._shell._shell_settings import ShellSettings
from ._tool_config import from_config
from ._web._cache import FetchCache
from ._web._fetch_settings import FetchSettings
from ._web._search_providers import BraveProvider, SearxngProvider
from ._web._web import web
from ._web._web_search import SearchOutcome, SearchProvider, SearchResult
from ._workspace._workspace import workspace
from ._workspace._workspace_limits import WorkspaceLimits

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
    "SendLimits",
    "SessionVisibility",
    "ShellSettings",
    "SystemResolver",
    "WorkspaceLimits",
    "automations",
    "bind_agent",
    "browser",
    "from_config",
    "sessions",
    "shell",
    "web",
    "workspace",
]
