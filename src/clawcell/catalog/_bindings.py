"""Bindings: each effective tool with its callable name, hints, contract and handle metadata."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._jsonvalue import json_value
from .._lazy import value_class
from ..errors import ConfigurationError
from ._contracts import ToolContract
from ._names import NameRequest, assign_callable_names, locale_key
from ._tool import JsonValue, Tool, ToolResult
from ._typescript._hints import compact_input_hint, compact_output_hint

__all__ = ["Binding", "build_bindings", "guest_value"]


@value_class
class Binding:
    """One tool as the guest sees it.

    Attributes:
        callable_name: The JavaScript global (and handle `.name`).
        tool: The `Tool` that runs.
        catalog_id: Opaque id (`openclaw:core:<name>`); never shown to the guest.
        input_hint: Compact input hint (`unknown` for untrusted tools).
        output_hint: Complete compact output hint, or `None` (`-> ?`).
        metadata: Handle metadata of spec §3.3, in protocol key order.
        contract: The compiled input/output contracts.
    """

    callable_name: str
    tool: Tool
    catalog_id: str
    input_hint: str
    output_hint: str | None
    metadata: dict[str, Any]
    contract: ToolContract

    @property
    def trusted(self) -> bool:
        """Only host (`openclaw`) tools get hints, validation and typed declarations."""
        return self.tool.source == "openclaw"


def _effective(tools: Sequence[Tool]) -> list[Tool]:
    seen_ids: set[str] = set()
    winners: dict[str, Tool] = {}
    for item in tools:
        if not isinstance(item, Tool):  # pyright: ignore[reportUnnecessaryIsInstance] - callers may be untyped
            raise ConfigurationError(f"Catalog entries must be `Tool` values, got {item!r}.")
        if item.catalog_id in seen_ids:
            raise ConfigurationError(
                f"Two tools share the name {item.name!r} and source {item.source!r}; "
                "rename one of them."
            )
        seen_ids.add(item.catalog_id)
        if item.source == "mcp":
            continue
        current = winners.get(item.name)
        if current is None or (item.source == "client" and current.source != "client"):
            winners[item.name] = item
    return list(winners.values())


def _metadata(
    callable_name: str, item: Tool, input_hint: str, output: str | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"callableName": callable_name, "toolName": item.name}
    if item.label is not None:
        metadata["label"] = item.label
    metadata["description"] = item.description
    metadata["source"] = item.source
    metadata["input"] = input_hint
    if output is not None:
        metadata["output"] = output
    return metadata


def build_bindings(tools: Sequence[Tool], *, reserved: Sequence[str] = ()) -> tuple[Binding, ...]:
    """Bindings of the effective tools, sorted by callable name."""
    effective = _effective(tools)
    names = assign_callable_names(
        [NameRequest(catalog_id=t.catalog_id, name=t.name) for t in effective], reserved=reserved
    )
    bindings: list[Binding] = []
    for item in effective:
        trusted = item.source == "openclaw"
        callable_name = names[item.catalog_id]
        input_hint = compact_input_hint(item.parameters) if trusted else "unknown"
        output_hint = compact_output_hint(item.output_schema) if trusted else None
        contract = ToolContract(
            name=callable_name,
            parameters=item.parameters if trusted else None,
            output_schema=item.output_schema if trusted else None,
            input_hint=input_hint,
        )
        bindings.append(
            Binding(
                callable_name=callable_name,
                tool=item,
                catalog_id=item.catalog_id,
                input_hint=input_hint,
                output_hint=output_hint,
                metadata=_metadata(callable_name, item, input_hint, output_hint),
                contract=contract,
            )
        )
    bindings.sort(key=lambda b: locale_key(b.callable_name))
    return tuple(bindings)


def guest_value(result: ToolResult) -> JsonValue:
    """What the guest receives: `details`, or `{"content": [...]}` for content-only results."""
    if result.details is not None or not result.content:
        return json_value(result.details)
    return {"content": json_value(list(result.content))}
