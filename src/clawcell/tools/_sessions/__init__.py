"""The session family: the `sessions_*` tools over an agent's sessions.

Internals of `clawcell.tools`; the public names are re-exported there."""
