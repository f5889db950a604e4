"""MCP identifiers: how server and tool names become `MCP.<server>.<tool>` (spec §9.1).

Names are camelCased from their words; a name that is taken, reserved, a JavaScript keyword or
one of `__proto__`/`constructor`/`prototype` gets the first free suffix `2`, `3`, ….
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from ..catalog import RESERVED_WORDS, locale_key

__all__ = ["RESERVED_IDENTIFIERS", "allocate_identifiers", "to_identifier"]

RESERVED_IDENTIFIERS: Final[frozenset[str]] = frozenset(
    [
        *("ALL_TOOLS", "agents", "API", "Array", "Boolean", "catalog", "clearTimeout", "Date"),
        *("Error", "globalThis", "log", "json", "JSON", "Map", "Math", "MCP", "namespaces"),
        *("nodes", "Number", "Object", "Promise", "phase", "Set", "setTimeout", "skills"),
        *("String", "text", "tools", "yield_control"),
    ]
)
"""Identifiers no MCP server or tool may take (spec §9.1)."""

_PROTOTYPE_KEYS: Final = frozenset(["__proto__", "constructor", "prototype"])
_WORDS: Final = re.compile(r"[A-Za-z0-9]+")
_LEADING_NON_IDENTIFIER: Final = re.compile(r"^[^A-Za-z_$]+")

SERVER_SCOPE_NAMES: Final = ("$api", "resources", "prompts")
"""Names every server scope owns before its tools are named."""


def to_identifier(name: str, fallback: str) -> str:
    """camelCase `name`: `read_file` → `readFile`, `chrome-devtools` → `chromeDevtools`.

    Words are the runs of ASCII letters and digits; the first keeps its case except a
    lower-cased first letter, later words get an upper-cased first letter. Leading digits are
    dropped; an empty result becomes `fallback`.
    """
    words = _WORDS.findall(name)
    if not words:
        return fallback
    first, rest = words[0], words[1:]
    text = first[:1].lower() + first[1:] + "".join(w[:1].upper() + w[1:] for w in rest)
    text = _LEADING_NON_IDENTIFIER.sub("", text)
    return text or fallback


def _taken(candidate: str, used: set[str]) -> bool:
    return (
        candidate in used
        or candidate in RESERVED_IDENTIFIERS
        or candidate in RESERVED_WORDS
        or candidate in _PROTOTYPE_KEYS
    )


def allocate_identifiers(
    names: Iterable[str], *, fallback: str, used: Iterable[str] = ()
) -> dict[str, str]:
    """Map each distinct name to a unique identifier, allocating in locale order of the names.

    Example: `list_invoices` and `listInvoices` become `listInvoices` and `listInvoices2`.
    """
    taken = set(used)
    out: dict[str, str] = {}
    for name in sorted(dict.fromkeys(names), key=locale_key):
        base = to_identifier(name, fallback)
        candidate, suffix = base, 2
        while _taken(candidate, taken):
            candidate, suffix = f"{base}{suffix}", suffix + 1
        taken.add(candidate)
        out[name] = candidate
    return out
