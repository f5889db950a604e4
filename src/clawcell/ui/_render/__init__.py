"""Transcript messages drawn: `MessageView`s built through `clawcell.reply`'s render items,
Markdown to sanitized HTML (and our two markdown-it rules), blocked `MEDIA:` directives, and
the canvas previews drawn as widgets, MCP App views or embeds.

Internals of `clawcell.ui`."""
