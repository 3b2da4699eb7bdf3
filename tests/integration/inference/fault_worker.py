"""The real Celery app with faults a test can trigger through document text.

A worker started with ``-A tests.integration.inference.fault_worker`` runs the production
tasks unchanged, except that scoring a document whose text contains

- ``SLOWME`` sleeps 50 ms first (so a job lasts long enough to be interrupted);
- ``FAILME`` raises a database ``OperationalError`` (a transient failure);
- ``KILLME`` SIGKILLs the pool process running it (a chunk that kills its worker).
"""

import os
import signal
import time

from celery.signals import worker_init

from nuggets_app.celery import app

__all__ = ["app"]


@worker_init.connect
def _install_faults(**_: object) -> None:
    from django.db import OperationalError

    from nuggets_app.inference.services.matching import chunks

    real = chunks._score_document

    def faulty(topic_matcher, text):
        if "SLOWME" in text:
            time.sleep(0.05)
        if "FAILME" in text:
            raise OperationalError("injected: the database went away")
        if "KILLME" in text:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(topic_matcher, text)

    chunks._score_document = faulty
