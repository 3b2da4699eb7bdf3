"""What a researcher should know about a job's topics before trusting it: the
warnings the job page and ``match`` print, from the topics' judgments and nuggets
(:mod:`nuggets_app.inference.services.rules`)."""

from __future__ import annotations

from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.rules import (
    topics_unjudged,
    topics_without_nuggets,
)
from nuggets_app.models import MatchJob


def launch_warnings(job: MatchJob) -> list[str]:
    """What a researcher should know about a job's topics before trusting it; each
    sentence holds under every rule it names."""
    out = []
    bare = {t.qid for t in topics_without_nuggets(job)}
    unjudged = [t.qid for t in topics_unjudged(job)]
    nothing = [q for q in unjudged if q in bare]
    if nothing:
        out.append(
            f"topics {', '.join(nothing)} have no judged document and no nuggets: no "
            "rule infers anything for them (they stay out of inferred and merged "
            "qrels, and have no estimate) until some of their documents are judged "
            "or nuggets are added"
        )
    nuggets_only = [q for q in unjudged if q not in bare]
    if nuggets_only:
        out.append(
            f"topics {', '.join(nuggets_only)} have nuggets but no judged document: "
            "the paper rule (and top N by score) decides them from the min-span "
            "score; rules on the model's p cannot (there is nothing to fit the model "
            "on), so they stay out of those qrels and have no estimate"
        )
    missing = [q for q in sorted(bare, key=qid_key) if q not in unjudged]
    if missing:
        out.append(
            f"topics {', '.join(missing)} have no nuggets: the paper rule cannot "
            "decide them (their unjudged documents stay out of inferred and merged "
            "qrels under it); the relevance model gives them probabilities from the "
            "topic statement, relevance feedback and prevalence only"
        )
    return out
