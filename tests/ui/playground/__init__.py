"""Tests of `clawcell.ui._playground`: runs, their history and their approvals."""
