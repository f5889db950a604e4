"""Tests of `clawcell.ui._stream`: events as page operations, the draft, coalescing."""
