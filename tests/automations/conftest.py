"""Fixtures of the automation tests: the store backends of `tests/store` and job helpers."""

from __future__ import annotations

from ..store.conftest import new_store, postgres_dsn, postgres_schema

__all__ = ["new_store", "postgres_dsn", "postgres_schema"]
