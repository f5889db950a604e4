"""JavaScript-exact JSON text for JSON-shaped Python values.

Every byte count of the Code Mode protocol is measured on the text JavaScript's
`JSON.stringify` would produce: the output budget, the truncation markers' prefixes and
`omittedBytes`, and the compact envelope a model reads. Python's `json` module is close but
not identical, so this module runs the C encoder and repairs only the places where the two
disagree:

* **Numbers.** JS prints integral doubles without `.0` (`1`, `100000000000000000000`),
  switches to exponent form only outside `1e-7 ≤ |x| < 1e21` and writes `1e+21` / `1e-7`
  without zero padding; `-0` prints as `0`; `NaN` and `±Infinity` print as `null`; Python
  integers beyond 2**53 become the nearest double, as they would in JS.
* **Lone surrogates.** A Python `str` may hold surrogate code points. Well-formed
  `JSON.stringify` escapes a lone one as lowercase `\\udxxx`; a high/low pair stored as two
  code points is one character to JavaScript and is emitted raw.

Strings otherwise match already: with `ensure_ascii=False` the C encoder escapes exactly
`"`, `\\`, `\\b \\f \\n \\r \\t` and other control characters as lowercase `\\u00xx`, and keeps
every other character raw, as JavaScript does.

Object keys keep the order they have in the `dict`. JavaScript lists integer-like keys
(`"0"`, `"17"`) first; dicts parsed from guest JSON already carry that order, and host-built
envelopes use no such keys, so the reordering is not replicated.

The common envelope has none of the repairs above, so the repair pass is guarded by cheap
scans (`str.isascii`, one regular-expression search) and costs nothing when not needed.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "dumps",
    "js_number",
    "json_string_bytes",
    "to_well_formed",
    "utf8_len",
    "utf16_len",
]

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=True, check_circular=False
)
_encode_string = json.encoder.encode_basestring

# Where Python's float and int text differs from JavaScript's: integral floats (`3.0`, `-0.0`),
# exponent forms (`1e-05`, `1e+16`), integers that may exceed 2**53, `NaN` and `Infinity`.
# The guard may also hit string content, which only costs the slow path.
_MAYBE_NUMBER_FIX = re.compile(r"[0-9](?:\.0(?![0-9])|e|[0-9]{15})")
# The repairs' own patterns stay text: `re` compiles each on its first use and keeps it in its
# cache, so a process whose values need no repair never compiles them (the two surrogate
# classes, past U+00FF, cost `re` a quarter of a millisecond at import).
_NUMBER = r"-?[0-9][0-9.e+-]*|-?Infinity|NaN"
_STRING_LITERAL = r'("[^"\\]*(?:\\.[^"\\]*)*")'
_SURROGATE = "[\ud800-\udfff]"
_SURROGATE_UNIT = "[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]"
_MAX_SAFE_INT = 2**53


def dumps(value: Any) -> str:
    """Return exactly what JavaScript's `JSON.stringify(value)` returns.

    `value` must be JSON-shaped: `dict` with `str` keys, `list`/`tuple`, `str`, `int`,
    `float`, `bool` or `None`.
    """
    text: str = _ENCODER.encode(value)
    if "NaN" in text or "Infinity" in text or _MAYBE_NUMBER_FIX.search(text) is not None:
        text = _fix_numbers(text)
    if not text.isascii() and re.search(_SURROGATE, text) is not None:
        text = re.sub(_SURROGATE_UNIT, _fix_surrogates, text)
    return text


def js_number(value: float | int) -> str:
    """Format a number the way JavaScript's `Number.prototype.toString` does."""
    if isinstance(value, int):
        if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, point = _shortest_digits(abs(value))
    return sign + _place_point(digits, point)


def _shortest_digits(value: float) -> tuple[str, int]:
    """Split a positive float into shortest round-trip digits and a decimal-point position.

    The value equals `0.<digits> × 10**point`. Python's `repr` and JavaScript both produce
    the shortest digit string that round-trips, so the digits are shared.
    """
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0"), point


def _place_point(digits: str, point: int) -> str:
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    mantissa = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def _fix_numbers(text: str) -> str:
    """Rewrite the numbers outside string literals the way JavaScript prints them.

    Splitting on string literals leaves the structural text, which never holds a `"`; the
    structural pieces are joined with `"` so one substitution covers them all.
    """
    parts = re.split(_STRING_LITERAL, text)
    outside = '"'.join(parts[0::2])
    fixed = re.sub(_NUMBER, _fix_number, outside)
    if fixed == outside:
        return text
    parts[0::2] = fixed.split('"')
    return "".join(parts)


def _fix_number(match: re.Match[str]) -> str:
    token = match.group()
    if token[-1] in "yN":  # Infinity, -Infinity, NaN
        return "null"
    if "." in token or "e" in token:
        return js_number(float(token))
    return token if len(token) < 16 else js_number(int(token))


def _fix_surrogates(match: re.Match[str]) -> str:
    unit = match.group()
    if len(unit) == 2:
        high, low = ord(unit[0]), ord(unit[1])
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return f"\\u{ord(unit):04x}"


def utf8_len(text: str) -> int:
    """UTF-8 byte length as `Buffer.byteLength(text, "utf8")` measures it.

    A lone surrogate costs 3 bytes (it is encoded as U+FFFD); a surrogate pair stored as two
    Python code points costs 4, like the one character JavaScript sees.
    """
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        pairs = len(text) - len(_join_pairs(text))
        return len(text.encode("utf-8", "surrogatepass")) - 2 * pairs


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: JavaScript's `text.length`."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def json_string_bytes(text: str) -> int:
    """UTF-8 bytes of `JSON.stringify(text)` for a string, quotes included."""
    if text.isascii():
        return len(_encode_string(text))
    return utf8_len(dumps(text))


def _join_pairs(text: str) -> str:
    """Combine surrogate pairs held as two code points into one character."""
    return re.sub(
        _SURROGATE_UNIT, lambda m: _fix_surrogates(m) if len(m.group()) == 2 else m.group(), text
    )


def to_well_formed(text: str) -> str:
    """Join surrogate pairs and replace lone surrogates with U+FFFD (`toWellFormed`)."""
    if text.isascii() or re.search(_SURROGATE, text) is None:
        return text
    return re.sub(
        _SURROGATE_UNIT, lambda m: _fix_surrogates(m) if len(m.group()) == 2 else "\ufffd", text
    )
