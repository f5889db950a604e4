"""Runs last in `tests/hostile/` (file order): the corpus so far kept the host under 1 GiB."""

from __future__ import annotations

from tests.hostile.conftest import peak_rss_mib


def test_the_corpus_ran_in_under_one_gib_of_host_memory() -> None:
    assert peak_rss_mib() < 1024
