"""ASGI entry point; like the WSGI one, it refuses to start without a SECRET_KEY."""

import os

from django.core.asgi import get_asgi_application

from nuggets_app.serving import secret_key_require

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
secret_key_require()
application = get_asgi_application()
