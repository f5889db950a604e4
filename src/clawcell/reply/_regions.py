"""The code regions of a text (blocks and inline spans together) and fast membership tests.

Every scanner of the protocol asks one question of a position: is it inside code? `regions_of`
merges the block and span scanners of `_fences` into one sorted list, `CodeIndex` answers the
question by bisection, and `find_code_regions` is the protocol function with UTF-16 offsets.
"""

from __future__ import annotations

from bisect import bisect_right

from ._fences import CodeRegion, find_code_blocks, find_code_spans
from ._text import Utf16Offsets, require_str

__all__ = ["CodeIndex", "find_code_regions", "regions_of"]


def regions_of(text: str) -> list[CodeRegion]:
    """Every code region of `text`, sorted by start (Python string indexes)."""
    if "`" not in text and "~~~" not in text and "    " not in text and "\t" not in text:
        return []  # the early exits of both scanners, without two calls
    blocks = find_code_blocks(text)
    spans = find_code_spans(text, blocks)
    if not spans:
        return blocks
    return sorted([*blocks, *spans], key=lambda region: region.start)


class CodeIndex:
    """Sorted, disjoint code regions (as `regions_of` returns them) with fast membership."""

    def __init__(self, regions: list[CodeRegion]) -> None:
        self.regions = regions
        self._starts = [region.start for region in regions]

    def covers(self, position: int) -> bool:
        """Whether a string index falls inside one of the regions."""
        index = bisect_right(self._starts, position)
        return index > 0 and position < self.regions[index - 1].end


def find_code_regions(text: str) -> list[dict[str, object]]:
    """Code regions of `text` as `[{start, end, block}]` with UTF-16 offsets.

    Raises:
        TypeError: `text` is not a string.
    """
    source = require_str(text, "text")
    regions = regions_of(source)
    offsets = None if source.isascii() else Utf16Offsets(source)
    return [region.to_dict(offsets) for region in regions]
