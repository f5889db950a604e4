"""Fixtures of the agent tests: the durable store backends of `tests/store`."""

from __future__ import annotations

from ..store.conftest import new_durable_store, postgres_dsn, postgres_schema

__all__ = ["new_durable_store", "postgres_dsn", "postgres_schema"]
