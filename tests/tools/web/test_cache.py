"""`FetchCache`: TTL freshness, LRU eviction by count and by total bytes."""

from __future__ import annotations

import pytest

from clawcell import ConfigurationError
from clawcell.tools import FetchCache
from clawcell.tools._web._cache import CachedPage

from .._fakes import Clock


def _page(size: int) -> CachedPage:
    return CachedPage(
        final_url="https://example.org/",
        status=200,
        content_type="text/plain",
        body=b"x" * size,
        body_truncated=False,
        fetched_at="2026-12-01T09:00:00Z",
    )


def test_an_entry_is_fresh_until_its_ttl_passes() -> None:
    clock = Clock()
    cache = FetchCache(ttl_seconds=10, clock=clock)
    cache.put("a", _page(1))
    fresh = cache.get("a")
    assert fresh is not None and fresh[1] is True
    clock.now += 10
    stale = cache.get("a")
    assert stale is not None and stale[1] is False


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = FetchCache(max_entries=2)
    cache.put("a", _page(1))
    cache.put("b", _page(1))
    cache.get("a")
    cache.put("c", _page(1))
    assert (cache.get("a") is not None, cache.get("b"), cache.get("c") is not None) == (
        True,
        None,
        True,
    )


def test_total_bytes_are_bounded_but_the_newest_page_stays() -> None:
    cache = FetchCache(max_total_bytes=100)
    cache.put("a", _page(60))
    cache.put("b", _page(60))
    assert cache.get("a") is None
    assert cache.get("b") is not None
    cache.put("huge", _page(500))
    assert cache.get("huge") is not None
    assert cache.get("b") is None


def test_clear_forgets_everything() -> None:
    cache = FetchCache()
    cache.put("a", _page(1))
    cache.clear()
    assert cache.get("a") is None


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        FetchCache(ttl_seconds=-1)
    with pytest.raises(ConfigurationError):
        FetchCache(max_entries=0)
