"""Tests of `store/_postgres/`: the PostgreSQL store, its listener and its upgrades."""
