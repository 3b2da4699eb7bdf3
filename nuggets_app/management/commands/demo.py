"""``manage.py demo``: load the shipped demo dataset, pool it, sample it, add demo users.

Idempotent: running it again changes nothing. The demo users have fixed, published
passwords, so the command refuses to create them unless ``DEBUG`` is on or
``--allow-demo-passwords`` is given.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from nuggets_app.collection.services.imports import (
    collection_import,
    qrels_import,
    runs_import,
    topics_import,
)
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.models import Collection, Qrels, Run, Sample
from nuggets_app.pooling.services.assignments import assignment_create
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw

COLLECTION = "demo"
POOL = "demo-depth20"
POOL_DEPTH = 20
SAMPLE = "demo-statap15"
SAMPLE_SIZE = 15
SAMPLE_SEED = 1
TRUTH = "demo-truth"
# Demo-only logins: published in the README, so never on a reachable server.
USERS = [
    ("admin", "demo-admin-pass", True),
    ("alice", "demo-alice-pass", False),
    ("bob", "demo-bob-pass", False),
]
# Topics both assessors judge, so agreement can be shown.
DOUBLE_JUDGED = ["1", "2"]


def load_data(data: Path) -> Collection:
    """Import documents, topics, runs and the generator's ground truth (once)."""
    collection_import(path=data / "docs.jsonl", name=COLLECTION)
    collection = Collection.objects.get(name=COLLECTION)
    topics_import(path=data / "topics.jsonl", collection=collection)
    present = set(
        Run.objects.filter(collection=collection).values_list("name", flat=True)
    )
    # Re-importing a run replaces its entries; skipping present runs keeps rows as they are.
    missing = [
        p for p in sorted((data / "runs").glob("*.run")) if p.stem not in present
    ]
    if missing:
        runs_import(paths=missing, collection=collection)
    if not Qrels.objects.filter(collection=collection, name=TRUTH).exists():
        qrels_import(path=data / "qrels.txt", collection=collection, name=TRUTH)
    return collection


def ensure_users() -> list[tuple[str, str]]:
    """Create the demo users if missing; returns (username, password or a note)."""
    user_model = get_user_model()
    logins = []
    for username, password, is_admin in USERS:
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"is_staff": is_admin, "is_superuser": is_admin}
        )
        if created:
            user.set_password(password)
            user.save(update_fields=["password"])
        known = user.check_password(password)
        logins.append(
            (username, password if known else "(changed since the demo set it)")
        )
    return logins


class Command(BaseCommand):
    help = (
        "Load the demo dataset, build a depth-20 pool and a statAP sample, add users."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000/", help="URL to print"
        )
        parser.add_argument(
            "--allow-demo-passwords",
            action="store_true",
            help="create the demo users even with DEBUG off (their passwords are public)",
        )

    def handle(self, *args, **options) -> None:
        if not settings.DEBUG and not options["allow_demo_passwords"]:
            raise CommandError(
                "the demo users have published passwords: run with DEBUG=1 "
                "(embedded demo) or pass --allow-demo-passwords"
            )
        with transaction.atomic():
            collection = load_data(DATA_DIR)
            runs = list(Run.objects.filter(collection=collection).order_by("name"))
            pool = pool_build(
                collection=collection, runs=runs, depth=POOL_DEPTH, name=POOL
            )
            sample = sample_draw(
                pool=pool,
                size=SAMPLE_SIZE,
                method=Sample.Method.STATAP,
                seed=SAMPLE_SEED,
                name=SAMPLE,
            )
            logins = ensure_users()
            assessors = list(
                get_user_model()
                .objects.filter(username__in=["alice", "bob"])
                .order_by("username")
            )
            assignment_create(sample=sample, assessors=assessors, overlap=1)
            double = list(collection.topics.filter(qid__in=DOUBLE_JUDGED))
            assignment_create(
                sample=sample, assessors=assessors, topics=double, overlap=2
            )
        self._report(options["url"], collection, runs, sample, logins)

    def _report(self, url, collection, runs, sample, logins) -> None:
        write = self.stdout.write
        write(
            f"demo: {collection.documents.count()} documents, "
            f"{collection.topics.count()} topics, {len(runs)} runs; pool {POOL} "
            f"(depth {POOL_DEPTH}); sample {SAMPLE} ({SAMPLE_SIZE} per topic, statAP)"
        )
        write(f"open {url}")
        write("logins (DEMO ONLY: published passwords, never use them on a server):")
        for username, password in logins:
            role = "admin" if username == "admin" else "assessor"
            write(f"  {username:<6} {password:<20} {role}")
