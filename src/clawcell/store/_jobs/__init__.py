"""The job stores (`JobStore`: scheduled jobs and their run history, a store role of its own) on
memory, SQLite and PostgreSQL, the SQL the two databases share, and `job_store_for`.

Internals of `clawcell.store`; the public names are re-exported there."""
