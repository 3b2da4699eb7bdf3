"""``manage.py match``: launch, watch, cancel, resume, re-score matching jobs and fit
their relevance model."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from nuggets_app.collection.services.topics import UnknownTopics, topics_find
from nuggets_app.inference.services.job_model import job_model_fit
from nuggets_app.inference.services.matching import (
    MatchJobError,
    MatchParams,
    match_job_cancel,
    match_job_launch,
    match_job_progress,
    match_job_rescore,
    match_job_resume,
    match_supervise,
)
from nuggets_app.inference.services.readiness import launch_warnings
from nuggets_app.inference.services.unpooled import (
    UnpooledError,
    new_documents_progress,
    new_documents_score,
)
from nuggets_app.learning.relevance_features import RelevanceModelError
from nuggets_app.management.commands._base import only_one
from nuggets_app.models import Collection, MatchJob, NuggetBank, Pool, Sample

# The bar's rate is the job's own (documents done over the job's elapsed time, as the
# summary and the job page say), not tqdm's rate of this process's bar updates.
BAR_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"
)


@contextmanager
def quiet_celery(verbosity: int) -> Iterator[None]:
    """Celery's INFO line per task (tasks run in this process without a broker) stays
    out of the progress bar below ``-v 2``; other log lines print above the bar."""
    loggers = [logging.getLogger(n) for n in ("celery", "celery.app.trace")]
    levels = [lg.level for lg in loggers]
    if verbosity < 2:
        for lg in loggers:
            lg.setLevel(logging.WARNING)
    try:
        with logging_redirect_tqdm():
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


class Command(BaseCommand):
    help = (
        "Score a pool, a sample or a whole collection against the topics' nuggets on "
        "the Celery workers; or --resume/--cancel/--rescore/--fit/--supervise jobs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--resume", type=int, metavar="JOB", help="re-run what is not done"
        )
        action.add_argument("--cancel", type=int, metavar="JOB", help="stop a job")
        action.add_argument(
            "--rescore", type=int, metavar="JOB", help="new --lam for a job"
        )
        action.add_argument(
            "--fit",
            type=int,
            metavar="JOB",
            help="fit the job's relevance model again on the current judgments",
        )
        action.add_argument(
            "--supervise",
            action="store_true",
            help="re-queue stale chunks of every job",
        )
        action.add_argument("--status", type=int, metavar="JOB", help="print progress")
        action.add_argument(
            "--job",
            type=int,
            metavar="JOB",
            help="with --new-documents: the finished job to score them for",
        )
        parser.add_argument(
            "--new-documents",
            action="store_true",
            help="with --job N: score the documents imported after job N for its "
            "topics, in batches on the workers; again resumes what is not done",
        )
        parser.add_argument("--collection", help="collection name")
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--pool", help="pool name (its documents per topic)")
        source.add_argument("--sample", help="sample name (its documents per topic)")
        source.add_argument("--all-docs", action="store_true", help="every document")
        parser.add_argument("--topics", nargs="+", metavar="QID", help="default: all")
        parser.add_argument("--k", type=int, default=3, help="shingle size (default 3)")
        parser.add_argument(
            "--lam", type=float, default=0.5, help="decay (default 0.5)"
        )
        parser.add_argument("--stem", default="porter", choices=["porter", "none"])
        parser.add_argument(
            "--stopwords", default="default", choices=["default", "none"]
        )
        parser.add_argument(
            "--assessor", nargs="+", help="only these assessors' nuggets"
        )
        parser.add_argument(
            "--bank",
            nargs="+",
            help="only these imported nugget banks' nuggets (with --assessor: both)",
        )
        parser.add_argument(
            "--grade", nargs="+", type=int, help="only nuggets of grades"
        )
        parser.add_argument("--aspect", nargs="+", help="only nuggets of these aspects")
        parser.add_argument("--name", default="", help="a label for the job")
        parser.add_argument(
            "--wait", action="store_true", help="follow with a progress bar"
        )

    def handle(self, *args, **options) -> None:
        if not options["wait"]:
            self._handle(options)
            return
        with quiet_celery(options["verbosity"]):
            self._handle(options)

    def _handle(self, options) -> None:
        try:
            if options["supervise"]:
                requeued = match_supervise()
                self.stdout.write(
                    f"re-queued {sum(map(len, requeued.values()))} chunks"
                )
                return
            if options["status"]:
                self._print(match_job_progress(_job(options["status"])))
                return
            if options["cancel"]:
                job = match_job_cancel(job=_job(options["cancel"]))
                self.stdout.write(f"job {job.pk}: {job.status}")
                return
            if options["rescore"]:
                job = _job(options["rescore"])
                summary = match_job_rescore(job=job, lam=options["lam"])
                self.stdout.write(
                    f"job {options['rescore']}: lambda {options['lam']:g}, "
                    f"{summary.changed} of {summary.results} results changed "
                    f"in {summary.seconds:.2f}s; now scoring {job.scoring}"
                )
                return
            if options["fit"]:
                self._fit(_job(options["fit"]))
                return
            if options["job"] or options["new_documents"]:
                self._new_documents(options)
                return
            if options["resume"]:
                job = _job(options["resume"])
                ids = match_job_resume(job=job)
                self.stdout.write(f"job {job.pk}: re-queued {len(ids)} chunks")
            else:
                job = self._launch(options)
                self.stdout.write(
                    f"job {job.pk}: {job.chunks_total} chunks, {job.docs_total} documents"
                )
                for warning in launch_warnings(job):
                    self.stderr.write(f"warning: {warning}")
        except MatchJobError as exc:
            raise CommandError(str(exc)) from exc
        if options["wait"]:
            self._follow(job, options["verbosity"] > 0)

    def _launch(self, options) -> MatchJob:
        if not options["collection"]:
            raise CommandError("--collection is required to launch a job")
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        try:
            topics = topics_find(collection=collection, qids=options["topics"] or [])
        except UnknownTopics as exc:
            raise CommandError(str(exc)) from exc
        pool = sample = None
        if options["pool"]:
            source = MatchJob.Source.POOL
            pool = only_one(
                Pool.objects.filter(collection=collection, name=options["pool"]),
                unknown=f"unknown pool {options['pool']}",
                several=f"several pools named {options['pool']}",
            )
        elif options["sample"]:
            source = MatchJob.Source.SAMPLE
            # Sample names are unique per pool, not per collection.
            sample = only_one(
                Sample.objects.filter(
                    pool__collection=collection, name=options["sample"]
                ),
                unknown=f"unknown sample {options['sample']}",
                several=(
                    f"several samples named {options['sample']} in collection "
                    f"{collection.name}; rename one"
                ),
            )
        elif options["all_docs"]:
            source = MatchJob.Source.COLLECTION
        else:
            raise CommandError("say which documents: --pool, --sample or --all-docs")
        return match_job_launch(
            collection=collection,
            topics=topics,
            source=source,
            pool=pool,
            sample=sample,
            name=options["name"],
            params=MatchParams(
                nugget_filter=_nugget_filter(options, collection),
                k=options["k"],
                lam=options["lam"],
                stem=options["stem"],
                stopwords=options["stopwords"],
            ),
        )

    def _new_documents(self, options) -> None:
        if not (options["job"] and options["new_documents"]):
            raise CommandError("--new-documents and --job N go together")
        job = _job(options["job"])
        try:
            progress = new_documents_score(job=job)
        except UnpooledError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"job {job.pk}: {progress.wanted} (topic, new document) pairs, "
            f"{progress.scored} scored before, {progress.queued_batches} batches sent"
        )
        if not options["wait"]:
            return
        bar = tqdm(
            total=progress.wanted,
            unit="doc",
            desc=f"job {job.pk} new documents",
            disable=options["verbosity"] == 0,
        )
        while not progress.done:
            time.sleep(1)
            progress = new_documents_progress(job=job)
            bar.update(progress.scored - bar.n)
        bar.close()
        self.stdout.write(f"job {job.pk}: {progress.scored} new pairs scored")

    def _fit(self, job: MatchJob) -> None:
        try:
            summary = job_model_fit(job=job)
        except RelevanceModelError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"job {job.pk}: fitted on {summary.judged} judged documents "
            f"({summary.relevant} relevant); p of {summary.documents} documents "
            f"in {summary.seconds:.3f}s"
        )

    def _follow(self, job: MatchJob, show: bool) -> None:
        bar = tqdm(
            total=job.docs_total,
            unit="doc",
            desc=f"job {job.pk}",
            disable=not show,
            bar_format=BAR_FORMAT,
            file=self.stderr._out,
        )
        while True:
            job.refresh_from_db()
            progress = match_job_progress(job)
            rate = progress["docs_per_second"]
            bar.update(job.docs_done - bar.n)
            bar.set_postfix_str(f"{rate:.1f} docs/s" if rate else "", refresh=True)
            if job.status in MatchJob.FINAL:
                break
            time.sleep(1)
        bar.close()
        self._print(progress)
        if job.status != MatchJob.Status.DONE:
            raise CommandError(f"job {job.pk} {job.status}: {job.error}")

    def _print(self, progress: dict) -> None:
        rate = progress["docs_per_second"]
        self.stdout.write(
            f"job {progress['id']}: {progress['status']}, "
            f"{progress['chunks_done']}/{progress['chunks_total']} chunks, "
            f"{progress['docs_done']}/{progress['docs_total']} documents"
            + (f", {rate:.1f} docs/s" if rate else "")
            + (f"; error: {progress['error']}" if progress["error"] else "")
        )


def _job(pk: int) -> MatchJob:
    job = MatchJob.objects.filter(pk=pk).first()
    if job is None:
        raise CommandError(f"no job {pk}")
    return job


def _nugget_filter(options, collection: Collection) -> dict[str, list]:
    out: dict[str, list] = {}
    if options["bank"]:
        banks = NuggetBank.objects.filter(
            collection=collection, name__in=options["bank"]
        )
        found_banks = {b.name: b.pk for b in banks}
        unknown = set(options["bank"]) - set(found_banks)
        if unknown:
            raise CommandError(f"unknown nugget banks: {', '.join(sorted(unknown))}")
        out["banks"] = sorted(found_banks.values())
    if options["assessor"]:
        users = get_user_model().objects.filter(username__in=options["assessor"])
        found = {u.username: u.pk for u in users}
        missing = set(options["assessor"]) - set(found)
        if missing:
            raise CommandError(f"unknown assessors: {', '.join(sorted(missing))}")
        out["assessors"] = sorted(found.values())
    if options["grade"]:
        out["grades"] = options["grade"]
    if options["aspect"]:
        out["aspects"] = options["aspect"]
    return out
