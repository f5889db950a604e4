"""Tests of `store/_memory/`: what only the memory store does."""
