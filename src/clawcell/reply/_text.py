"""JavaScript string semantics the protocol is defined in.

The Rich Output Protocol was specified against JavaScript strings: lengths and offsets count
UTF-16 code units, `\\s` and `trim()` use the ECMAScript whitespace set, and `Number()` parses
its own numeric grammar. Python differs on each point (`str.isspace` knows `\\x1c`-`\\x1f` and
`\\x85` but not `\\ufeff`; `len` counts code points), so every module of `clawcell.reply` goes
through these helpers instead of the built-ins where the difference is observable.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any, Final, cast

__all__ = [
    "JS_LINE_SPACE_CLASS",
    "JS_SPACE",
    "JS_SPACE_CLASS",
    "Utf16Offsets",
    "as_list",
    "as_record",
    "is_js_space",
    "js_number",
    "js_trim",
    "js_trim_end",
    "js_trim_start",
    "require_str",
    "utf16_len",
    "utf16_prefix",
]

#: The characters ECMAScript's `\s` and `String.prototype.trim` treat as whitespace.
JS_SPACE: Final = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: A regex character class body equivalent to JavaScript's `\s`.
JS_SPACE_CLASS: Final = (
    r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

#: `JS_SPACE_CLASS` without the line feed: whitespace within one line.
JS_LINE_SPACE_CLASS: Final = (
    r"\t\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_SPACE_SET: Final = frozenset(JS_SPACE)
_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


def require_str(value: object, name: str) -> str:
    """Return `value` if it is a `str`, else raise a `TypeError` naming the argument."""
    if isinstance(value, str):
        return value
    raise TypeError(f"`{name}` must be a str, got {type(value).__name__}: {value!r:.80}")


def is_js_space(char: str) -> bool:
    """Whether one character is whitespace for JavaScript's `\\s`."""
    return char in _SPACE_SET


def js_trim(text: str) -> str:
    """`String.prototype.trim`."""
    return text.strip(JS_SPACE)


def js_trim_start(text: str) -> str:
    """`String.prototype.trimStart`."""
    return text.lstrip(JS_SPACE)


def js_trim_end(text: str) -> str:
    """`String.prototype.trimEnd`."""
    return text.rstrip(JS_SPACE)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (JavaScript's `length`); lone surrogates count once."""
    if text.isascii():
        return len(text)
    return len(text) + len(_ASTRAL.findall(text))


def utf16_prefix(text: str, units: int) -> str:
    """The first `units` UTF-16 code units of `text`, like JavaScript's `slice(0, units)`.

    A surrogate pair cut in half leaves its high surrogate alone, exactly as JavaScript does.
    """
    if text.isascii() or units <= 0:
        return text[: max(units, 0)]
    count = 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if count + width > units:
            if width == 2 and count + 1 == units:
                return text[:index] + chr(0xD800 + ((ord(char) - 0x10000) >> 10))
            return text[:index]
        count += width
    return text


class Utf16Offsets:
    """Converts Python indexes of one text to UTF-16 offsets (JavaScript string indexes).

    Offsets only drift past astral characters (two units each), so only their positions are
    kept; a conversion is one binary search.
    """

    def __init__(self, text: str) -> None:
        self._astral = [] if text.isascii() else [m.start() for m in _ASTRAL.finditer(text)]

    def at(self, index: int) -> int:
        """The UTF-16 offset of the Python index `index` (which may be the text's length)."""
        return index + bisect_left(self._astral, index) if self._astral else index


_DECIMAL: Final = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_RADIX: Final = re.compile(r"0([xXoObB])([0-9a-zA-Z]+)")
_RADIX_BASE: Final = {"x": 16, "o": 8, "b": 2}


def js_number(text: str) -> float:
    """JavaScript's `Number(string)`: `NaN` when the string is not a number literal."""
    body = js_trim(text)
    if not body:
        return 0.0
    if body in ("Infinity", "+Infinity"):
        return math.inf
    if body == "-Infinity":
        return -math.inf
    radix = _RADIX.fullmatch(body)
    if radix:
        try:
            value = int(radix.group(2), _RADIX_BASE[radix.group(1).lower()])
        except ValueError:
            return math.nan
        try:
            return float(value)
        except OverflowError:
            return math.inf
    if _DECIMAL.fullmatch(body):
        return float(body)
    return math.nan


def as_record(value: object) -> Mapping[str, Any] | None:
    """`value` as a JSON object (a mapping), or `None` when it is anything else."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def as_list(value: object) -> list[Any] | None:
    """`value` as a JSON array (a list), or `None` when it is anything else."""
    return cast("list[Any]", value) if isinstance(value, list) else None
