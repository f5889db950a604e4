"""Tool policy for nested calls: which tool calls run, which are refused, which wait for a person.

Three sources decide, strongest first:

1. the session's `ToolPolicy` (`CodeMode(policy=…)`): `deny`, `ask` and `allow` lists of tool
   names or glob patterns (`fs_*`). **Deny wins** over ask, and ask over allow;
2. a decision a person asked to *remember* for the rest of the session ("allow this tool");
3. the tool's own rule, `Tool(..., approval=…)`: `"never"` (the default), `"always"`, or a
   callable `rule(input) -> bool | str` that asks for approval when it returns `True` or a
   non-empty reason to show the person.

A `before_tool_call` hook may also ask (`HookDecision(approval="why")`).

Exact names in a policy must name tools of the catalog (a typo would silently allow a call), so
an unknown one is a `ConfigurationError`; patterns with glob characters may match none.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from .._lazy import value_class
from ..errors import ConfigurationError

__all__ = ["ApprovalRule", "ToolPolicy", "Verdict", "rule_reason"]

ApprovalRule: TypeAlias = Literal["always", "never"] | Callable[[dict[str, Any]], "bool | str"]
"""A tool's own approval rule (`Tool(..., approval=…)`)."""

Verdict = Literal["allow", "deny", "ask"]
_GLOB = frozenset("*?[")


@value_class
class ToolPolicy:
    """Session-level allow / deny / ask lists by tool name or glob pattern.

    Attributes:
        allow: Tools that run without asking, even when their own rule would ask.
        deny: Tools that never run (the guest gets a catchable `approval_denied` error).
        ask: Tools that always wait for a person's decision.
    """

    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()

    def __post_init__(self) -> None:
        for key in ("allow", "deny", "ask"):
            object.__setattr__(self, key, tuple(_names(key, getattr(self, key))))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ToolPolicy:
        """A policy from `{"allow": [...], "deny": [...], "ask": [...]}`."""
        unknown = set(config) - {"allow", "deny", "ask"}
        if unknown:
            raise ConfigurationError(
                f"unknown tool policy keys {sorted(unknown)!r}; use `allow`, `deny` and `ask`."
            )
        return cls(
            allow=_names("allow", config.get("allow", ())),
            deny=_names("deny", config.get("deny", ())),
            ask=_names("ask", config.get("ask", ())),
        )

    def check_names(self, tool_names: Iterable[str]) -> None:
        """Refuse exact names that name no tool of the catalog.

        Raises:
            ConfigurationError: naming the unknown entry and the known tools.
        """
        known = set(tool_names)
        for key in ("deny", "ask", "allow"):
            for entry in getattr(self, key):
                if not (_GLOB & set(entry)) and entry not in known:
                    raise ConfigurationError(
                        f"tool policy `{key}` names {entry!r}, which is not a tool of this "
                        f"catalog; known tools: {sorted(known)!r}."
                    )

    def verdict(self, tool_name: str) -> Verdict | None:
        """What the policy says of a tool, or `None` when no entry matches."""
        for key in ("deny", "ask", "allow"):
            if any(fnmatch.fnmatchcase(tool_name, entry) for entry in getattr(self, key)):
                return key  # pyright: ignore[reportReturnType]
        return None


def _names(key: str, value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigurationError(f"tool policy `{key}` must be a list of names, got {value!r}.")
    names = list(value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    for name in names:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"tool policy `{key}` entries must be names, got {name!r}.")
    return names  # pyright: ignore[reportUnknownVariableType]


def rule_reason(rule: ApprovalRule, tool_input: dict[str, Any]) -> str | None:
    """The reason a tool's own rule asks for approval of this input, or `None`.

    Raises:
        Exception: whatever the rule callable raises (the caller reports it as a tool error).
    """
    if rule == "never":
        return None
    if rule == "always":
        return "this tool always asks for approval"
    asked = rule(tool_input)  # pyright: ignore[reportCallIssue]
    if isinstance(asked, str):
        return asked or None
    return "this call needs approval" if asked else None
