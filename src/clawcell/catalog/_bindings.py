"""Bindings: each effective tool with its callable name, hints, contract and handle metadata.

What a binding derives from its tool (the callable name, the hints, the metadata, the
compiled contract) depends only on the tools' content, and every `CodeMode` of a process
usually names the same tools: the derivations are kept per process, keyed by that content
(`_DerivedCache`), and each catalog gets new `Binding` values around its own `Tool` objects.
"""

from __future__ import annotations

import marshal
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

from .._jsonvalue import json_value
from .._lazy import value_class
from ..errors import ConfigurationError
from ._names import NameRequest, assign_callable_names, locale_key
from ._tool import JsonValue, Tool, ToolResult, ToolSource, catalog_id_for

if TYPE_CHECKING:
    from ._contracts import ToolContract

__all__ = [
    "BINDINGS_CACHE_SIZE",
    "BINDINGS_CACHE_TOOLS",
    "Binding",
    "build_bindings",
    "guest_value",
]


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


# What of a tool its binding derives from, in this order: source, name, label, description,
# parameters and output schema (`None` for untrusted tools, which get neither hints nor checks).
_Content: TypeAlias = tuple[
    ToolSource, str, str | None, str, Mapping[str, Any] | None, Mapping[str, Any] | None
]


def _content(item: Tool) -> _Content:
    trusted = item.source == "openclaw"
    return (
        item.source,
        item.name,
        item.label,
        item.description,
        item.parameters if trusted else None,
        item.output_schema if trusted else None,
    )


@value_class
class _Derived:
    """What one effective tool's binding derives from its content; `index` is the tool's
    place among the effective tools."""

    index: int
    callable_name: str
    catalog_id: str
    input_hint: str
    output_hint: str | None
    metadata: dict[str, Any]
    contract: ToolContract


def _metadata(
    callable_name: str, content: _Content, input_hint: str, output: str | None
) -> dict[str, Any]:
    source, name, label, description = content[:4]
    metadata: dict[str, Any] = {"callableName": callable_name, "toolName": name}
    if label is not None:
        metadata["label"] = label
    metadata["description"] = description
    metadata["source"] = source
    metadata["input"] = input_hint
    if output is not None:
        metadata["output"] = output
    return metadata


def _derive(contents: Sequence[_Content], reserved: Sequence[str]) -> tuple[_Derived, ...]:
    """The derivations of the effective tools' contents, sorted by callable name."""
    if not contents:  # (a catalog without tools never loads `_contracts` nor the hints)
        return ()
    from ._contracts import ToolContract
    from ._typescript._hints import compact_input_hint, compact_output_hint

    ids = [catalog_id_for(content[0], content[1]) for content in contents]
    names = assign_callable_names(
        [NameRequest(catalog_id=i, name=c[1]) for i, c in zip(ids, contents, strict=True)],
        reserved=reserved,
    )
    derived: list[_Derived] = []
    for index, (catalog_id, content) in enumerate(zip(ids, contents, strict=True)):
        trusted = content[0] == "openclaw"
        parameters, output_schema = content[4], content[5]
        callable_name = names[catalog_id]
        input_hint = compact_input_hint(parameters) if trusted else "unknown"
        output_hint = compact_output_hint(output_schema) if trusted else None
        contract = ToolContract(
            name=callable_name,
            parameters=parameters,
            output_schema=output_schema,
            input_hint=input_hint,
        )
        derived.append(
            _Derived(
                index=index,
                callable_name=callable_name,
                catalog_id=catalog_id,
                input_hint=input_hint,
                output_hint=output_hint,
                metadata=_metadata(callable_name, content, input_hint, output_hint),
                contract=contract,
            )
        )
    derived.sort(key=lambda d: locale_key(d.callable_name))
    return tuple(derived)


BINDINGS_CACHE_SIZE: Final = 128
"""How many tool sets' derivations a process keeps (least recently used dropped first)."""
BINDINGS_CACHE_TOOLS: Final = 4096
"""How many tools' derivations (each with its compiled validators) those sets may hold in
all: a larger set is derived every time, and older sets make room for a new one."""


class _DerivedCache:
    """The derivations of recently seen tool sets, keyed by their content.

    Memory as a cache of pure derivations, not state: an entry is a function of its key
    alone (the reserved names and each effective tool's content, `marshal` bytes), so
    several workers each keep their own and no store is involved. The key is exact: `marshal`
    spells out every value's type (`1`, `1.0` and `True` differ, a tuple is no list, key
    order counts) and refuses anything but the plain built-in types (a dict subclass, a
    mapping proxy, a cycle), whose tool sets are derived every time instead. Entries hold
    their own copies of the schemas (decoded from the key), never the caller's objects, so
    an edit of a schema in place after a catalog was built is new content for the next one.
    """

    def __init__(self, size: int, tools: int) -> None:
        self.size = size
        self.tools = tools
        self._entries: dict[bytes, tuple[_Derived, ...]] = {}
        self._held = 0  # the tools of every entry
        self._lock = threading.Lock()

    def derived(self, contents: list[_Content], reserved: Sequence[str]) -> tuple[_Derived, ...]:
        """The derivations of `contents`, from the cache when this content was seen."""
        if len(contents) > self.tools:  # never kept: no key, no copy
            return _derive(contents, reserved)
        try:
            key = marshal.dumps(cast(Any, (tuple(reserved), tuple(contents))), 2)
        except ValueError:  # not plain built-in values: nothing to key them by
            return _derive(contents, reserved)
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._entries[key] = entry  # most recently used last
                return entry
        own: tuple[tuple[str, ...], tuple[_Content, ...]] = marshal.loads(key)
        own_reserved, own_contents = own
        entry = _derive(own_contents, own_reserved)
        if all(d.contract.valid for d in entry):
            self._keep(key, entry)  # (an invalid contract raises its own error in each)
        return entry

    def _keep(self, key: bytes, entry: tuple[_Derived, ...]) -> None:
        with self._lock:
            previous = self._entries.pop(key, None)  # another thread derived it meanwhile
            self._held += len(entry) - (0 if previous is None else len(previous))
            self._entries[key] = entry
            while len(self._entries) > self.size or self._held > self.tools:
                self._held -= len(self._entries.pop(next(iter(self._entries))))


_cache: Final = _DerivedCache(BINDINGS_CACHE_SIZE, BINDINGS_CACHE_TOOLS)


def build_bindings(tools: Sequence[Tool], *, reserved: Sequence[str] = ()) -> tuple[Binding, ...]:
    """Bindings of the effective tools, sorted by callable name."""
    effective = _effective(tools)
    derived = _cache.derived([_content(item) for item in effective], reserved)
    return tuple(
        Binding(
            callable_name=d.callable_name,
            tool=effective[d.index],
            catalog_id=d.catalog_id,
            input_hint=d.input_hint,
            output_hint=d.output_hint,
            metadata=dict(d.metadata),
            contract=d.contract,
        )
        for d in derived
    )


def guest_value(result: ToolResult) -> JsonValue:
    """What the guest receives: `details`, or `{"content": [...]}` for content-only results."""
    if result.details is not None or not result.content:
        return json_value(result.details)
    return {"content": json_value(list(result.content))}
