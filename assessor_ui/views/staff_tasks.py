"""Staff pages for long tasks: uploads (check, confirm, import), and the progress,
cancel and list pages of every task (imports, pools, samples; matching jobs are listed
from their own model)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.staff import UPLOAD_FORMS
from assessor_ui.views.decorators import staff_required
from nuggets_app.collection.services import uploads
from nuggets_app.models import Collection, MatchJob, TaskRecord
from nuggets_app.operations.services.task_records import (
    task_record_cancel,
    task_record_progress,
    tasks_listed,
)
from nuggets_app.staff import services as staff_tasks


class LimitedUploadHandler(TemporaryFileUploadHandler):
    """Streams each file to a temporary file; stops once the request's files exceed
    ``settings.UPLOAD_MAX_BYTES`` (the rest of the body is read and dropped)."""

    def __init__(self, request=None) -> None:
        super().__init__(request)
        self.limit = settings.UPLOAD_MAX_BYTES
        self.received = 0
        self.too_large = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.too_large = True
            raise StopUpload(connection_reset=False)
        return super().receive_data_chunk(raw_data, start)


@csrf_exempt
@staff_required
def upload(request: HttpRequest, name: str, kind: str) -> HttpResponse:
    """Upload form of one kind. The size limit is enforced while the body streams in,
    so the handler is installed before anything reads ``request.POST`` (CSRF is then
    checked by ``_upload``)."""
    if kind not in UPLOAD_FORMS:
        raise Http404("No such upload.")
    handler = LimitedUploadHandler(request)
    request.upload_handlers = [handler]
    return _upload(request, name, kind, handler)


@csrf_protect
def _upload(
    request: HttpRequest, name: str, kind: str, handler: LimitedUploadHandler
) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    form_class = UPLOAD_FORMS[kind]
    status = 200
    if request.method == "POST":
        form = form_class(request.POST, request.FILES)
        if handler.too_large:
            form.add_error(
                None,
                f"The upload is larger than the limit of {handler.limit} bytes "
                "(UPLOAD_MAX_BYTES); nothing was saved.",
            )
            status = 413
        elif form.is_valid():
            data = form.cleaned_data
            files = data["files"] if kind == "runs" else [data["file"]]
            params = {k: v for k, v in data.items() if k not in ("file", "files")}
            try:
                task = staff_tasks.upload_task_start(
                    kind=kind,
                    collection=collection,
                    user=request.user,
                    files=files,
                    params=params,
                )
            except uploads.UploadError as exc:
                form.add_error(None, f"{exc}; nothing was saved.")
                status = 413 if "limit" in str(exc) else 400
            else:
                return redirect("staff-task", pk=task.pk)
        else:
            status = 400
    else:
        form = form_class()
    context = {
        "collection": collection,
        "kind": kind,
        "form": form,
        "limit": settings.UPLOAD_MAX_BYTES,
    }
    return render(request, "assessor_ui/staff/upload.html", context, status=status)


@staff_required
@require_GET
def task_list(request: HttpRequest) -> HttpResponse:
    staff_tasks.uploads_expire()
    tasks = tasks_listed(
        TaskRecord.objects.select_related("collection", "started_by")[:300]
    )
    jobs = MatchJob.objects.select_related("collection", "created_by")[:100]
    return render(
        request, "assessor_ui/staff/tasks.html", {"tasks": tasks, "jobs": jobs}
    )


# The fix a refused upload's problems point to, by upload kind and problem: the
# upload form's own option where it has one (its label quoted as the form shows it).
UPLOAD_FIXES = {
    ("runs", "unknown document"): "Some documents of the runs are not in the "
    "collection: upload the runs again with \u201cSkip documents not in the "
    "collection\u201d ticked to skip their lines (they are counted), or import the "
    "documents first.",
    ("nuggets", "unknown topic"): "Some topics of the bank are not in the collection: "
    "upload it again with \u201cCreate topics\u201d ticked to make a topic of every "
    "qid the collection lacks, or import the topics first.",
    ("runs", "unknown topic"): "Some topics are not in the collection: import the "
    "topics first (Upload topics), then upload the runs again.",
    ("qrels", "unknown topic"): "Some topics are not in the collection: import the "
    "topics first (Upload topics), then upload the qrels again.",
    ("qrels", "unknown document"): "Some documents are not in the collection: import "
    "the documents first, then upload the qrels again.",
    ("nuggets", "unknown document"): "Some documents are not in the collection: "
    "import the documents first, then upload the bank again.",
}


def upload_fixes(kind: str, problems: list[str]) -> list[str]:
    """The fixes that apply to an upload's problems (``FILE:LINE: problem (...)``)."""
    found = {p.split(": ", 1)[-1].split(" (", 1)[0] for p in problems}
    return [
        fix
        for (k, problem), fix in UPLOAD_FIXES.items()
        if k == kind and problem in found
    ]


@staff_required
@require_GET
def task_detail(request: HttpRequest, pk: int) -> HttpResponse:
    staff_tasks.uploads_expire()
    task = get_object_or_404(
        TaskRecord.objects.select_related("collection", "started_by"), pk=pk
    )
    summary = dict(task.summary)
    files = summary.pop("files", None)
    summary.pop("total", None)
    columns = sorted({k for row in files or [] for k in row} - {"file"})
    context = {
        "task": task,
        "progress": task_record_progress(task=task),
        "summary": summary,
        "file_columns": columns,
        "file_rows": [
            (row.get("file", ""), [row.get(c, "") for c in columns])
            for row in files or []
        ],
        "is_upload": task.kind in uploads.UPLOAD_KINDS,
        "fixes": upload_fixes(task.kind, list(task.problems or [])),
    }
    return render(request, "assessor_ui/staff/task.html", context)


@staff_required
@require_GET
def task_progress(request: HttpRequest, pk: int) -> JsonResponse:
    task = get_object_or_404(TaskRecord, pk=pk)
    return JsonResponse(task_record_progress(task=task))


@staff_required
@require_POST
def task_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    task = get_object_or_404(TaskRecord, pk=pk)
    try:
        staff_tasks.upload_task_confirm(task=task)
    except staff_tasks.TaskStateError as exc:
        messages.error(request, str(exc))
    return redirect("staff-task", pk=pk)


@staff_required
@require_POST
def task_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    task = get_object_or_404(TaskRecord, pk=pk)
    task = task_record_cancel(task=task)
    if task.is_final and task.kind in uploads.UPLOAD_KINDS:
        uploads.upload_discard(task=task)
    messages.info(request, "Cancel requested: nothing of this task will be saved.")
    return redirect("staff-task", pk=pk)
