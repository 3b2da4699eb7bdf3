"""The job topic addresses of before the qid ones (``/jobs/8/topics/7/``, a database
id): kept working as permanent redirects to the same page by qid."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET

from assessor_ui.views.decorators import researcher_required
from nuggets_app.models import MatchJob


def _to(request: HttpRequest, name: str, args: list) -> HttpResponse:
    query = request.META.get("QUERY_STRING", "")
    url = reverse(name, args=args) + (f"?{query}" if query else "")
    return HttpResponsePermanentRedirect(url)


@researcher_required
@require_GET
def job_topic_by_id(request: HttpRequest, pk: int, topic_pk: int) -> HttpResponse:
    """``/jobs/<pk>/topics/<topic id>/`` → ``/jobs/<pk>/qid/<qid>/``."""
    job = get_object_or_404(MatchJob, pk=pk)
    topic = get_object_or_404(job.topics, pk=topic_pk)
    return _to(request, "job-topic", [job.pk, topic.qid])


@researcher_required
@require_GET
def job_document_by_id(
    request: HttpRequest, pk: int, topic_pk: int, doc_pk: int
) -> HttpResponse:
    """The old document address → the one under the topic's qid."""
    job = get_object_or_404(MatchJob, pk=pk)
    topic = get_object_or_404(job.topics, pk=topic_pk)
    return _to(request, "job-document", [job.pk, topic.qid, doc_pk])
