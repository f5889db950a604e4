"""The public surface of `clawcell.catalog` is deliberate."""

from __future__ import annotations

from clawcell import catalog


def test_all_is_sorted_and_exported() -> None:
    assert catalog.__all__ == sorted(catalog.__all__)
    assert all(hasattr(catalog, name) for name in catalog.__all__)
