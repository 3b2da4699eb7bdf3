#!/usr/bin/env python
"""Django's command-line utility: every workflow step is a management command."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from nuggets_app.lib.serving import SERVER_COMMANDS, serving_require

    if sys.argv[1:2] and sys.argv[1] in SERVER_COMMANDS:
        # The web server needs a SECRET_KEY (and, with DEBUG off, the collected static
        # files); the other commands start without them.
        try:
            serving_require()
        except ImproperlyConfigured as exc:
            sys.exit(f"ImproperlyConfigured: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
