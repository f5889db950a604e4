"""`CodeMode`'s configuration checks: each argument validated once, in the constructor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ._limits import Limits
from ._runs._parked import RunHome
from ._session_ids import check_session_id
from .approvals import Approvals, DecisionLedger, ToolPolicy
from .catalog import Catalog, Tool
from .errors import ConfigurationError
from .store import SessionStore

if TYPE_CHECKING:
    from ._runs._host import CellHost

__all__ = [
    "approval_ttl_from",
    "approvals_from",
    "limits_from",
    "policy_from",
    "session_id_from",
    "store_from",
    "tools_from",
]


def limits_from(limits: object) -> Limits:
    """A `Limits`, from `None` (defaults), a `Limits` or a mapping of settings."""
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return Limits.from_config(cast(Mapping[str, Any], limits))
    raise ConfigurationError(
        f"`limits` must be a `clawcell.Limits` or a mapping of settings, got {limits!r}."
    )


def tools_from(tools: object) -> list[Tool]:
    """The tool list, from `None`, one `Tool` or an iterable of them."""
    if tools is None:
        return []
    if isinstance(tools, Tool):
        return [tools]
    if not isinstance(tools, Iterable):
        raise ConfigurationError(f"`tools` must be an iterable of `clawcell.Tool`, got {tools!r}.")
    return list(cast(Iterable[Tool], tools))


def session_id_from(session_id: object) -> str:
    return check_session_id(session_id)


def store_from(store: object) -> SessionStore | None:
    if store is not None and not isinstance(store, SessionStore):
        raise ConfigurationError(
            f"`store` must be a session store such as `clawcell.SQLiteStore(path)`, got {store!r}."
        )
    return store


def policy_from(policy: object, catalog: Catalog) -> ToolPolicy | None:
    """The session tool policy, its exact names checked against the catalog's tools."""
    if policy is None:
        return None
    if isinstance(policy, Mapping):
        policy = ToolPolicy.from_config(cast(Mapping[str, Any], policy))
    if not isinstance(policy, ToolPolicy):
        raise ConfigurationError(
            f"`policy` must be a `clawcell.approvals.ToolPolicy` or a mapping, got {policy!r}."
        )
    policy.check_names(binding.tool.name for binding in catalog.bindings)
    return policy


def approval_ttl_from(seconds: object, limits: Limits) -> float:
    if seconds is None:
        return float(limits.snapshot_ttl_seconds)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        raise ConfigurationError(
            f"`approval_ttl_seconds` must be a positive number of seconds, got {seconds!r}."
        )
    return float(seconds)


def approvals_from(policy: object, ttl_seconds: object, home: RunHome, host: CellHost) -> Approvals:
    """The session's approval gates: its checked policy, its decision ledger and TTL."""
    return Approvals(
        policy=policy_from(policy, host.catalog),
        ledger=DecisionLedger(home.store, home.session_id, home.keys),
        ttl_seconds=approval_ttl_from(ttl_seconds, host.limits),
    )
