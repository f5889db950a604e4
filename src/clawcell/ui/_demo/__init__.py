"""`clawcell serve --demo`: the scripted agent whose turns exercise every render path, its MCP
server with an MCP App view, and the media files it shows.

Internals of `clawcell.ui`; `clawcell.cli` starts it."""
