"""The PostgreSQL family: `PostgresStore` (a pool, the schema and its upgrades, `LISTEN`/`NOTIFY`
wake-ups), its session directory and its full-text transcript search.

Internals of `clawcell.store`; the public names are re-exported there."""
