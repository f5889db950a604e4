"""Tests of `clawcell.ui._demo` (its page in a browser: `tests/ui/browser/test_demo.py`)."""
