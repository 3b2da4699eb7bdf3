"""Evaluating runs with human, inferred and merged qrels: the reads of qrels and runs,
dashboards, diagnostics, uncertainty and verification of inferred labels."""
