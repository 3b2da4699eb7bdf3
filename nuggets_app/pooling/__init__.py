"""Pools of the runs' documents, samples drawn from them, and assignments to assessors."""
