"""Writes of pooling: pools, samples, assignments."""
