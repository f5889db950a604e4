"""The SQLite family: `SQLiteStore` (one file shared by every process on a host, WAL mode, the
schema and its upgrades), its entries, parked runs, transcripts, session directory and FTS5
transcript search.

Internals of `clawcell.store`; the public names are re-exported there."""
