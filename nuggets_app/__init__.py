"""Nugget-based relevance assessment: the Django project and its core domain.

The Celery app is loaded by ``NuggetsAppConfig.ready`` rather than here, so that the
Django-free modules under ``nuggets_app.ir`` can be imported without Celery or Django.
"""

import os

# One BLAS thread per process unless the environment says otherwise (read when numpy
# loads, so here, before anything imports it): the project's processes are parallel
# already (request threads, one worker per core), and OpenBLAS's idle threads spin
# after every call. Embedding one nugget on a web process cost 105 ms of CPU with two
# BLAS threads against 11 ms with one, and slowed every request beside it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
