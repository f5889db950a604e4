"""Sessions in the Control UI: their ids in URLs (one path segment each, any id the agent
accepts) and the session drawer's API (list, rename, pin, archive, delete, search).

Internals of `clawcell.ui`."""
