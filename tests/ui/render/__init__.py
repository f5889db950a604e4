"""Tests of `clawcell.ui._render`: messages to views, Markdown, blocked media, surfaces."""
