"""The playground: its routes (page, `exec`/`wait`, approval decisions), a cell's live output
as page operations, and each session's run history in the store.

Internals of `clawcell.ui`."""
