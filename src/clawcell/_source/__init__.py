"""The model's call and its source, checked before a cell exists."""
