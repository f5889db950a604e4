"""Replay policy: which host requests may run again after a restart, and what restart-safe
cells may ask for (spec `code-mode.md` §2.5, §8).

A request that was running when its process died is re-dispatched by the process that
continues the cell only when it is *replay-safe*: `sleep`, and calls of tools marked
`Tool(..., replay_safe=True)`. A restart-safe cell (`exec` with `restartSafe: true`) may only
make requests that are replay-safe or never have effects (search, describe, the API files,
`yield`); namespace (MCP) calls, results and store operations are refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ..catalog import Catalog

__all__ = ["RESTART_SAFE_NAMESPACE", "RESTART_SAFE_TOOLS", "ReplayPolicy"]

RESTART_SAFE_NAMESPACE: Final = "restart-safe code mode cannot call namespace tools."
RESTART_SAFE_TOOLS: Final = (
    "restart-safe code mode cannot call tool surfaces that are not proven replay-safe; "
    "use audited read, grep, or find tools."
)
_ALWAYS_REPLAY_SAFE: Final = frozenset(
    {"search", "describe", "apiList", "apiRead", "sleep", "yield"}
)


class ReplayPolicy:
    """The replay rules for one catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def replay_safe(self, method: str, args: list[Any]) -> bool:
        """Whether a request that was running when its process died may run again."""
        if method == "sleep":
            return True
        if method != "callValue" or not args:
            return False
        binding = self._catalog.binding(str(args[0]))
        return binding is not None and binding.tool.replay_safe

    def restart_guard(self, method: str, args: list[Any]) -> str | None:
        """Why a restart-safe cell may not make this request, or `None` when it may."""
        if method == "namespace":
            return RESTART_SAFE_NAMESPACE
        if method in _ALWAYS_REPLAY_SAFE or self.replay_safe(method, args):
            return None
        return RESTART_SAFE_TOOLS

    def reports_replay_safe(
        self, restart_safe: bool, pending: Iterable[tuple[str, list[Any]]]
    ) -> bool:
        """The envelope's `replaySafe`: a restart-safe cell whose pending work may replay."""
        if not restart_safe:
            return False
        return all(method == "yield" or self.replay_safe(method, args) for method, args in pending)
