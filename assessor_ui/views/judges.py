"""Staff pages of the automatic judges: a judge's labels uploaded, the judges audited
against the people's sample, and a document of the audit with every label of it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET

from assessor_ui.forms.judges import JudgePlanForm, JudgeUploadForm
from assessor_ui.views.decorators import staff_required
from assessor_ui.views.staff_tasks import LimitedUploadHandler
from nuggets_app.collection.services.uploads import safe_name
from nuggets_app.errors import DomainError
from nuggets_app.evaluation.selectors import statap_samples
from nuggets_app.evaluation.services.judge_audit_reports import MEANINGS
from nuggets_app.evaluation.services.judge_audits import judge_audit_build
from nuggets_app.evaluation.services.judge_figures import (
    judge_qrels_text,
    judge_runs_expected,
)
from nuggets_app.evaluation.services.judge_plans import (
    DEFAULT_HALF_WIDTH,
    judge_plan_build,
)
from nuggets_app.judges.selectors import collection_judges, document_labels
from nuggets_app.judges.services import judge_labels_import
from nuggets_app.models import Collection, Document, Judge, Topic


@csrf_exempt
@staff_required
def judges_page(request: HttpRequest, name: str) -> HttpResponse:
    """The collection's judges and the upload of a judge's labels. The size limit is
    enforced while the body streams in, as on the other upload pages (CSRF is then
    checked by ``_judges_page``)."""
    handler = LimitedUploadHandler(request)
    request.upload_handlers = [handler]
    return _judges_page(request, name, handler)


def _import(form: JudgeUploadForm, collection: Collection) -> str:
    """Import the uploaded file under its own name (errors name it, not a temporary
    path); the summary line."""
    upload = form.cleaned_data["file"]
    folder = Path(tempfile.mkdtemp(prefix="judge-"))
    try:
        path = folder / safe_name(upload.name)
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        try:
            summary = judge_labels_import(
                path=path,
                collection=collection,
                name=form.cleaned_data["judge"],
                fmt=form.cleaned_data["fmt"],
                info=form.info(),
            )
        except DomainError as error:
            raise DomainError(str(error).replace(f"{folder}/", "")) from None
        return summary.describe().replace(f"{folder}/", "")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@csrf_protect
def _judges_page(
    request: HttpRequest, name: str, handler: LimitedUploadHandler
) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    status = 200
    if request.method == "POST":
        form = JudgeUploadForm(request.POST, request.FILES)
        if handler.too_large:
            form.add_error(
                None,
                f"The upload is larger than the limit of {handler.limit} bytes "
                "(UPLOAD_MAX_BYTES); nothing was saved.",
            )
            status = 413
        elif form.is_valid():
            try:
                line = _import(form, collection)
            except DomainError as error:
                form.add_error(None, f"{error}; nothing was saved.")
                status = 400
            else:
                messages.success(request, line)
                return redirect("staff-judges", name=collection.name)
        else:
            status = 400
    else:
        form = JudgeUploadForm()
    context = {
        "collection": collection,
        "judges": collection_judges(collection=collection),
        "form": form,
        "limit": settings.UPLOAD_MAX_BYTES,
    }
    return render(request, "assessor_ui/judges/judges.html", context, status=status)


@staff_required
@require_GET
def judge_audit_page(request: HttpRequest, name: str) -> HttpResponse:
    """Every judge of the collection audited against the people's sample
    (``?sample=NAME``, else the latest statAP sample)."""
    collection = get_object_or_404(Collection, name=name)
    report, plan, problem = None, None, ""
    plan_form = JudgePlanForm(request.GET if "half_width" in request.GET else None)
    try:
        report = judge_audit_build(
            collection=collection, sample_name=request.GET.get("sample") or None
        )
        target = plan_form.cleaned_data if plan_form.is_valid() else {}
        plan = judge_plan_build(
            report=report,
            half_width=target.get("half_width", DEFAULT_HALF_WIDTH),
            relative=target.get("unit", "share") == "share",
        )
    except DomainError as error:
        problem = str(error)
    context = {
        "collection": collection,
        "report": report,
        "plan": plan,
        "plan_form": plan_form,
        "problem": problem,
        "meanings": MEANINGS,
        "samples": statap_samples(collection),
    }
    return render(request, "assessor_ui/judges/audit.html", context)


@staff_required
@require_GET
def judge_document(
    request: HttpRequest, name: str, qid: str, docno: str
) -> HttpResponse:
    """A document of the audit as text (escaped), with every judge's label of it and
    the people's."""
    collection = get_object_or_404(Collection, name=name)
    try:
        labels = document_labels(collection=collection, qid=qid, docno=docno)
    except (Topic.DoesNotExist, Document.DoesNotExist):
        raise Http404("No such topic or document in this collection.") from None
    context = {"collection": collection, "labels": labels}
    return render(request, "assessor_ui/judges/document.html", context)


def _judge(name: str, judge: str) -> Judge:
    return get_object_or_404(Judge, collection__name=name, name=judge)


@staff_required
@require_GET
def judge_figures_page(request: HttpRequest, name: str, judge: str) -> HttpResponse:
    """The judge's own figures: every run's expected AP under its labels alone."""
    found = _judge(name, judge)
    table = judge_runs_expected(judge=found)
    context = {
        "collection": found.collection,
        "judge": found,
        "table": {"columns": table.columns, "rows": table.rows},
    }
    return render(request, "assessor_ui/judges/figures.html", context)


@staff_required
@require_GET
def judge_qrels_download(request: HttpRequest, name: str, judge: str) -> HttpResponse:
    """The judge's labels as TREC qrels, named as the judge's."""
    found = _judge(name, judge)
    response = HttpResponse(
        judge_qrels_text(judge=found), content_type="text/plain; charset=utf-8"
    )
    filename = f"{found.collection.name}-judge-{safe_name(found.name)}.qrels"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
