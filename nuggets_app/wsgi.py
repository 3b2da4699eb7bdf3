"""WSGI entry point (gunicorn nuggets_app.wsgi).

Every worker prepares, when it starts, what its first request would otherwise pay for:
the URL configuration (importing every view and what they import: the matcher, numpy,
the plotting code), the URL reverse table, the matcher's stem table and the compiled
templates. That first request took 2-3 seconds, and a worker's first request comes at
any time (a new keep-alive connection, a worker recycled by ``--max-requests``).

Then it moves everything loaded so far out of the garbage collector's sight
(``gc.freeze``): those ~190,000 objects live as long as the worker, and every full
collection walked them all, a 100-130 ms stall of whatever requests the worker was
serving at the time, which made the judging page's p95.

Nor does a worker run the sentence model itself: the embeddings its background thread
computes without a broker run in a child process at a low CPU priority
(``encoder_install``), away from the request threads and their GIL.
"""

import gc
import os
from pathlib import Path

from django.core.wsgi import get_wsgi_application

from nuggets_app.learning.embeddings import encoder_install
from nuggets_app.lib.serving import serving_require
from nuggets_app.operations.encoder_process import EncoderProcess

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
serving_require()
application = get_wsgi_application()
encoder_install(EncoderProcess())


def _warm_up() -> None:
    from django.template.loader import get_template
    from django.urls import reverse

    from matcher import normalize

    reverse("login")
    normalize("warm up the stems")
    templates = Path(__file__).resolve().parent.parent / "assessor_ui" / "templates"
    for path in sorted(templates.rglob("*.html")):
        get_template(path.relative_to(templates).as_posix())


_warm_up()
gc.collect()
gc.freeze()
