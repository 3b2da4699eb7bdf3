"""The README of a test-collection release, written from its manifest and files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _count(text: str, *, header: bool = False) -> int:
    return max(0, text.count("\n") - (1 if header else 0))


def _relevant(qrels: str, level: int) -> int:
    return sum(1 for line in qrels.splitlines() if int(line.split()[3]) >= level)


def _maps(estimates: str) -> list[tuple[str, str, str, str, str]]:
    """(run, maAP, low, high, topics) from ``estimates.tsv``."""
    found: dict[str, dict[str, str]] = {}
    for line in estimates.splitlines()[1:]:
        run, measure, topic, value = line.split("\t")
        wanted = ("maAP", "maAP_ci_low", "maAP_ci_high", "ma_topics")
        if topic == "all" and measure in wanted:
            found.setdefault(run, {})[measure] = value
    rows = [
        (run, v["maAP"], v["maAP_ci_low"], v["maAP_ci_high"], v["ma_topics"])
        for run, v in found.items()
    ]
    return sorted(rows, key=lambda r: -float(r[1]))


def release_readme(*, manifest: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """Markdown: what the collection is, how its pool and sample were built, how much
    was judged, what each file holds and what the estimates' intervals mean."""
    collection = manifest["collection"]
    sample = manifest["sample"]
    job = manifest["job"] or {}
    level = manifest["relevance_level"]
    judgments = _count(files["judgments.tsv"], header=True)
    assessors = {
        line.split("\t")[2] for line in files["judgments.tsv"].splitlines()[1:]
    }
    human = files["qrels.human.txt"]
    nuggets = _count(files.get("nuggets.jsonl", ""))
    draws = sample["draws"] or {}
    drawn = sum(int(d.get("distinct", 0)) for d in draws.values())
    runs = sample["pool_runs"]
    out = [
        f"# Test collection {collection['name']}",
        "",
        f"Written by the nuggets product {manifest['product']['version']} on "
        f"{manifest['created'][:10]}. {collection['topics']} topics over "
        f"{collection['documents']} documents (the documents are not part of this "
        "release: load them from their source first).",
        "",
        "## How it was built",
        "",
        f"- **Pool**: `{sample['pool']}`, the union of the top {sample['pool_depth']} "
        f"documents of {len(runs)} runs ({', '.join(runs)}).",
        f"- **Sample**: `{sample['name']}`, method {sample['method']}, "
        f"{sample['size']} documents per topic, seed {sample['seed']}"
        + (", with a per-run quota" if sample["per_run_quota"] else "")
        + (
            f", steered by the automatic judge `{sample['judge']}` at weight "
            f"{sample['judge_weight']:g} (exact π)"
            if sample.get("judge")
            else ""
        )
        + (f", in {sample['rounds']} rounds" if sample["rounds"] > 1 else "")
        + f": {drawn} documents drawn over {len(draws)} topics, each with its "
        "inclusion probability π (`prels.txt`).",
        f"- **Judging**: {judgments} judgments by {len(assessors)} assessors "
        f"(`judgments.tsv`, {manifest['assessors']}); {_count(human)} judged "
        f"(topic, document) pairs, {_relevant(human, level)} relevant at grade >= "
        f"{level}. {manifest['human_qrels_rule']['text'].capitalize()}.",
        f"- **Nuggets**: {nuggets} nuggets (`nuggets.jsonl`), each with its source "
        "span in a judged document, its assessor and times.",
        f"- **Inference**: matching job {job.get('id')} (shingle size k = "
        f"{job.get('k')}, λ = {job.get('lam')}, stemming {job.get('stem')}) scored "
        "every pooled document against the nuggets; a relevance model fitted on the "
        "judged sample gives every pooled document a probability of relevance. "
        f"`qrels.merged.txt` decides the unjudged ones by {manifest['rule']['text']} "
        "(people's grades always override).",
        "",
        "## Files",
        "",
        "| file | what |",
        "|---|---|",
        "| `topics.jsonl` | `qid title description narrative aspects` |",
        "| `qrels.human.txt` | TREC qrels of the people's judgments |",
        "| `qrels.merged.txt` | TREC qrels: people's grades, and the rule's "
        "decisions elsewhere; `.provenance.json` says who decided each line |",
        "| `qrels.probabilistic.txt` | `qid docno rel p pi source`: the model's "
        "probability of relevance of every pooled document |",
        "| `prels.txt` | `qid docno rel method inclusion_prob` of the judged sample "
        "(statAP) |",
        "| `nuggets.jsonl` | the nugget bank (read by `import_nuggets`) |",
        "| `judgments.tsv` | every judgment, with its time on task, times and role "
        "(`check`: a known answer, never a label; `sample`, `top-up`, "
        "`verification`, `other`) |",
        "| `adjudications.tsv` | the adjudicated decisions; with the judgments "
        "(checks aside) and `human_qrels_rule` in the manifest they rebuild "
        "`qrels.human.txt` |",
        "| `agreement.csv` | agreement of assessors who judged the same documents |",
        "| `estimates.tsv` | the default estimates of the pooled runs |",
        "| `estimate/` | the cross-fitted p (`p.tsv`), the design's π (`design.tsv`) "
        "and the runs (`runs/`) the estimates were computed from |",
        "| `manifest.json` | checksums, product version, sample design, job "
        "parameters |",
        "",
        "## Estimates",
        "",
        "Model-assisted MAP (the relevance model's p for every pooled document, "
        "corrected by the judged sample's residuals weighted by 1/π) with its 95% "
        f"interval, over the topics with judged documents ({len(draws)} sampled):",
        "",
        "| run | maAP | 95% interval | topics |",
        "|---|---|---|---|",
    ]
    for run, value, low, high, topics in _maps(files["estimates.tsv"]):
        out.append(
            f"| {run} | {float(value):.4f} | "
            f"[{float(low):.4f}, {float(high):.4f}] | {topics} |"
        )
    out += ["", manifest["estimates"]["interval"], ""]
    return "\n".join(out)
