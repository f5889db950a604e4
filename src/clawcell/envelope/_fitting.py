"""Fitting text into bytes: UTF-8 cuts, the JSON-prefix fitter, truncation markers, bounded errors.

These are the primitives of the output budget (spec `code-mode.md` §6.1, §6.4): every channel
of an envelope that does not fit becomes a truncation marker whose `prefix` is the longest
prefix of the channel's JSON text that lets the marker fit its allowance, and an error that
does not fit keeps its leading cause and ends in ` [error truncated]`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._jsjson import dumps, json_string_bytes, to_well_formed, utf8_len
from .._lazy import value_class

__all__ = [
    "ERROR_TRUNCATED_SUFFIX",
    "TRUNCATION_GUIDANCE",
    "JsonSource",
    "bound_error",
    "fit_error",
    "fit_json_prefix",
    "marker_fixed_bytes",
    "truncate_utf8",
    "truncation_marker",
]

TRUNCATION_GUIDANCE = "Output truncated; rerun with narrower args."
ERROR_TRUNCATED_SUFFIX = " [error truncated]"

# JSON escapes: these bytes cost 2 (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`), every other
# control byte costs 6 (`\u00xx`).
_SHORT_ESCAPES = b'"\\\b\t\n\f\r'
_LONG_ESCAPES = bytes(b for b in range(0x20) if b not in _SHORT_ESCAPES)


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Longest prefix of `text` of at most `max_bytes` UTF-8 bytes, cut on a character."""
    head = to_well_formed(text[: max(max_bytes, 0)]).encode("utf-8")[:max_bytes]
    return head.decode("utf-8", "ignore")


def _json_cost(chunk: bytes) -> int:
    """JSON-string bytes of a UTF-8 chunk, without the quotes."""
    short = len(chunk) - len(chunk.translate(None, _SHORT_ESCAPES))
    long = len(chunk) - len(chunk.translate(None, _LONG_ESCAPES))
    return len(chunk) + short + 5 * long


def fit_json_prefix(text: str, limit: int, overhead: Callable[[int], int]) -> str:
    """Longest prefix of `text` whose JSON string, plus `overhead(prefix_bytes)`, fits `limit`.

    The whole text is kept as is (lone surrogates included) when it fits. Otherwise the
    prefix is cut on a UTF-8 character boundary of the text with lone surrogates replaced by
    U+FFFD, and is always shorter than the whole text. `overhead` must not grow with the
    prefix (marker digits shrink as `omittedBytes` does), so the fit is monotone and found by
    bisection over byte offsets.
    """
    if limit <= 0:
        return ""
    total = utf8_len(text)
    if total <= limit and json_string_bytes(text) + overhead(total) <= limit:
        return text
    head = to_well_formed(text[: limit + 1]).encode("utf-8")
    # Bisect offsets; each offset stands for the character boundary at or before it. The
    # JSON cost of the kept prefix is carried along, so each probe only scans new bytes.
    low, high = 0, min(limit, total - 1, len(head))
    kept, kept_cost = 0, 2
    while low < high:
        middle = (low + high + 1) // 2
        end = _char_start(head, middle)
        cost = kept_cost + _json_cost(head[kept:end])
        if cost + overhead(end) <= limit:
            low, kept, kept_cost = middle, end, cost
        else:
            high = middle - 1
    return head[:kept].decode("utf-8")


def _char_start(encoded: bytes, offset: int) -> int:
    """Largest character boundary of `encoded` at or before `offset`."""
    while 0 < offset < len(encoded) and 0x80 <= encoded[offset] < 0xC0:
        offset -= 1
    return offset


def fit_error(error: str, limit: int) -> str:
    """Cut `error` so its JSON fits `limit` bytes, ending in ` [error truncated]`."""
    suffix = len(ERROR_TRUNCATED_SUFFIX)
    return fit_json_prefix(error, limit, lambda _: suffix) + ERROR_TRUNCATED_SUFFIX


def bound_error(error: str, limit: int) -> str:
    """`error` unchanged when its JSON fits `limit` bytes, else `fit_error(error, limit)`."""
    return error if json_string_bytes(error) <= limit else fit_error(error, limit)


@value_class
class JsonSource:
    """A channel's compact JSON text: whole, or a retained prefix of a longer original.

    Attributes:
        text: The JSON text, or its first bytes when `complete` is false.
        original_bytes: UTF-8 bytes of the whole original JSON text.
        complete: Whether `text` is the whole original.
    """

    text: str
    original_bytes: int
    complete: bool

    @classmethod
    def capture(cls, text: str, max_bytes: int | None = None) -> JsonSource:
        """Keep `text` whole, or only its first `max_bytes` bytes when it is longer."""
        size = utf8_len(text)
        if max_bytes is None or size <= max_bytes:
            return cls(text=text, original_bytes=size, complete=True)
        return cls(text=truncate_utf8(text, max_bytes), original_bytes=size, complete=False)


@functools.lru_cache(maxsize=32)
def marker_fixed_bytes(guidance: str) -> int:
    """Marker bytes apart from the digits of `omittedBytes` and the prefix JSON string."""
    empty = {"truncated": True, "omittedBytes": 0, "guidance": guidance, "prefix": ""}
    return utf8_len(dumps(empty)) - 1 - 2


def truncation_marker(
    source: JsonSource, limit: int, guidance: str = TRUNCATION_GUIDANCE
) -> tuple[dict[str, Any], int]:
    """The truncation marker of §6.1 fitted to `limit` bytes, and its JSON byte size."""
    fixed = marker_fixed_bytes(guidance)
    original = source.original_bytes
    prefix = fit_json_prefix(source.text, limit, lambda kept: fixed + len(str(original - kept)))
    omitted = original - utf8_len(prefix)
    marker = {"truncated": True, "omittedBytes": omitted, "guidance": guidance, "prefix": prefix}
    return marker, fixed + len(str(omitted)) + json_string_bytes(prefix)
