"""`CatalogExtension`: the one seam through which another source joins a catalog.

The MCP bridge is its user: its `MCP.<server>.<tool>` handles join `catalog.search` (exact
names, then one BM25 ranking and one limit shared with the native tools) and its
`mcp/*.d.ts` files join `API.list` / `API.read`. Calls and describes of those handles stay with
the source that added them; the catalog only finds and lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import value_class

if TYPE_CHECKING:
    from ._typescript._api_files import ApiFile

__all__ = ["CatalogExtension", "SearchEntry"]


@value_class
class SearchEntry:
    """One callable another source adds to `catalog.search`.

    Attributes:
        callable_name: What a hit returns, and what an exact search may name.
        catalog_id: Its stable id (`mcp:<server>:<tool>`); ranks ties and is searched.
        name: Its original name, which an exact search may name too.
        description: Searched text.
        label: Searched text.
    """

    callable_name: str
    catalog_id: str
    name: str
    description: str = ""
    label: str = ""


@value_class
class CatalogExtension:
    """What `Catalog.with_extension` adds: search entries and virtual API files.

    Attributes:
        entries: Ranked with the native tools; native names win exact lookups.
        files: Listed after `results.d.ts` and before the `tools/*.d.ts` files, read as is
            (reading one is not a describe).
    """

    entries: tuple[SearchEntry, ...] = ()
    files: tuple[ApiFile, ...] = ()
