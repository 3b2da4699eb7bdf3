"""A test-collection release read into this installation (``import_release``).

:func:`release_import` checks the release (its format and every file's checksum),
loads it into a collection whose documents are already loaded (a release carries no
documents): topics, the pooled runs, the human, merged, probabilistic qrels and prels
as stored qrels named ``<prefix>-human`` and so on, the nugget bank as the bank
``<prefix>``; all in one transaction. Then it recomputes the default estimates of the
runs from what was loaded (the stored prels and runs) and the release's cross-fitted
p and design, through the product's estimator, and compares them with the release's
``estimates.tsv`` line by line.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from nuggets_app.collection.services.imports import (
    qrels_import,
    runs_import,
    topics_import,
)
from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.evaluation.selectors import run_scores
from nuggets_app.evaluation.services.estimates import runs_model_assisted
from nuggets_app.evaluation.services.inputs import db_prels
from nuggets_app.evaluation.services.releases import (
    RELEASE_FORMAT,
    ReleaseError,
    estimates_tsv,
)
from nuggets_app.models import Collection, Qrels, Run

# release file -> (stored qrels suffix, kind)
QRELS_FILES = {
    "qrels.human.txt": ("human", "qrels"),
    "qrels.merged.txt": ("merged", "qrels"),
    "qrels.probabilistic.txt": ("probabilistic", "prob"),
    "prels.txt": ("prels", "prels"),
}


@dataclass
class ReleaseImport:
    """What an import loaded, and whether the estimates came out the same."""

    collection: str
    topics: int = 0
    runs: list[str] = field(default_factory=list)
    qrels: list[str] = field(default_factory=list)
    nuggets: int = 0
    estimates: str = ""
    differences: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return bool(self.estimates) and not self.differences

    def describe(self) -> str:
        head = (
            f"release loaded into {self.collection}: {self.topics} topics, "
            f"{len(self.runs)} runs, qrels {', '.join(self.qrels)}, "
            f"{self.nuggets} nuggets"
        )
        if self.reproduced:
            return f"{head}; the estimates of {len(self.runs)} runs are reproduced"
        return (
            f"{head}; {len(self.differences)} estimate lines differ from the "
            f"release's, the first: {self.differences[0]}"
        )


@contextmanager
def release_open(path: str | Path) -> Iterator[Path]:
    """The release's folder: ``path`` itself, or a ``.tar.gz`` unpacked into a
    temporary folder (only plain files and folders; nothing outside it)."""
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.name.endswith(".tar.gz") or not path.is_file():
        raise ReleaseError(f"{path}: not a release folder or .tar.gz archive")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with tarfile.open(path, "r:gz") as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise ReleaseError(f"{path}: cannot unpack ({exc})") from exc
        found = [p.parent for p in Path(tmp).glob("*/manifest.json")]
        if len(found) != 1:
            raise ReleaseError(f"{path}: no single folder with a manifest.json inside")
        yield found[0]


def release_check(root: Path) -> dict[str, Any]:
    """The manifest, once the format and every listed file's checksum are right."""
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"{root}/manifest.json: cannot read it ({exc})") from exc
    if manifest.get("format") != RELEASE_FORMAT:
        raise ReleaseError(
            f"{root}/manifest.json: format {manifest.get('format')!r}, expected "
            f"{RELEASE_FORMAT!r}"
        )
    for relative, info in sorted(manifest.get("files", {}).items()):
        target = (root / relative).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            raise ReleaseError(f"{relative}: listed in the manifest, missing")
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if digest != info.get("sha256"):
            raise ReleaseError(
                f"{relative}: checksum differs from the manifest's (the file was "
                "changed after the release was written)"
            )
    return manifest


def _var_weights(root: Path) -> dict[tuple[str, str], float]:
    """A sample in rounds: each prels line's variance factor, from the sidecar (as
    :func:`nuggets_app.evaluation.selectors.sample_prels` applies it)."""
    sidecar = root / "prels.txt.provenance.json"
    if not sidecar.exists():
        return {}
    extra = json.loads(sidecar.read_text(encoding="utf-8")).get("lines")
    if not extra:  # a sample drawn at once: every line's variance factor is 1
        return {}
    lines = (root / "prels.txt").read_text(encoding="utf-8").splitlines()
    out = {}
    for line, info in zip(lines, extra, strict=True):
        qid, docno, *_ = line.split()
        if info.get("var_weight") is not None:
            out[(qid, docno)] = float(info["var_weight"])
    return out


def _table(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        qid, docno, value = line.split("\t")
        out.setdefault(qid, {})[docno] = float(value)
    return out


def release_import(
    *,
    path: str | Path,
    collection: str | None = None,
    prefix: str = "release",
) -> ReleaseImport:
    """Load the release at ``path`` (folder or ``.tar.gz``) into ``collection``
    (default: the release's collection name), whose documents must be loaded, and
    recompute its estimates. Raises :class:`ReleaseError` for a bad release and the
    importers' errors (file and line) for a bad file, saving nothing."""
    with release_open(path) as root:
        manifest = release_check(root)
        name = collection or manifest["collection"]["name"]
        target = Collection.objects.filter(name=name).first()
        if target is None or not target.documents.exists():
            raise ReleaseError(
                f"collection {name!r} has no documents: load the collection's "
                "documents first (a release carries none), then import the release"
            )
        result = ReleaseImport(collection=name)
        with transaction.atomic():
            topics_import(path=root / "topics.jsonl", collection=target)
            result.topics = target.topics.count()
            run_files = sorted((root / "estimate" / "runs").glob("*.run"))
            runs_import(paths=run_files, collection=target)
            result.runs = [p.name.removesuffix(".run") for p in run_files]
            for file, (suffix, kind) in QRELS_FILES.items():
                qrels_import(
                    path=root / file,
                    collection=target,
                    name=f"{prefix}-{suffix}",
                    kind=kind,
                )
                result.qrels.append(f"{prefix}-{suffix}")
            if (root / "nuggets.jsonl").exists():
                result.nuggets = nugget_bank_import(
                    path=root / "nuggets.jsonl",
                    collection=target,
                    name=prefix,
                    format="jsonl",
                ).nuggets
        _reproduce(root, manifest, target, prefix, result)
    return result


def _reproduce(
    root: Path,
    manifest: dict[str, Any],
    collection: Collection,
    prefix: str,
    result: ReleaseImport,
) -> None:
    """The default estimates from what was loaded, compared with the release's."""
    prels = db_prels(Qrels.objects.get(collection=collection, name=f"{prefix}-prels"))
    for (qid, docno), weight in _var_weights(root).items():
        if qid in prels:
            prels[qid].var_weight[docno] = weight
    runs = {
        run.name: run_scores(run)
        for run in Run.objects.filter(collection=collection, name__in=result.runs)
    }
    estimates = runs_model_assisted(
        prels=prels,
        probs=_table(root / "estimate" / "p.tsv"),
        runs=runs,
        level=int(manifest["relevance_level"]),
        design=_table(root / "estimate" / "design.tsv"),
    )
    result.estimates = estimates_tsv(estimates)
    expected = (root / "estimates.tsv").read_text(encoding="utf-8").splitlines()
    got = result.estimates.splitlines()
    result.differences = [
        f"release {a!r}, here {b!r}"
        for a, b in zip(expected, got, strict=False)
        if a != b
    ]
    if len(expected) != len(got):
        result.differences.append(f"release has {len(expected)} lines, here {len(got)}")
