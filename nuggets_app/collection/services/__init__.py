"""Writes of the collection domain: imports, uploads, nugget banks, topics, suite runs."""
