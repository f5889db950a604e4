"""Tests of `clawcell.ui._chat`: turns, their registries and live rows."""
