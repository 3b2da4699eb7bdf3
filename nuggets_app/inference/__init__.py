"""Inferred relevance: matching jobs, their packed evidence, the relevance model fitted
on the judged sample, decision rules, and the exports of qrels they produce."""
