"""The browser family: the `browser` tool, its Chromium sessions and the address guard in
front of them.

Internals of `clawcell.tools`; the public names are re-exported there."""
