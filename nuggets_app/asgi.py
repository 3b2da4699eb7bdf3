"""ASGI entry point; like the WSGI one, it refuses to start without a SECRET_KEY or,
with DEBUG off, without the collected static files, and leaves the sentence model to
a child process."""

import os

from django.core.asgi import get_asgi_application

from nuggets_app.learning.embeddings import encoder_install
from nuggets_app.learning.encoder_process import EncoderProcess
from nuggets_app.serving import serving_require

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
serving_require()
application = get_asgi_application()
encoder_install(EncoderProcess())
