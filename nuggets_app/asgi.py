"""ASGI entry point; like the WSGI one, it refuses to start without a SECRET_KEY or,
with DEBUG off, without the collected static files, and leaves the sentence model to
a child process."""

import os

from django.core.asgi import get_asgi_application

from nuggets_app.learning.embeddings import encoder_install
from nuggets_app.lib.serving import serving_require
from nuggets_app.operations.encoder_process import EncoderProcess

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
serving_require()
application = get_asgi_application()
encoder_install(EncoderProcess())
