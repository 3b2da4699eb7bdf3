"""Writes of judging: judgments, nuggets, aspects."""
