"""Settings, read from the environment (12-factor).

``DATABASE_URL`` absent -> an embedded SQLite file in ``DATA_DIR``.
``REDIS_URL`` absent -> Celery runs tasks eagerly, in-process.
Every variable is listed in docs/reference/settings.md and .env.example.
"""

import secrets
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONCE, NONE, SELF

from nuggets_app.lib.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    """The SECRET_KEY variable; in development (DEBUG on) without it, a random key
    generated once and kept in DATA_DIR. With DEBUG off and no key it is empty: the
    commands that sign nothing (statap, evaluate, imports, exports) run, and the web
    server refuses to start (``nuggets_app.lib.serving``): a key generated on one machine
    would differ between web servers, and vanish with a lost DATA_DIR, logging
    everybody out. Anything that signs data without a key fails with Django's
    ``ImproperlyConfigured``.

    Never a key written in the source: a shared default lets anyone forge sessions.
    """
    key = env_str("SECRET_KEY")
    if key or not DEBUG:
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(64))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "assessor_ui.views.errors.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "axes",
    "csp",
    "nuggets_app.apps.NuggetsAppConfig",
    "assessor_ui",
]
# The lab's commands (simulate, evaluate_matcher, export_ltr) are experiments, not part
# of a deployment: LAB=1 installs them (the results scripts and the test suite set it).
if env_bool("LAB", False):
    INSTALLED_APPS.append("lab.apps.LabConfig")
# The bench_* commands are not part of a deployment: `make bench` (and the test suite)
# set BENCHMARKS=1 to install them.
if env_bool("BENCHMARKS", False):
    INSTALLED_APPS.append("nuggets_app.benchmarks.apps.BenchmarksConfig")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: it inspects the response of the login view.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "nuggets_app.urls"
WSGI_APPLICATION = "nuggets_app.wsgi.application"
# Forms render with the pages' template: form errors once, field errors at their field.
FORM_RENDERER = "assessor_ui.renderers.FormRenderer"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
_database_url = env_str("DATABASE_URL")
if _database_url:
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url,
            conn_max_age=env_int("CONN_MAX_AGE", 60),
            conn_health_checks=True,
        )
    }
    if "postgresql" in DATABASES["default"]["ENGINE"]:
        # A database that does not answer is an error within seconds (503 from
        # /healthz and the judging saves, which the page retries), never a hang.
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DATA_DIR / "db.sqlite3"),
            "OPTIONS": {"timeout": 30},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    # First, as django-axes requires: it refuses locked-out logins before the others run.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_ENABLED = env_bool("AXES_ENABLED", True)
# The lockout page in the site's layout: title, how long, and a way back.
AXES_LOCKOUT_CALLABLE = "assessor_ui.views.errors.lockout"

# --- Internationalisation, static files -------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
# whitenoise warns on every request when the folder is missing (before collectstatic).
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)

# --- Security -------------------------------------------------------------------------
# HTTPS hardening is on unless DEBUG; HSTS is opt-in because it is hard to undo.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 60 * 60 * 12)
X_FRAME_OPTIONS = "DENY"

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

# --- Celery ---------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
# A killed worker's task comes back: ack after the task, requeue on worker loss.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Fetch a message only when a pool process is free (Redis): a worker then holds no
# message for a chunk it has not started, so when it is SIGKILLed every chunk it held is
# `running` with a free lock, which the supervisor re-queues within seconds. A message
# prefetched by a dead worker would wait for the visibility timeout (or the stale rule).
CELERY_WORKER_DISABLE_PREFETCH = True
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 3300)
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 7200)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "nuggets")
# Beat's own state file, kept with the other files of the deployment, not in the
# directory the worker was started from.
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Celery beat re-queues chunks of workers that died without a trace (SIGKILL of the main
# process leaves the message unacknowledged until the visibility timeout).
CELERY_BEAT_SCHEDULE = {
    "match-supervise": {
        "task": "nuggets_app.tasks.match_supervise",
        "schedule": env_int("MATCH_SUPERVISE_SECONDS", 15),
    },
    "uploads-expire": {"task": "nuggets_app.tasks.uploads_expire", "schedule": 3600},
}

CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# With Redis, sessions are read from the cache and written through to the database:
# one query less on every request of the judging page and its autosaves. A failing
# cache (Redis down or restarting) costs a database read, never the request.
if REDIS_URL:
    SESSION_ENGINE = "nuggets_app.lib.sessions"

# --- Application ----------------------------------------------------------------------
# Dashboard results are kept in the cache, keyed by their input versions (changed inputs
# mean new keys); entries unused this long are dropped. A computation whose progress has
# not moved for COMPUTED_STALE_SECONDS is taken for dead and restarted.
COMPUTED_KEEP_SECONDS = 7 * 24 * 3600
COMPUTED_STALE_SECONDS = 600
# Matching: documents per chunk; how long a running chunk whose worker is gone (its
# advisory lock is free) may go without a heartbeat before the supervisor re-queues it;
# the same for any chunk, lock or not (a hung worker, a lost message); how many
# attempts before a chunk fails the job.
MATCH_CHUNK_SIZE = env_int("MATCH_CHUNK_SIZE", 500)
# Documents per chunk of an embedding job (the semantic extra).
EMBED_CHUNK_SIZE = env_int("EMBED_CHUNK_SIZE", 200)
MATCH_ORPHAN_SECONDS = env_int("MATCH_ORPHAN_SECONDS", 10)
MATCH_CHUNK_STALE_SECONDS = env_int("MATCH_CHUNK_STALE_SECONDS", 300)
MATCH_MAX_ATTEMPTS = env_int("MATCH_MAX_ATTEMPTS", 3)
IMPORT_BATCH_SIZE = env_int("IMPORT_BATCH_SIZE", 2000)
# Browser uploads (stored in DATA_DIR/uploads): largest upload, largest uncompressed size
# of a zip of documents, most files in such a zip, most problems the check lists.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 2 * 1024**3)
UPLOAD_MAX_UNCOMPRESSED_BYTES = env_int("UPLOAD_MAX_UNCOMPRESSED_BYTES", 8 * 1024**3)
UPLOAD_MAX_ZIP_FILES = env_int("UPLOAD_MAX_ZIP_FILES", 1_000_000)
UPLOAD_MAX_PROBLEMS = env_int("UPLOAD_MAX_PROBLEMS", 200)
# A checked upload not confirmed within this many hours expires (its files are removed).
UPLOAD_CONFIRM_HOURS = env_int("UPLOAD_CONFIRM_HOURS", 24)
IDLE_SECONDS = env_int("IDLE_SECONDS", 60)
# Judging page: assessors see the nuggets other assessors found for the same topic; the
# live preview counts a judged document as matched from this matcher score on.
NUGGETS_SHARED = env_bool("NUGGETS_SHARED", True)
NUGGET_PREVIEW_THRESHOLD = 0.5

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Axes logs a banner at INFO in every process, which pollutes command output.
        "axes": {"level": "WARNING"},
    },
}
if not REDIS_URL:
    # Embedded mode: tasks run inside the command, so Celery's INFO lines (task
    # received, succeeded) and kombu's warning that the in-memory broker has no host
    # name would be printed in the middle of the command's own output.
    LOGGING["loggers"]["celery"] = {"level": "WARNING"}
    LOGGING["loggers"]["kombu.connection"] = {"level": "ERROR"}
