"""The domain error base for the whole product (see :mod:`matcher.errors`).

Every domain error class derives from :class:`DomainError`; views and commands catch it
and nothing wider. It is defined in the matcher, which every package may import.
"""

from matcher.errors import DomainError

__all__ = ["DomainError"]
