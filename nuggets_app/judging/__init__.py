"""What assessors do: judgments, nuggets and aspects, and how far they agree."""
