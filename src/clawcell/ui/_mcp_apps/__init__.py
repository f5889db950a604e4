"""MCP App views: the app's side (storing views, their call data, their tool calls), the log
of those calls, and the views served on the canvas host.

Internals of `clawcell.ui`."""
