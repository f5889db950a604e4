"""Tests of `store/_jobs/`: the `JobStore` contract on every backend."""
