"""What the web server's entry points check before they serve: a SECRET_KEY, and with
DEBUG off the collected static files.

Sessions, password-reset links and signed cookies depend on the key, so
``wsgi.py`` (gunicorn), ``asgi.py`` and ``manage.py runserver`` refuse to start without
one when DEBUG is off (with DEBUG on the settings generate one into DATA_DIR). The
other commands start without a key: ``statap`` and ``evaluate --qrels`` read files and
print numbers, like trec_eval, on a laptop with nothing set.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# The management commands that serve web requests.
SERVER_COMMANDS = frozenset({"runserver", "testserver"})
MISSING = (
    "SECRET_KEY is not set: the web server does not start without it (DEBUG is "
    "off). Set it in the environment to 50+ random characters "
    '(python -c "import secrets; print(secrets.token_urlsafe(50))"), or set DEBUG=1 '
    "for development, which generates one into DATA_DIR. Commands that only read "
    "files (statap, evaluate --qrels) need neither."
)


def secret_key_require() -> None:
    """Raise ``ImproperlyConfigured`` unless the settings have a SECRET_KEY."""
    from django.conf import settings

    settings.INSTALLED_APPS  # noqa: B018 (load the settings: their errors are theirs)
    try:
        key = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django's own refusal of an empty key
        key = ""
    if not key:
        raise ImproperlyConfigured(MISSING)


STATIC_MISSING = (
    "the static files are not collected: with DEBUG off every page, the error pages "
    "too, needs the manifest {path}. Run `.venv/bin/python manage.py collectstatic "
    "--noinput` once (and after every upgrade), then start again; or set DEBUG=1 for "
    "development."
)


def static_files_require() -> None:
    """Raise ``ImproperlyConfigured`` when the static files storage needs a manifest
    (whitenoise's, with DEBUG off) that ``collectstatic`` has not written: otherwise
    every page, the error page too, would fail while the health check said ok."""
    from django.conf import settings
    from django.contrib.staticfiles.storage import ManifestFilesMixin
    from django.utils.module_loading import import_string

    backend = import_string(settings.STORAGES["staticfiles"]["BACKEND"])
    if not issubclass(backend, ManifestFilesMixin):
        return
    manifest = Path(settings.STATIC_ROOT) / backend.manifest_name
    if not manifest.is_file():
        raise ImproperlyConfigured(STATIC_MISSING.format(path=manifest))


def serving_require() -> None:
    """Everything the web server needs before its first request (raises
    ``ImproperlyConfigured`` with what to do)."""
    secret_key_require()
    static_files_require()
