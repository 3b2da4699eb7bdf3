"""A test-collection release: what an organiser publishes when the assessment ends.

:func:`release_write` writes, for a collection and one finished matching job, a folder
(or a ``.tar.gz`` of it) that a second installation imports (``import_release``) and
that anyone can read without the product:

- ``topics.jsonl``; ``qrels.human.txt`` (several assessors on one document: the
  collection's aggregation rule, named in the manifest); the job's ``qrels.merged.txt`` under its default rule and
  ``qrels.probabilistic.txt``, each with its provenance sidecar; ``prels.txt`` of the
  estimate's sample (inclusion probabilities);
- ``nuggets.jsonl``: the nugget bank (``export_nuggets``'s JSONL);
- ``judgments.tsv``: every judgment with its time on task, times and role (a
  known-answer check, the sample, a top-up, ...), and ``adjudications.tsv``: the
  adjudicated decisions, from which a reader rebuilds ``qrels.human.txt``
  (:mod:`~nuggets_app.evaluation.services.release_judgments`);
- ``agreement.csv``: agreement of assessors who judged the same documents;
- ``estimates.tsv``: the default (model-assisted) estimate of every pooled run with
  its 95% interval, and ``estimate/``: what it was computed from beyond the prels
  (the cross-fitted p of every pooled document, the design's π, the pooled runs);
- ``judges/NAME.qrels`` (``.scores``, ``.jsonl``): each automatic judge's labels, as
  ``import_judge_labels`` reads them, described in the manifest's ``judges``;
- ``manifest.json`` (checksums, product version, sample design, job parameters) and a
  ``README.md`` written from the data.

People are named by pseudonyms (``assessor-1``, ... in the order of their user
ids) in every file, the provenance sidecars included, unless ``real_names``. Every export goes through :func:`release_export`, one
small dispatcher by kind.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from nuggets_app.collection.services.nugget_bank_exports import nugget_bank_export
from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.estimates import (
    INTERVAL_NOTE,
    estimate_rows,
    estimate_sample,
    job_crossfit,
    job_pool_runs,
    job_sample_estimates,
)
from nuggets_app.evaluation.services.inputs import format_rows
from nuggets_app.evaluation.services.release_judgments import (
    NamingError,
    adjudications_tsv,
    agreement_csv,
    assessor_names,
    human_qrels_rule,
    judgments_tsv,
    provenance_named,
)
from nuggets_app.evaluation.services.release_readme import release_readme
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.export_kinds import ExportRequest, export_make
from nuggets_app.inference.services.exports import Export, ExportError
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.judges.services import judges_release
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.models import Collection, MatchJob, Nugget, Sample
from nuggets_app.pooling.selectors import sample_design

RELEASE_FORMAT = "nuggets-test-collection-release/1"


class ReleaseError(DomainError):
    """The release cannot be written or read as asked; the message says why."""


@dataclass(frozen=True)
class ReleaseSummary:
    """What a written release holds."""

    path: Path
    files: int
    runs: int
    topics: int

    def describe(self) -> str:
        return (
            f"{self.path}: {self.files} files, {self.topics} topics, "
            f"estimates of {self.runs} runs"
        )


def release_export(kind: str, **options: Any) -> Export:
    """One export of the release by kind (``human``, ``merged``, ``probabilistic``,
    ``prels``), through the product's one export dispatcher, so every file of a
    release is the file ``export_qrels`` writes with the same options."""
    if kind not in ("human", "merged", "probabilistic", "prels"):
        raise ReleaseError(f"unknown release export {kind!r}")
    return export_make(ExportRequest(kind=kind, **options))


def product_version() -> str:
    """The product's version (``pyproject.toml``), or ``unknown``."""
    try:
        with open(Path(settings.BASE_DIR) / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def _topics_jsonl(collection: Collection) -> str:
    topics = sorted(collection.topics.all(), key=lambda t: qid_key(t.qid))
    return "".join(
        json.dumps(
            {
                "qid": t.qid,
                "title": t.title,
                "description": t.description,
                "narrative": t.narrative,
                "aspects": [{"id": a["id"], "text": a["text"]} for a in t.aspects],
            },
            ensure_ascii=False,
        )
        + "\n"
        for t in topics
    )


def _runs(runs: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, str]:
    """TREC run files of the pooled runs: scores at full precision, ranks in
    trec_eval's order (score descending, docno descending)."""
    files = {}
    for name, scores in sorted(runs.items()):
        lines = []
        for qid in sorted(scores, key=qid_key):
            ranked = sorted(scores[qid].items(), key=lambda p: p[0], reverse=True)
            ranked.sort(key=lambda p: -p[1])  # stable: ties keep docno descending
            for rank, (docno, score) in enumerate(ranked, start=1):
                lines.append(f"{qid} Q0 {docno} {rank} {score!r} {name}")
        files[name] = "".join(f"{line}\n" for line in lines)
    return files


def _table(rows: Mapping[str, Mapping[str, float]], column: str) -> str:
    lines = [f"qid\tdocno\t{column}"]
    for qid in sorted(rows, key=qid_key):
        for docno in sorted(rows[qid]):
            lines.append(f"{qid}\t{docno}\t{rows[qid][docno]!r}")
    return "".join(f"{line}\n" for line in lines)


def _sample_info(sample: Sample) -> dict[str, Any]:
    return {
        "name": sample.name,
        "pool": sample.pool.name,
        "pool_depth": sample.pool.depth,
        "pool_runs": sorted(sample.pool.runs.values_list("name", flat=True)),
        "method": sample.method,
        "size": sample.size,
        "seed": sample.seed,
        "per_run_quota": sample.per_run_quota,
        "judge": sample.judge.name if sample.judge is not None else None,
        "judge_weight": sample.judge_weight,
        "rounds": sample.rounds,
        "draws": sample.draws,
    }


def _files_write(root: Path, files: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    listed = {}
    for relative, text in sorted(files.items()):
        data = text.encode("utf-8")
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        listed[relative] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "lines": text.count("\n"),
        }
    return listed


def _export_files(
    stem: str, export: Export, name: Callable[[str], str]
) -> dict[str, str]:
    """The export's file and its sidecar, every person in it under ``name``."""
    files = {stem: export.text()}
    if export.provenance is not None:
        named = Export(lines=[], provenance=provenance_named(export.provenance, name))
        files[f"{stem}.provenance.json"] = named.sidecar()
    return files


def release_files(
    *, collection: Collection, job: MatchJob, real_names: bool = False
) -> tuple[dict[str, str], dict[str, Any]]:
    """The release's files ``{relative path: text}`` and its manifest (without the
    checksums, which :func:`release_write` adds)."""
    if job.collection_id != collection.pk:
        raise ReleaseError(f"job {job.pk} is not a job of {collection.name}")
    if job.status != MatchJob.Status.DONE:
        raise ReleaseError(f"job {job.pk} is {job.status}, not done")
    sample = estimate_sample(job)
    if sample is None:
        raise ReleaseError(
            f"job {job.pk} has no statAP sample: a release needs the judged sample "
            "its estimates come from"
        )
    aggregation = aggregation_of(collection)
    name = assessor_names(collection, real_names=real_names, aggregation=aggregation)
    rule = rule_default(job)
    try:
        human = release_export("human", collection=collection)
        merged = release_export("merged", collection=collection, job=job, rule=rule)
        probabilistic = release_export("probabilistic", collection=collection, job=job)
        prels = release_export("prels", collection=collection, sample=sample)
    except ExportError as exc:
        raise ReleaseError(str(exc)) from exc
    runs = job_pool_runs(job)
    probs = job_crossfit(job=job, sample=sample)
    estimates = job_sample_estimates(job=job, sample=sample, runs=runs, probs=probs)
    design = sample_design(sample=sample)
    try:
        people = {
            **_export_files("qrels.human.txt", human, name),
            **_export_files("qrels.merged.txt", merged, name),
            **_export_files("qrels.probabilistic.txt", probabilistic, name),
            "judgments.tsv": judgments_tsv(collection, sample, name),
            "adjudications.tsv": adjudications_tsv(collection, name),
            "agreement.csv": agreement_csv(collection, name),
        }
        rule_named = human_qrels_rule(aggregation, name)
    except NamingError as exc:
        raise ReleaseError(str(exc)) from exc
    files = {
        "topics.jsonl": _topics_jsonl(collection),
        **_export_files("prels.txt", prels, name),
        **people,
        "estimates.tsv": estimates_tsv(estimates),
        "estimate/p.tsv": _table(probs, "p"),
        "estimate/design.tsv": _table(design, "pi"),
    }
    files.update({f"estimate/runs/{n}.run": text for n, text in _runs(runs).items()})
    if Nugget.objects.filter(topic__collection=collection).exists():
        try:
            files["nuggets.jsonl"] = nugget_bank_export(
                collection=collection, naming=name
            ).text
        except NamingError as exc:
            raise ReleaseError(str(exc)) from exc
    judge_files, judges = judges_release(collection=collection)
    files.update(judge_files)
    manifest: dict[str, Any] = {
        "format": RELEASE_FORMAT,
        "product": {"name": "nuggets", "version": product_version()},
        "created": timezone.now().isoformat(),
        "collection": {
            "name": collection.name,
            "documents": collection.documents.count(),
            "topics": collection.topics.count(),
        },
        "assessors": "real user names" if real_names else "pseudonyms",
        "human_qrels_rule": rule_named,
        "job": probabilistic.provenance["job"] if probabilistic.provenance else None,
        "rule": {"spec": rule.as_dict(), "text": rule.describe()},
        "relevance_level": job.relevance_level,
        "sample": _sample_info(sample),
        "estimates": {
            "runs": sorted(estimates),
            "measure": "model-assisted MAP (maAP) with its 95% interval",
            "interval": INTERVAL_NOTE,
        },
    }
    if judges:  # automatic judges' labels: evidence beside the people's, not theirs
        manifest["judges"] = judges
    files["README.md"] = release_readme(manifest=manifest, files=files)
    return files, manifest


def estimates_tsv(estimates: Mapping[str, Any]) -> str:
    """``run measure topic value`` at full precision (``evaluate``'s rows)."""
    lines = ["run\tmeasure\ttopic\tvalue"]
    for name in sorted(estimates):
        for row in format_rows(estimate_rows(estimates[name])):
            lines.append(f"{name}\t{row}")
    return "".join(f"{line}\n" for line in lines)


def release_write(
    *,
    collection: Collection,
    job: MatchJob,
    out: str | Path,
    real_names: bool = False,
) -> ReleaseSummary:
    """Write the release to the folder ``out`` (created; must be empty if it exists)
    or, when ``out`` ends in ``.tar.gz``, to that archive (one top folder)."""
    out = Path(out)
    files, manifest = release_files(
        collection=collection, job=job, real_names=real_names
    )
    archive = out.name.endswith(".tar.gz")
    if not archive and out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty: write a release into a new folder")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / out.name.removesuffix(".tar.gz") if archive else out
        root.mkdir(parents=True, exist_ok=True)
        manifest["files"] = _files_write(root, files)
        (root / "manifest.json").write_text(
            json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        if archive:
            with tarfile.open(out, "w:gz") as tar:
                tar.add(root, arcname=root.name)
    return ReleaseSummary(
        path=out,
        files=len(files) + 1,
        runs=len(manifest["estimates"]["runs"]),
        topics=manifest["collection"]["topics"],
    )
