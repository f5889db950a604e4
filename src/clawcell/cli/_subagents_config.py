"""`[builtin_tools.subagents]`: the sub-agents of the agent `clawcell chat` and `clawcell serve`
build, read here because sub-agents are agents (`clawcell.tools.from_config` sits below
`clawcell.agent` and leaves the table alone).

```toml
[builtin_tools.subagents]
max_depth = 1                          # how deep children nest (1-5)
max_children = 4                       # runs of one session in flight at once (1-32)
keep_finished_runs = 100               # finished run records kept per session (1-100000)

[builtin_tools.subagents.profiles.researcher]
description = "Looks one topic up and answers in a paragraph."
model = "openai:gpt-5.1-mini"          # default: the agent's own model
instructions = "Answer in one paragraph; cite the pages you read."
tools = ["web_search", "web_fetch"]    # names of the agent's tools the child gets (default none)
max_model_turns = 8
max_turn_seconds = 300
limits = { timeoutMs = 30000 }         # as the [limits] table
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, cast

from .. import Limits, Tool
from ..agent import Agent, Model, SubagentProfile, subagent_tools
from ..errors import ConfigurationError

__all__ = ["configure_subagents"]

_WHERE: Final = "[builtin_tools.subagents]"
_TOP: Final = ("keep_finished_runs", "max_children", "max_depth", "profiles")
_PROFILE: Final = (
    "description", "instructions", "limits", "max_model_turns", "max_turn_seconds", "model",
    "tools",
)  # fmt: skip


ModelBuilder = Callable[[str], Model]
"""Builds a profile's model from its `<api>:<model>` spec (`clawcell chat`'s `build_model`)."""


def configure_subagents(
    agent: Agent, section: object, *, tools: Sequence[Tool], build_model: ModelBuilder
) -> None:
    """Give `agent` the sub-agent tools `section` describes (nothing when it is `None`).

    Raises:
        ConfigurationError: An unknown key, a wrong type, no profile, a tool name the agent
            lacks, or a model that cannot be built, with its place.
    """
    if section is None:
        return
    top = _mapping(section, _WHERE, _TOP)
    profiles = _mapping(top.get("profiles", {}), f"{_WHERE} profiles", None)
    if not profiles:
        raise ConfigurationError(
            f"{_WHERE} names no profile: add a `[builtin_tools.subagents.profiles.<name>]` "
            "table with at least a `description`."
        )
    by_name = {tool.name: tool for tool in tools}
    built = [
        _profile(name, value, agent.model, by_name, build_model) for name, value in profiles.items()
    ]
    # Only the caps the table names: their defaults are `subagent_tools`' own.
    caps = {key: top[key] for key in _TOP if key != "profiles" and key in top}
    subagent_tools(agent, built, **caps)


def _profile(
    name: str, value: object, model: Model, tools: Mapping[str, Tool], build: ModelBuilder
) -> SubagentProfile:
    where = f"{_WHERE} profiles.{name}"
    table = _mapping(value, where, _PROFILE)
    spec = table.get("model")
    if spec is not None:
        if not isinstance(spec, str):
            raise ConfigurationError(f"{where}: `model` must be `<api>:<model>`, got {spec!r}.")
        model = build(spec)
    limits = table.get("limits")
    return SubagentProfile(
        name=name,
        model=model,
        description=_text(where, table, "description"),
        instructions=_text(where, table, "instructions"),
        tools=_tools(where, table.get("tools", []), tools),
        limits=None if limits is None else Limits.from_config(_mapping(limits, where, None)),
        **{key: table[key] for key in ("max_model_turns", "max_turn_seconds") if key in table},
    )


def _tools(where: str, names: object, tools: Mapping[str, Tool]) -> list[Tool]:
    if not isinstance(names, list) or not all(
        isinstance(n, str) for n in cast(list[object], names)
    ):
        raise ConfigurationError(f"{where}: `tools` must be a list of tool names, got {names!r}.")
    missing = [n for n in cast(list[str], names) if n not in tools]
    if missing:
        raise ConfigurationError(
            f"{where}: the agent has no tool {missing[0]!r}; a profile's `tools` name the "
            f"agent's own tools: {sorted(tools)!r}."
        )
    return [tools[n] for n in cast(list[str], names)]


def _text(where: str, table: Mapping[str, Any], key: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise ConfigurationError(f"{where}: `{key}` must be a string, got {value!r}.")
    return value


def _mapping(value: object, where: str, known: tuple[str, ...] | None) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where} must be a table, got {value!r}.")
    table = dict(cast(Mapping[str, Any], value))
    unknown = sorted(set(table) - set(known)) if known is not None else []
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(known or ())}."
        )
    return table
