"""Tests of `clawcell.ui._mcp_apps`: views, their tool calls and the activity log."""
