"""Writes of operations: health, task records, kept computations."""
