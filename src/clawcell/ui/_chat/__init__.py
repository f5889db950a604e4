"""The chat's turns: their routes, the registries that own them (one process, or the store every
worker shares), the store rows a live page follows, and what a dead worker's turn ends with.

Internals of `clawcell.ui`."""
