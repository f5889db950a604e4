"""Opt-in built-in tools with declared contracts: workspace files, web fetch and web search."""

from __future__ import annotations

from ._limits import WorkspaceLimits
from ._workspace import workspace

__all__ = ["WorkspaceLimits", "workspace"]
