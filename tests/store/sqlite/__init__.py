"""Tests of `store/_sqlite/`: the SQLite connection, its WAL mode and its retries."""
