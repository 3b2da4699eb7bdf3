"""``python -m matcher``: see :mod:`matcher.cli`."""

import sys

from .cli import main

sys.exit(main())
