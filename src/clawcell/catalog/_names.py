"""Callable names: how a tool name becomes a JavaScript global (spec §3.2).

Names are derived deterministically from the tool name and its catalog id, so the quick index,
the guest globals and the bridge routing all agree without sharing state.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Final

from .._lazy import value_class
from ..runtime import wire

__all__ = ["NameRequest", "assign_callable_names", "callable_base", "locale_key"]

RESERVED_GLOBAL_NAMES: Final[frozenset[str]] = wire.GUEST_GLOBALS | frozenset(
    [
        # Reserved by the original's guest API although clawcell's controller does not define
        # them, so a catalog names its tools the same way in both.
        "ALL_TOOLS",
        "agents",
        "globalThis",
        "log",
        "nodes",
        "phase",
        "skills",
        "tools",
        "queueMicrotask",
        "URL",
        "AggregateError",
        "Array",
        "ArrayBuffer",
        "Atomics",
        "BigInt",
        "BigInt64Array",
        "BigUint64Array",
        "Boolean",
        "DataView",
        "Date",
        "Error",
        "EvalError",
        "FinalizationRegistry",
        "Float32Array",
        "Float64Array",
        "Function",
        "Infinity",
        "Int16Array",
        "Int32Array",
        "Int8Array",
        "Intl",
        "JSON",
        "Map",
        "Math",
        "NaN",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "SharedArrayBuffer",
        "String",
        "Symbol",
        "SyntaxError",
        "TypeError",
        "URIError",
        "Uint16Array",
        "Uint32Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "WeakMap",
        "WeakRef",
        "WeakSet",
        "WebAssembly",
        "console",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "eval",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "undefined",
        "unescape",
    ]
)
"""Globals a tool may never shadow: the guest API (`wire.GUEST_GLOBALS`), names the original
reserves, and ES globals."""

RESERVED_WORDS: Final[frozenset[str]] = frozenset(
    [
        "break",
        "case",
        "catch",
        "continue",
        "debugger",
        "default",
        "do",
        "else",
        "finally",
        "for",
        "function",
        "if",
        "return",
        "switch",
        "throw",
        "try",
        "var",
        "const",
        "while",
        "with",
        "new",
        "this",
        "super",
        "class",
        "extends",
        "export",
        "import",
        "null",
        "true",
        "false",
        "in",
        "instanceof",
        "typeof",
        "void",
        "delete",
        "await",
        "enum",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "static",
        "yield",
    ]
)
"""JavaScript keywords and strict-mode reserved words."""

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_$]")
_IDENTIFIER_START = re.compile(r"^[A-Za-z_$]")


@value_class
class NameRequest:
    """One effective catalog entry asking for a callable name."""

    catalog_id: str
    name: str


def callable_base(name: str) -> str:
    """The identifier a tool name maps to before collision handling.

    Every character outside `[A-Za-z0-9_$]` becomes `_`; names that do not start like an
    identifier, or start with the private `__openclaw` prefix, get a `tool_` prefix.
    """
    normalized = _NOT_IDENTIFIER.sub("_", name)
    if _IDENTIFIER_START.match(normalized) and not normalized.startswith("__openclaw"):
        return normalized
    return f"tool_{normalized}"


def _char_key(char: str) -> tuple[int, int]:
    # Approximates ICU root collation (JavaScript `localeCompare`) for identifier text:
    # punctuation < symbols < digits < letters, letters case-insensitive at first.
    if char.isalpha():
        return (3, ord(char.lower()))
    if char.isdigit():
        return (2, ord(char))
    if char in "$+<=>^`|~":
        return (1, ord(char))
    return (0, ord(char))


@functools.lru_cache(maxsize=4096)  # names recur: every `CodeMode` sorts its tools by them
def locale_key(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """A sort key that orders strings like JavaScript's `a.localeCompare(b)` in `en`.

    The primary level ignores case; ties are broken with lowercase before uppercase.
    """
    primary = tuple(_char_key(char) for char in text)
    tertiary = tuple(0 if char.islower() or not char.isalpha() else 1 for char in text)
    return (primary, tertiary)


def _suffixed(base: str, catalog_id: str, used: set[str]) -> str:
    digest = hashlib.sha256(catalog_id.encode("utf-8")).hexdigest()
    for length in range(8, len(digest) + 1, 2):
        candidate = f"{base}_{digest[:length]}"
        if candidate not in used and candidate not in RESERVED_WORDS:
            return candidate
    raise RuntimeError(f"could not allocate a unique callable name for {catalog_id!r}")


def assign_callable_names(
    requests: Sequence[NameRequest], *, reserved: Iterable[str] = ()
) -> dict[str, str]:
    """Map each catalog id to its callable name.

    Entries that can keep their exact name go first, then by base name and catalog id; a name
    that is reserved or taken gets `_<sha256(catalog_id)[:8]>` (grown by two hex digits until
    unique).
    """
    used = set(RESERVED_GLOBAL_NAMES) | set(reserved)
    candidates: list[tuple[bool, str, NameRequest]] = []
    for request in requests:
        base = callable_base(request.name)
        exact = request.name == base and base not in RESERVED_WORDS and base not in used
        candidates.append((exact, base, request))
    candidates.sort(
        key=lambda item: (not item[0], locale_key(item[1]), locale_key(item[2].catalog_id))
    )
    names: dict[str, str] = {}
    for _, base, request in candidates:
        name = base
        if name in RESERVED_WORDS or name in used:
            name = _suffixed(base, request.catalog_id, used)
        used.add(name)
        names[request.catalog_id] = name
    return names
