"""Automatic judges: their labels imported, and audited against the people's sample."""
