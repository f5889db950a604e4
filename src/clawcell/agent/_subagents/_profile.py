"""`SubagentProfile`: one kind of sub-agent a parent may spawn; checks of the runtime settings."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, cast

from ... import Limits, Tool
from ..._lazy import value_class
from ...approvals import ToolPolicy
from ...errors import ConfigurationError
from .._model import Model

__all__ = ["SubagentProfile", "bounded", "inherited_policy", "profiles_by_name"]

_GLOB = frozenset("*?[")
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@value_class
class SubagentProfile:
    """One kind of sub-agent a parent may spawn.

    Attributes:
        name: How `sessions_spawn` names it (letters, digits, `_`, `.`, `-`; at most 64).
        model: The child's model.
        description: What it is good for, shown by `agents_list`.
        tools: The child's tools (none of the parent's are inherited; the parent's policy
            `deny` and `ask` lists are, see `inherited_policy`).
        instructions: The child's system prompt.
        limits: The child's cell limits (as `Agent(limits=...)`).
        max_model_turns: Model calls allowed for one child run.
        max_turn_seconds: Wall-clock seconds allowed for one child run.
    """

    name: str
    model: Model
    description: str = ""
    tools: Sequence[Tool] = ()
    instructions: str = ""
    limits: Limits | Mapping[str, Any] | None = None
    max_model_turns: int = 16
    max_turn_seconds: float = 600.0

    def __post_init__(self) -> None:
        name = cast(object, self.name)
        if not isinstance(name, str) or not _PROFILE_NAME.match(name):
            raise ConfigurationError(
                f"a sub-agent profile name must be 1-64 letters, digits, `_`, `.` or `-`, "
                f"starting with a letter or digit; got {self.name!r}."
            )
        if not isinstance(cast(object, self.description), str):
            raise ConfigurationError(
                f"profile {name!r}: `description` must be a string, got {self.description!r}."
            )
        object.__setattr__(self, "tools", tuple(self.tools))


def bounded(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(
            f"`{name}` must be an integer from {low} to {high}, got {value!r}."
        )
    return value


def profiles_by_name(profiles: Iterable[SubagentProfile]) -> dict[str, SubagentProfile]:
    found: dict[str, SubagentProfile] = {}
    for profile in profiles:
        if not isinstance(cast(object, profile), SubagentProfile):
            raise ConfigurationError(
                f"sub-agent profiles must be `SubagentProfile` values, got {profile!r}."
            )
        if profile.name in found:
            raise ConfigurationError(f"two sub-agent profiles are named {profile.name!r}.")
        found[profile.name] = profile
    if not found:
        raise ConfigurationError("`profiles` is empty: give at least one `SubagentProfile`.")
    return found


def inherited_policy(parent: ToolPolicy | None, tool_names: Collection[str]) -> ToolPolicy | None:
    """What a child sub-agent inherits of its parent's policy: its `deny` and `ask` lists
    (never `allow`, which would widen what the child's own tools ask). Exact names that
    name none of the child's tools are dropped (they could not match); patterns are kept.
    """
    if parent is None:
        return None

    def kept(entries: Sequence[str]) -> tuple[str, ...]:
        return tuple(e for e in entries if set(e) & _GLOB or e in tool_names)

    deny, ask = kept(parent.deny), kept(parent.ask)
    return ToolPolicy(deny=deny, ask=ask) if deny or ask else None
