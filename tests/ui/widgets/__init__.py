"""Tests of `clawcell.ui._widgets`: the `show_widget` tool, its page and report mode."""
