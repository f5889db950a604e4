"""The shell family: `exec` and `process`, the processes they start, and the sandbox around them.

Internals of `clawcell.tools`; the public names are re-exported there."""
