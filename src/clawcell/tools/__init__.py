"""Opt-in built-in tools with declared contracts: workspace files, shell commands, web fetch
and web search.

`workspace(root)` gives the file tools, `shell(root)` `exec` and `process`,
`automations(store)` the scheduler's jobs, `web(...)` the web
tools (`pip install 'clawcell[web]'`), `from_config(mapping)` them from a configuration
mapping. See `docs/tools.md`.
"""

from __future__ import annotations

from ._automations import automations
from ._cache import FetchCache
from ._config import from_config
from ._guard import AddressGuard, Resolver, SystemResolver
from ._limits import WorkspaceLimits
from ._providers import BraveProvider, SearxngProvider
from ._search import SearchOutcome, SearchProvider, SearchResult
from ._settings import FetchSettings
from ._shell import shell
from ._shell_settings import ShellSettings
from ._web import web
from ._workspace import workspace

__all__ = [
    "AddressGuard",
    "BraveProvider",
    "FetchCache",
    "FetchSettings",
    "Resolver",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "SearxngProvider",
    "ShellSettings",
    "SystemResolver",
    "WorkspaceLimits",
    "automations",
    "from_config",
    "shell",
    "web",
    "workspace",
]
