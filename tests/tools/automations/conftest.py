"""Fixtures of the `automations` tool tests: the store backends of `tests/store`."""

from __future__ import annotations

from ...store.conftest import new_store, postgres_dsn, postgres_schema

__all__ = ["new_store", "postgres_dsn", "postgres_schema"]
