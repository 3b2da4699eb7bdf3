"""``manage.py embed``: embed a collection's documents for the semantic evidence."""

from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.inference.services import embeddings
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS
from nuggets_app.models import Collection, EmbeddingJob


class Command(BaseCommand):
    help = (
        "Embed every document of a collection not embedded yet (in chunks on the "
        "workers; in this process without REDIS_URL), or resume a job."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", help="collection to embed")
        parser.add_argument("--resume", type=int, help="resume this embedding job")
        parser.add_argument("--status", type=int, help="print this job's progress")
        parser.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS)
        parser.add_argument("--wait", action="store_true", help="wait until done")

    def handle(self, *args, **options) -> None:
        self.stderr.write(embeddings.semantic_status())
        try:
            if options["status"]:
                job = self._job(options["status"])
            elif options["resume"]:
                job = embeddings.embedding_job_resume(job=self._job(options["resume"]))
            elif options["collection"]:
                collection = Collection.objects.filter(
                    name=options["collection"]
                ).first()
                if collection is None:
                    raise CommandError(f"no collection named {options['collection']}")
                job = embeddings.embedding_job_launch(
                    collection=collection, max_words=options["max_words"]
                )
            else:
                raise CommandError("give --collection, --resume JOB or --status JOB")
        except embeddings.SemanticOff as error:
            raise CommandError(str(error)) from error
        while options["wait"] and job.status == EmbeddingJob.Status.RUNNING:
            time.sleep(1)
            job.refresh_from_db()
        self.stdout.write(json.dumps(_summary(job), indent=1))

    def _job(self, pk: int) -> EmbeddingJob:
        job = EmbeddingJob.objects.filter(pk=pk).first()
        if job is None:
            raise CommandError(f"no embedding job {pk}")
        return job


def _summary(job: EmbeddingJob) -> dict[str, object]:
    return {
        "job": job.pk,
        "collection": job.collection.name,
        "model": job.model,
        "status": job.status,
        "documents": f"{job.docs_done}/{job.docs_total}",
        "units": job.units_done,
        "seconds": round(job.seconds, 1),
    }
