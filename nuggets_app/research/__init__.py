"""Experiments around the product: the simulated assessor and its report, learning-to-rank
exports, the matcher evaluated against people."""
