"""Tests of `clawcell.ui._sessions`: session ids in URLs and the session drawer's API."""
