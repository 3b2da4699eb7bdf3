"""Unit tests never touch a database: pytest-django blocks access here."""
