"""Workflows of evaluation: dashboards, diagnostics, uncertainty, verification."""
