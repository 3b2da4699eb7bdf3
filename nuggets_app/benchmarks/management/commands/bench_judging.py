"""Load benchmark of the judging pages: N concurrent assessors against gunicorn on
loopback, PostgreSQL behind it; a /healthz/live baseline (no database) measured in the same run.

Not a test: it prints median and p95 latency per request kind and the ratio to the
baseline. Targets: judging page and saves median < 20 ms, p95 < 50 ms.

Each simulated assessor sends what the judging page sends (``--client inplace``, the
default): per document, the JSON of the document the page prefetches next (and of the
document shown, when a nugget changed since it was prefetched), a judgment save, and
for a relevant grade a nugget save, an edit, and the JSON of the current document
again (its scores after the nugget change). ``--client page`` instead opens
every document as a full page load, as the page did before it moved in place.

With the semantic extra installed (``--semantic both``, the default) it measures twice
in one run, the server started with ``SEMANTIC_EVIDENCE=off`` and then ``on`` (the
bench documents embedded first, so pages read their stored vectors), and prints the
two side by side: with the extra, every nugget save or edit asks for an embedding,
which without a broker runs on the server's background thread after the response.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from nuggets_app import models as m
from nuggets_app.benchmarks.load_server import (
    cpu_model,
    free_port,
    gunicorn_server,
    machine_busy_seconds,
    percentile,
    request,
)

PASSWORD = "bench-judging-password-7"
PREFIX = "bench-assessor-"


class Command(BaseCommand):
    help = (
        "Load benchmark: concurrent assessors judging and saving nuggets (PostgreSQL)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--users", type=int, default=20)
        parser.add_argument("--seconds", type=float, default=30.0, help="per phase")
        parser.add_argument(
            "--think", type=float, default=0.5, help="mean think time (s)"
        )
        parser.add_argument(
            "--think-min",
            type=float,
            default=0.0,
            help="shortest think time (s): uniform between it and 2*think - it",
        )
        parser.add_argument(
            "--semantic",
            choices=["both", "on", "off"],
            default="both",
            help="the server with the semantic extra off, on, or both in turn",
        )
        parser.add_argument(
            "--warmup", type=float, default=5.0, help="seconds of uncounted warm-up"
        )
        parser.add_argument("--port", type=int, default=0, help="0: a free port")
        parser.add_argument("--workers", type=int, default=3)
        parser.add_argument("--threads", type=int, default=2)
        parser.add_argument("--docs", default="", help="JSONL(.gz) documents to judge")
        parser.add_argument(
            "--client",
            choices=["inplace", "page"],
            default="inplace",
            help="what each move requests: the page's prefetch (JSON) or a full page",
        )

    def handle(self, *args, **opts) -> None:
        if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
            raise CommandError("bench_judging needs PostgreSQL: set DATABASE_URL")
        if opts["think_min"] > opts["think"]:
            raise CommandError("--think-min is more than the mean --think")
        from nuggets_app.learning.embeddings import semantic_available

        modes = ["off", "on"] if opts["semantic"] == "both" else [opts["semantic"]]
        if "on" in modes and not semantic_available():
            if opts["semantic"] == "on":
                raise CommandError("--semantic on: the extra is not installed")
            self.stdout.write("semantic extra not installed: measured without it")
            modes = ["off"]
        opts["port"] = free_port(opts["port"])
        opts["load_before"] = os.getloadavg()
        tables = {}
        for mode in modes:
            paths = fixture_build(users=opts["users"], docs_path=opts["docs"])
            if mode == "on":
                _embed_bench_documents()
            _vacuum_bench_tables()
            tables[mode] = self.measure({**opts, "semantic_mode": mode}, paths)
        for mode, results in tables.items():
            self.stdout.write(f"--- semantic extra {mode}")
            self.report(results, opts)
        if len(tables) > 1:
            self.side_by_side(tables)

    def measure(self, opts: dict, paths: dict) -> dict[str, list[float]]:
        """Warm-up, the baseline and the judging phase against one server."""
        client = opts["client"]
        with gunicorn_server(opts) as base:
            self.stdout.write(
                f"server up at {base}; {opts['users']} assessors; client {client}; "
                f"semantic extra {opts['semantic_mode']}"
            )
            sessions = [login(opts["port"], name) for name in sorted(paths)]
            # Every worker's first pages import and compile what later ones reuse
            # (views, templates, the stemmer): a warm-up pass, not counted, so the
            # figures are the steady state an assessor sees after the first minute.
            warmup: dict[str, list[float]] = defaultdict(list)
            run_phase(
                {**opts, "seconds": opts["warmup"]},
                sessions,
                lambda s, rng: assessor_step(s, paths[s.username], warmup, rng, client),
                "warm-up",
            )
            self.stdout.write(
                f"warm-up: {sum(map(len, warmup.values()))} requests, not counted"
            )
            results: dict[str, list[float]] = defaultdict(list)
            run_phase(
                opts, sessions, lambda s, rng: baseline_step(s, results), "baseline"
            )
            busy, started = machine_busy_seconds(), time.monotonic()
            run_phase(
                opts,
                sessions,
                lambda s, rng: assessor_step(
                    s, paths[s.username], results, rng, client
                ),
                "judging",
            )
            # Less noisy than a p95: what the whole machine (server, database, this
            # load generator) spent per request.
            results["busy_s"] = [machine_busy_seconds() - busy]
            results["phase_s"] = [time.monotonic() - started]
            results["nuggets_at_end"] = [float(_bench_nuggets().count())]
            if opts["semantic_mode"] == "on":
                # The embeddings are done after the responses, not skipped: how many
                # nuggets wait at the end, and how long the server takes to finish.
                results["backlog"] = [float(_embedding_backlog())]
                results["drained_s"] = [_drain_seconds(timeout=300.0)]
        return results

    def side_by_side(self, tables: dict[str, dict[str, list[float]]]) -> None:
        """p50 / p95 of each request kind without and with the extra."""
        self.stdout.write(
            f"{'request':<16}{'extra off p50/p95 ms':>24}{'extra on p50/p95 ms':>24}"
        )
        for kind in KINDS:
            cells = []
            for results in tables.values():
                values = results.get(kind)
                cells.append(
                    f"{statistics.median(values):.1f} / {percentile(values, 95):.1f}"
                    if values
                    else "-"
                )
            self.stdout.write(f"{kind:<16}" + "".join(f"{c:>24}" for c in cells))
        counts = [
            f"{sum(len(r.get(k, [])) for k in KINDS[1:])}" for r in tables.values()
        ]
        self.stdout.write(
            f"{'requests served':<16}" + "".join(f"{c:>24}" for c in counts)
        )
        failures = [f"{len(r.get('failure', []))}" for r in tables.values()]
        self.stdout.write(f"{'failures':<16}" + "".join(f"{c:>24}" for c in failures))

    def report(self, results: dict[str, list[float]], opts: dict) -> None:
        base = statistics.median(results["healthz"])
        self.stdout.write(
            f"cpu: {os.cpu_count()} cores; {cpu_model()}; python {sys.version.split()[0]}"
        )
        before, after = opts["load_before"], os.getloadavg()
        self.stdout.write(
            f"load average: {before[0]:.2f} before, {after[0]:.2f} after "
            "(other processes on the machine count too)"
        )
        self.stdout.write(
            f"{'request':<16}{'n':>7}{'median ms':>11}{'p95 ms':>9}{'x baseline':>12}"
        )
        for kind in KINDS:
            values = results.get(kind)
            if not values:
                continue
            med, p95 = statistics.median(values), percentile(values, 95)
            self.stdout.write(
                f"{kind:<16}{len(values):>7}{med:>11.1f}{p95:>9.1f}{med / base:>12.2f}"
            )
        failures = results.get("failure", [])
        self.stdout.write(f"failures: {len(failures)}")
        (busy,), (seconds,) = results["busy_s"], results["phase_s"]
        served = sum(len(results.get(k, [])) for k in KINDS[1:])
        self.stdout.write(
            f"machine CPU in the judging phase: {busy / seconds:.2f} of "
            f"{os.cpu_count()} cores busy, {1000 * busy / max(served, 1):.1f} ms "
            "per request (server, database and this load generator)"
        )
        # Every judging request reads the topic's nuggets: their number sets its cost.
        (count,) = results["nuggets_at_end"]
        self.stdout.write(f"topic nuggets at the end: {count:.0f}")
        if "backlog" in results:
            (backlog,), (drained,) = results["backlog"], results["drained_s"]
            self.stdout.write(
                f"nuggets waiting for their embedding at the end: {backlog:.0f}, "
                + (
                    f"all embedded {drained:.1f} s later"
                    if drained >= 0
                    else "some still waiting after 300 s"
                )
            )


KINDS = (
    "healthz",
    "judge_page",
    "document_data",
    "judgment_save",
    "nugget_save",
    "nugget_edit",
)


def _bench_nuggets():
    return m.Nugget.objects.filter(topic__collection__name="bench-judging")


def _vacuum_bench_tables() -> None:
    """Every phase starts from the same tables: the rows of the runs before, deleted
    by ``fixture_build``, vacuumed away and the planner's statistics fresh. Where
    autovacuum is off or behind, they piled up run after run (18,000 dead judgments
    under 800 live ones) and slowed every later phase."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session
    from django.db import connection

    tables = [
        model._meta.db_table
        for model in (
            m.Judgment,
            m.Nugget,
            m.NuggetEmbedding,
            m.WorkChange,
            Session,
            get_user_model(),
        )
    ]
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(table)}")


def _embedding_backlog() -> int:
    from nuggets_app.inference.services.embeddings import nuggets_unembedded

    return len(nuggets_unembedded(dict(_bench_nuggets().values_list("pk", "text"))))


def _drain_seconds(*, timeout: float) -> float:
    """Seconds until every bench nugget's text is embedded (-1: not in ``timeout``)."""
    start = time.monotonic()
    while _embedding_backlog():
        if time.monotonic() - start > timeout:
            return -1.0
        time.sleep(0.5)
    return time.monotonic() - start


def _embed_bench_documents() -> None:
    """The bench documents' embeddings, stored once (as an embedding job would)."""
    from nuggets_app.inference.services.embeddings import documents_embed_missing

    docs = m.Document.objects.filter(collection__name="bench-judging")
    documents_embed_missing(document_ids=list(docs.values_list("pk", flat=True)))


def _bench_texts(docs_path: str, count: int) -> list[tuple[str, str]]:
    # By default the first Cranfield documents of the repository's own test data.
    path = (
        Path(docs_path)
        if docs_path
        else (
            settings.BASE_DIR
            / "tests"
            / "data"
            / "public"
            / "cranfield"
            / "docs.jsonl.gz"
        )
    )
    if path.exists():
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            rows = [json.loads(line) for _, line in zip(range(count), fh, strict=False)]
        return [(r["docno"], r["text"]) for r in rows]
    rng = random.Random(7)
    words = [
        "wing",
        "flow",
        "boundary",
        "layer",
        "mach",
        "shock",
        "pressure",
        "heat",
        "model",
        "lift",
        "drag",
    ]
    return [(f"G{i}", " ".join(rng.choices(words, k=180))) for i in range(count)]


@transaction.atomic
def fixture_build(*, users: int, docs_path: str) -> dict[str, tuple[int, int]]:
    """Users, one topic and a 50-document sample; each user assigned it. Earlier bench
    judgments and nuggets are removed so every run starts alike. Returns
    ``{username: (assignment id, queue length)}``."""
    from django.contrib.auth import get_user_model

    collection, _ = m.Collection.objects.get_or_create(name="bench-judging")
    texts = _bench_texts(docs_path, 50)
    docs = []
    for docno, text in texts:
        doc, _ = m.Document.objects.get_or_create(
            collection=collection, docno=docno, defaults={"text": text, "title": docno}
        )
        docs.append(doc)
    topic, _ = m.Topic.objects.get_or_create(
        collection=collection, qid="1", defaults={"title": "wing boundary layer flow"}
    )
    pool, _ = m.Pool.objects.get_or_create(
        collection=collection, name="bench", depth=50
    )
    sample, created = m.Sample.objects.get_or_create(
        pool=pool, name="bench", defaults={"method": "uniform", "size": 50, "seed": 1}
    )
    if created:
        m.SampleDocument.objects.bulk_create(
            m.SampleDocument(
                sample=sample, topic=topic, document=d, inclusion_prob=1, order=i
            )
            for i, d in enumerate(docs, start=1)
        )
    User = get_user_model()
    result = {}
    for i in range(1, users + 1):
        user, made = User.objects.get_or_create(username=f"{PREFIX}{i:02d}")
        if made:
            user.set_password(PASSWORD)
            user.save()
        assignment, _ = m.Assignment.objects.get_or_create(
            sample=sample, topic=topic, assessor=user
        )
        result[user.username] = (assignment.pk, len(docs))
    bench_users = User.objects.filter(username__startswith=PREFIX)
    m.Nugget.objects.filter(assessor__in=bench_users).delete()
    m.Judgment.objects.filter(assessor__in=bench_users).delete()
    return result


class Session:
    """One assessor's keep-alive connection and cookies."""

    def __init__(self, port: int, username: str) -> None:
        self.port, self.username = port, username
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cookies: dict[str, str] = {}
        self.position = 1
        # Rounds through the queue: each round marks a new span (three fit in the
        # shortest document), since the same span twice is refused as a duplicate.
        self.round = 0
        self.nugget: dict | None = None
        self.opened = False  # the judging page loaded once (then moves are in place)
        self.stale = False  # a nugget changed: the next document shown is refreshed

    def call(self, method: str, path: str, data: dict | None = None):
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = ""
        if method == "POST":
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            headers["Referer"] = f"http://127.0.0.1:{self.port}/"
            body = urlencode(data or {})
        started = time.perf_counter()
        try:
            status, response, payload = request(
                self.port, method, path, body, headers, self.conn
            )
        except (http.client.HTTPException, OSError):
            # The server closed an idle keep-alive connection: reconnect, retry once.
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            started = time.perf_counter()
            status, response, payload = request(
                self.port, method, path, body, headers, self.conn
            )
        elapsed = (time.perf_counter() - started) * 1000
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return status, payload, elapsed


def login(port: int, username: str) -> Session:
    """Log in through the real login form (django-axes stays on)."""
    session = Session(port, username)
    session.call("GET", "/login/")
    status, _, _ = session.call(
        "POST",
        "/login/",
        {"username": username, "password": PASSWORD, "next": "/assess/"},
    )
    if status != 302:
        raise CommandError(f"login of {username} answered {status}")
    return session


def baseline_step(session: Session, results: dict) -> None:
    status, _, ms = session.call("GET", "/healthz/live")
    results["healthz" if status == 200 else "failure"].append(ms)


def assessor_step(
    session: Session,
    path: tuple[int, int],
    results: dict,
    rng: random.Random,
    client: str = "inplace",
) -> None:
    """One document: move to it, judge it, and for a relevant one save a nugget and
    edit it (module docstring: what each ``client`` requests)."""
    assignment, length = path
    base = f"/assess/{assignment}/{session.position}/"
    if client == "page" or not session.opened:
        steps = [("judge_page", "GET", base, None)]
        session.opened = True
    else:
        # The page prefetches the document two ahead; one kept from before the last
        # nugget change is shown at once and refreshed behind it.
        ahead = (session.position + 1) % length + 1
        steps = [("document_data", "GET", f"/assess/{assignment}/{ahead}/data", None)]
        if session.stale:
            steps.append(("document_data", "GET", base + "data", None))
    session.stale = False
    grade = rng.choice([0, 1, 2])
    steps.append(
        (
            "judgment_save",
            "POST",
            base + "judgment",
            {"relevance": grade, "seconds": 20},
        )
    )
    if grade:
        steps.append(
            (
                "nugget_save",
                "POST",
                base + "nuggets",
                {
                    "start": 41 * (session.round % 3),
                    "end": 41 * (session.round % 3) + 40,
                    "text": "wing flow boundary layer",
                    "client_uuid": str(uuid.uuid4()),
                },
            )
        )
    for kind, method, url, data in steps:
        status, payload, ms = session.call(method, url, data)
        results[kind if status in (200, 201) else "failure"].append(ms)
        if kind == "nugget_save" and status in (200, 201):
            nugget = json.loads(payload)
            status, _, ms = session.call(
                "POST",
                f"/nuggets/{nugget['id']}/edit",
                {
                    "version": nugget["version"],
                    "text": "wing flow edited",
                    "keywords": "[]",
                },
            )
            results["nugget_edit" if status == 200 else "failure"].append(ms)
            if client == "inplace":
                status, _, ms = session.call("GET", base + "data")
                results["document_data" if status == 200 else "failure"].append(ms)
                session.stale = True
    session.round += session.position == length
    session.position = session.position % length + 1


def run_phase(opts: dict, sessions: list[Session], step, name: str) -> None:
    """Every session loops ``step`` with random think time for ``--seconds``."""
    stop = time.monotonic() + opts["seconds"]

    def loop(session: Session, seed: int) -> None:
        rng = random.Random(seed)
        # Think before the first step too: assessors do not start in the same
        # instant, and a burst of every session at once measured the queue it
        # made (a seventh of the samples at think 3 s), not the steady state.
        low = opts.get("think_min", 0.0)
        high = 2 * opts["think"] - low
        time.sleep(rng.uniform(0, high))
        while time.monotonic() < stop:
            step(session, rng)
            time.sleep(rng.uniform(low, high))

    threads = [
        threading.Thread(target=loop, args=(s, i), name=f"{name}-{i}")
        for i, s in enumerate(sessions)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
