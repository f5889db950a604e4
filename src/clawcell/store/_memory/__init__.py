"""The memory family: `MemoryStore` (one process's dicts; the default, and the test double of the
durable backends) and its session directory.

Internals of `clawcell.store`; the public names are re-exported there."""
