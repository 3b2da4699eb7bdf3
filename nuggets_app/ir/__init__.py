"""Django-free maths: sampling, estimators, measures (no database, no settings)."""
