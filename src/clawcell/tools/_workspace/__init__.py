"""The workspace family: the file tools (`read`, `write`, `edit`, `apply_patch`, `list`,
`grep`, `find`) confined beneath one root.

Internals of `clawcell.tools`; the public names are re-exported there."""
