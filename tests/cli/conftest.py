"""CLI fixtures: the store tests' PostgreSQL (a DSN from `scripts/pg-test-env`, and a fresh
schema per test)."""

from __future__ import annotations

from tests.store.conftest import postgres_dsn, postgres_schema

__all__ = ["postgres_dsn", "postgres_schema"]
