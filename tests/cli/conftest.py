"""CLI fixtures: the store tests' PostgreSQL (a DSN from `scripts/pg-test-env`)."""

from __future__ import annotations

from tests.store.conftest import postgres_dsn, postgres_schema

__all__ = ["postgres_dsn", "postgres_schema"]
