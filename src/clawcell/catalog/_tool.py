"""The `Tool` value: one async Python callable the guest can call by name."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Final, Literal, TypeAlias, cast

from .._lazy import value_class
from ..approvals import ApprovalRule
from ..errors import ConfigurationError

__all__ = ["ExecutionMode", "JsonValue", "Tool", "ToolResult", "ToolSource", "catalog_id_for"]

JsonValue: TypeAlias = Any
"""Any value `json.dumps` accepts: dict, list, str, int, float, bool or None."""

ExecutionMode = Literal["parallel", "sequential"]
ToolSource = Literal["openclaw", "client", "mcp"]

_ID_PREFIXES: Final[dict[str, str]] = {
    "openclaw": "openclaw:core",
    "client": "client",
    "mcp": "mcp",
}


def catalog_id_for(source: ToolSource, name: str) -> str:
    """The opaque catalog id of a tool named `name` from `source`."""
    return f"{_ID_PREFIXES[source]}:{name}"


_NAME = re.compile(r"^[^\x00-\x1f]{1,128}$")


@value_class
class ToolResult:
    """What a tool returns when it has rendered content besides its `details`.

    Attributes:
        details: The structured JSON value the guest receives. `None` means "no details".
        content: Rendered content blocks (`{"type": "text", "text": ...}` and friends). A tool
            with content but no details hands the guest `{"content": [...]}`.
    """

    details: JsonValue = None
    content: Sequence[Mapping[str, Any]] = ()


ToolExecute: TypeAlias = Callable[[dict[str, Any]], Awaitable[Any] | Any]


@value_class
class Tool:
    """A typed tool the guest calls as an async global.

    Attributes:
        name: The tool's name; the guest calls it by a callable name derived from it.
        execute: `async def execute(input: dict) -> details | ToolResult`. A plain function
            works too; it runs on the event loop, so keep it short.
        description: What the tool does, shown to the model.
        label: A short human label.
        parameters: JSON Schema of the input object.
        output_schema: JSON Schema of the returned `details`, or `None` when unknown.
        execution_mode: `"sequential"` tools never overlap other calls of the same catalog.
        source: Trust source; only `"openclaw"` (the host's own tools) get validation and hints.
        replay_safe: The call may be re-dispatched after a process restart.
        approval: Whether a call waits for a person's decision before it runs: `"never"`
            (the default), `"always"`, or `rule(input) -> bool | str` (a string is the reason
            shown to the person). See `docs/approvals.md`.
        network: Its results are network content (web pages, third-party APIs): a run that
            calls it is network-derived, so its model-facing envelope is wrapped as untrusted
            content and the values it saves or stores carry that provenance (spec §11.7).
        on_close: Releases what the tool owns (its processes, connections, a browser); a
            plain function or one returning an awaitable (an `async def`). Called, maybe
            more than once, when a `CodeMode`, an agent or the automations worker holding
            it closes (`close_tools`), so make it idempotent. `None` (the default) when it
            owns nothing.
    """

    name: str
    execute: ToolExecute
    description: str = ""
    label: str | None = None
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: Mapping[str, Any] | None = None
    execution_mode: ExecutionMode = "parallel"
    source: ToolSource = "openclaw"
    replay_safe: bool = False
    approval: ApprovalRule = "never"
    network: bool = False
    on_close: Callable[[], object] | None = None

    def __post_init__(self) -> None:
        name = cast(object, self.name)
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigurationError(
                f"Tool name must be 1-128 printable characters, got {self.name!r}."
            )
        if not callable(self.execute):
            raise ConfigurationError(f"Tool {self.name!r}: `execute` must be an async callable.")
        if self.execution_mode not in ("parallel", "sequential"):
            raise ConfigurationError(
                f"Tool {self.name!r}: `execution_mode` must be 'parallel' or 'sequential', "
                f"got {self.execution_mode!r}."
            )
        if self.source not in ("openclaw", "client", "mcp"):
            raise ConfigurationError(
                f"Tool {self.name!r}: `source` must be 'openclaw', 'client' or 'mcp', "
                f"got {self.source!r}."
            )
        if self.approval not in ("always", "never") and not callable(self.approval):
            raise ConfigurationError(
                f"Tool {self.name!r}: `approval` must be 'always', 'never' or a callable "
                f"`rule(input) -> bool | str`, got {self.approval!r}."
            )
        if not isinstance(cast(object, self.parameters), Mapping):
            raise ConfigurationError(
                f"Tool {self.name!r}: `parameters` must be a JSON Schema dict."
            )

    @property
    def catalog_id(self) -> str:
        """The opaque catalog id (`openclaw:core:<name>` for host tools)."""
        return catalog_id_for(self.source, self.name)
