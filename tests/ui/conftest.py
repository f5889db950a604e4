"""Fixtures of the UI tests: the throwaway PostgreSQL of `tests/store` (the worker processes)."""

from __future__ import annotations

from ..store.conftest import postgres_dsn, postgres_schema

__all__ = ["postgres_dsn", "postgres_schema"]
