"""What changed in the judgments since a job's model was fitted."""

from __future__ import annotations

from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import Document, JobInference, MatchJob, Topic


def judgments_changed(job: MatchJob) -> list[dict[str, str]]:
    """The judgments added, changed or removed since the job's model was fitted
    (``qid``, ``docno``, ``change`` in words; [] when unchanged or never fitted), so a
    page can say why its figures moved."""
    info = JobInference.objects.filter(job=job).values_list("fit_info", flat=True)
    seen = (info.first() or {}).get("judgments")
    if seen is None:
        return []
    before = {(t, d): y for t, d, y in seen}
    topics = list(job.topics.values_list("pk", flat=True))
    level = job.relevance_level
    now = {k: int(g >= level) for k, g in human_grades(topics).items()}
    words = {1: "relevant", 0: "non-relevant"}
    changes: list[tuple[tuple[int, int], str]] = []
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if old is None and new is not None:
            change = f"judged {words[new]}"
        elif new is None and old is not None:
            change = f"judgment removed (was {words[old]})"
        elif old is not None and new is not None:
            change = f"{words[old]} -> {words[new]}"
        changes.append((key, change))
    qids = dict(Topic.objects.filter(pk__in=topics).values_list("pk", "qid"))
    docnos = dict(
        Document.objects.filter(pk__in={d for (_, d), _ in changes}).values_list(
            "pk", "docno"
        )
    )
    return [
        {"qid": qids.get(t, str(t)), "docno": docnos.get(d, str(d)), "change": c}
        for (t, d), c in changes
    ]
