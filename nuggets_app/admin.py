"""Django admin: every model visible to staff; nothing a stored result is computed from
can be changed here.

Judgments, nuggets and their history, assignments, samples and their inclusion
probabilities, pool rows, match results and chunks, and qrels are written by the
services alone, which check each change and keep derived data in step (a nugget's
version and embedding, a design's inclusion probabilities): the admin shows them only
(:class:`ReadOnlyAdmin`). The rows those results are computed from (documents,
topics, runs and their entries, pools, jobs, nugget banks, collections, an assessor's
username) are editable until a result uses them, then shown only
(:class:`LockedOnceUsedAdmin`); each says which command changes it with the checks
and history it needs (``import_collection --changed-text``, ``correct_judgment``, a
new pool or job). A refused add, change or delete is an admin message on the admin's
own page, never a bare 403.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from nuggets_app import models as m


class RefusalMessages(admin.ModelAdmin):
    """A refused add, change or delete answers with the admin's own page and a
    message saying why and which command does it, instead of a bare 403."""

    # Why rows of this model are not written here, and what writes them.
    refusal = "Rows of this kind are written by the application's services only."

    def _changelist(self) -> HttpResponseRedirect:
        meta = self.model._meta
        return HttpResponseRedirect(
            reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        )

    def _change_page(self, object_id: str) -> HttpResponseRedirect:
        meta = self.model._meta
        return HttpResponseRedirect(
            reverse(
                f"admin:{meta.app_label}_{meta.model_name}_change", args=[object_id]
            )
        )

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        if not self.has_add_permission(request):
            messages.warning(request, f"Not added: {self.refusal}")
            return self._changelist()
        return super().add_view(request, form_url, extra_context)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: Any = None,
    ) -> HttpResponse:
        if request.method == "POST":
            obj = self.get_object(request, object_id)
            if obj is not None and not self.has_change_permission(request, obj):
                messages.warning(request, f"Not changed: {self.why(obj)}")
                return self._change_page(object_id)
        return super().change_view(request, object_id, form_url, extra_context)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        obj = self.get_object(request, object_id)
        if obj is not None and not self.has_delete_permission(request, obj):
            messages.warning(request, f"Not deleted: {self.why(obj)}")
            return self._change_page(object_id)
        if obj is not None and request.method == "POST":
            # Rows deleted with it (on_delete CASCADE) may be ones nobody deletes here.
            _, _, locked, protected = self.get_deleted_objects([obj], request)
            if locked or protected:
                names = ", ".join(sorted({*map(str, locked), *map(str, protected)}))
                messages.warning(
                    request,
                    f"Not deleted: deleting it would delete or orphan rows that are "
                    f"not deleted here ({names}).",
                )
                return self._change_page(object_id)
        return super().delete_view(request, object_id, extra_context)

    def why(self, obj: Model) -> str:
        """Why ``obj`` cannot be changed or deleted here."""
        return self.refusal


class ReadOnlyAdmin(RefusalMessages):
    """Shown, never added, changed or deleted here: one write path per kind of row."""

    refusal = (
        "judgments, nuggets, samples, pools' rows, match results, qrels and their "
        "history are written by the services, which check each change and keep its "
        "history (corrections: manage.py correct_judgment and the staff pages)."
    )

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class LockedOnceUsedAdmin(RefusalMessages):
    """Editable until a stored result is computed from the row, then shown only
    (except ``free_fields``, which no result reads) and never deleted here."""

    free_fields: tuple[str, ...] = ()
    allow_add = True
    # Why a used row is locked, and the command that changes it properly.
    locked_because = ""

    def used(self, obj: Any) -> bool:
        """Whether a stored result is computed from ``obj``."""
        raise NotImplementedError

    def why(self, obj: Model) -> str:
        return self.locked_because if self.used(obj) else self.refusal

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.allow_add and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and self.used(obj) and not self.free_fields:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and self.used(obj):
            return False
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and self.used(obj):
            return [
                f.name
                for f in [*obj._meta.fields, *obj._meta.many_to_many]
                if f.name not in self.free_fields
            ]
        return super().get_readonly_fields(request, obj)

    def get_actions(self, request: HttpRequest) -> Any:
        # Deleting in bulk would pass over the per-row lock; one row at a time.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(m.Collection)
class CollectionAdmin(LockedOnceUsedAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    free_fields = ("description",)
    locked_because = (
        "a collection with judgments, nuggets or matching jobs keeps its name and "
        "grades (exports and figures name them); its relevance level is set on its "
        "staff page or with --relevance-level, and each job keeps its own."
    )

    def used(self, obj: m.Collection) -> bool:
        return (
            m.Judgment.objects.filter(topic__collection=obj).exists()
            or m.Nugget.objects.filter(topic__collection=obj).exists()
            or m.MatchJob.objects.filter(collection=obj).exists()
        )


@admin.register(m.Document)
class DocumentAdmin(LockedOnceUsedAdmin):
    list_display = ["docno", "collection", "title", "length_words"]
    list_filter = ["collection"]
    search_fields = ["docno", "title"]
    list_select_related = ["collection"]
    allow_add = False
    refusal = (
        "documents are imported (manage.py import_collection or the collection's "
        "upload page), which computes their text, lengths and sanitized HTML."
    )
    locked_because = (
        "a document that is judged, holds nuggets or was matched keeps its text here "
        "(nugget offsets and matched spans index into it): re-import it with "
        "manage.py import_collection --changed-text refuse|reanchor, which refuses "
        "or moves each nugget to its span text in the new text."
    )

    def used(self, obj: m.Document) -> bool:
        return (
            obj.judgments.exists()
            or m.Nugget.objects.filter(document=obj).exists()
            or m.MatchResult.objects.filter(document=obj).exists()
        )


@admin.register(m.Topic)
class TopicAdmin(LockedOnceUsedAdmin):
    list_display = ["qid", "collection", "title"]
    list_filter = ["collection"]
    search_fields = ["qid", "title"]
    allow_add = False
    refusal = "topics are imported (manage.py import_topics or the upload page)."
    locked_because = (
        "a topic with judgments or nuggets, or in a pool or a matching job, keeps "
        "its statement here (the model's features read it); import a corrected "
        "topic into a new collection, or add aspects on the judging page."
    )

    def used(self, obj: m.Topic) -> bool:
        return (
            obj.judgments.exists()
            or obj.nuggets.exists()
            or obj.match_jobs.exists()
            or m.PoolDocument.objects.filter(topic=obj).exists()
        )


@admin.register(m.Run)
class RunAdmin(LockedOnceUsedAdmin):
    list_display = ["name", "collection", "source_file", "created_at"]
    list_filter = ["collection"]
    search_fields = ["name"]
    allow_add = False
    refusal = "runs are imported (manage.py import_runs or the upload page)."
    locked_because = (
        "a pooled run keeps its name and entries here (pools, samples and every "
        "run's estimates are computed from them); import a corrected run under a "
        "new name."
    )

    def used(self, obj: m.Run) -> bool:
        return obj.pools.exists()


@admin.register(m.RunEntry)
class RunEntryAdmin(LockedOnceUsedAdmin):
    list_display = ["run", "topic", "document", "rank", "score"]
    list_filter = ["run"]
    raw_id_fields = ["run", "topic", "document"]
    allow_add = False
    refusal = RunAdmin.refusal
    locked_because = RunAdmin.locked_because

    def used(self, obj: m.RunEntry) -> bool:
        return obj.run.pools.exists()


@admin.register(m.Pool)
class PoolAdmin(LockedOnceUsedAdmin):
    list_display = ["name", "collection", "depth", "created_at"]
    list_filter = ["collection"]
    filter_horizontal = ["runs"]
    allow_add = False
    refusal = "pools are built (manage.py build_pool or the collection's staff page)."
    locked_because = (
        "a built pool keeps its depth, runs and name here: its documents, samples "
        "and jobs were computed from them; build a new pool instead."
    )

    def used(self, obj: m.Pool) -> bool:
        return (
            m.PoolDocument.objects.filter(pool=obj).exists()
            or obj.samples.exists()
            or m.MatchJob.objects.filter(pool=obj).exists()
        )


@admin.register(m.PoolDocument)
class PoolDocumentAdmin(ReadOnlyAdmin):
    list_display = ["pool", "topic", "document", "best_rank", "num_runs", "prior"]
    list_filter = ["pool"]
    raw_id_fields = ["pool", "topic", "document"]


@admin.register(m.Sample)
class SampleAdmin(ReadOnlyAdmin):
    list_display = ["name", "pool", "method", "size", "seed", "created_at"]
    list_filter = ["method"]


@admin.register(m.SampleDocument)
class SampleDocumentAdmin(ReadOnlyAdmin):
    list_display = [
        "sample",
        "topic",
        "document",
        "order",
        "inclusion_prob",
        "round",
        "round_prob",
        "known",
    ]
    list_filter = ["sample", "known"]
    raw_id_fields = ["sample", "topic", "document"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The whole queue, known answers interleaved in it included.
        return m.SampleDocument.queue.all()


@admin.register(m.Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = [
        "topic",
        "document",
        "relevance",
        "adjudicator",
        "version",
        "updated_at",
    ]
    list_filter = ["adjudicator"]
    raw_id_fields = ["topic", "document"]


@admin.register(m.Guidelines)
class GuidelinesAdmin(ReadOnlyAdmin):
    list_display = ["collection", "version", "author", "created_at"]
    list_filter = ["collection"]


@admin.register(m.KnownAnswer)
class KnownAnswerAdmin(ReadOnlyAdmin):
    list_display = ["topic", "document", "relevance", "source", "created_at"]
    list_filter = ["source"]
    raw_id_fields = ["topic", "document"]


@admin.register(m.Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["sample", "topic", "assessor", "created_at"]
    list_filter = ["sample", "assessor"]
    raw_id_fields = ["topic"]


@admin.register(m.Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = [
        "topic",
        "document",
        "assessor",
        "relevance",
        "active_seconds",
        "version",
        "updated_at",
    ]
    list_filter = ["assessor", "relevance"]
    raw_id_fields = ["topic", "document"]


@admin.register(m.Nugget)
class NuggetAdmin(ReadOnlyAdmin):
    list_display = [
        "text",
        "topic",
        "document",
        "assessor",
        "bank",
        "start",
        "end",
        "grade",
        "aspect",
    ]
    list_filter = ["assessor", "bank", "grade"]
    search_fields = ["text", "span_text"]
    raw_id_fields = ["topic", "document"]


@admin.register(m.NuggetBank)
class NuggetBankAdmin(LockedOnceUsedAdmin):
    list_display = ["name", "collection", "format", "source_file", "created_at"]
    list_filter = ["collection", "format"]
    search_fields = ["name", "source_file"]
    allow_add = False
    refusal = "nugget banks are imported (manage.py import_nuggets)."
    locked_because = (
        "a bank with nuggets keeps its name and source here (jobs and their pages "
        "name the bank their nuggets came from)."
    )

    def used(self, obj: m.NuggetBank) -> bool:
        return m.Nugget.objects.filter(bank=obj).exists()


@admin.register(m.Qrels)
class QrelsAdmin(ReadOnlyAdmin):
    list_display = ["name", "collection", "kind", "created_at"]
    list_filter = ["collection", "kind"]


@admin.register(m.Judge)
class JudgeAdmin(LockedOnceUsedAdmin):
    list_display = ["name", "collection", "kind", "model", "date", "used_at"]
    list_filter = ["collection", "kind"]
    search_fields = ["name", "model"]
    allow_add = False
    free_fields = ("notes",)
    refusal = (
        "judges are imported with their labels (manage.py import_judge_labels or "
        "the collection's judges page)."
    )
    locked_because = (
        "a judge whose labels an audit or a release read keeps its labels and "
        "description (only its notes change here); import a corrected file as a "
        "judge of another name."
    )

    def used(self, obj: m.Judge) -> bool:
        return obj.used_at is not None


@admin.register(m.JudgeLabel)
class JudgeLabelAdmin(ReadOnlyAdmin):
    list_display = ["judge", "topic", "docno", "grade", "score", "probabilities"]
    list_filter = ["judge"]
    raw_id_fields = ["judge", "topic", "document"]
    refusal = JudgeAdmin.refusal


@admin.register(m.QrelsEntry)
class QrelsEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "qrels",
        "topic",
        "document",
        "subtopic",
        "relevance",
        "method",
        "inclusion_prob",
    ]
    list_filter = ["qrels"]
    raw_id_fields = ["qrels", "topic", "document"]


@admin.register(m.MatchJob)
class MatchJobAdmin(LockedOnceUsedAdmin):
    list_display = [
        "__str__",
        "collection",
        "status",
        "k",
        "lam",
        "chunks_done",
        "chunks_total",
        "created_at",
    ]
    list_filter = ["status", "collection"]
    filter_horizontal = ["topics"]
    allow_add = False
    refusal = "jobs are launched (manage.py match or the Jobs page)."
    locked_because = (
        "a launched job keeps its parameters here: its results, model, pages and "
        "provenance were computed with them; cancel, resume or re-score it on its "
        "page (manage.py match --rescore keeps the earlier scorings), or launch a "
        "new job."
    )

    def used(self, obj: m.MatchJob) -> bool:
        return (
            obj.status == m.MatchJob.Status.DONE
            or obj.chunks.exists()
            or m.JobInference.objects.filter(job=obj).exists()
        )


@admin.register(m.MatchChunk)
class MatchChunkAdmin(ReadOnlyAdmin):
    list_display = ["job", "topic", "index", "status", "attempts", "heartbeat_at"]
    list_filter = ["status"]
    raw_id_fields = ["job", "topic"]


@admin.register(m.MatchResult)
class MatchResultAdmin(ReadOnlyAdmin):
    list_display = ["job", "topic", "document", "score", "nugget"]
    list_filter = ["job"]
    raw_id_fields = ["job", "topic", "document", "nugget"]


@admin.register(m.TaskRecord)
class TaskRecordAdmin(admin.ModelAdmin):
    list_display = ["pk", "kind", "status", "label", "collection", "started_by"]
    list_filter = ["kind", "status", "collection"]
    search_fields = ["label"]


@admin.register(m.WorkChange)
class WorkChangeAdmin(ReadOnlyAdmin):
    list_display = ["at", "kind", "object_id", "owner", "actor", "undone", "note"]
    list_filter = ["kind", "owner", "actor"]
    raw_id_fields = ["topic", "document"]


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class AssessorUserAdmin(RefusalMessages, UserAdmin):
    """Users as Django shows them, except that an assessor with judgments, nuggets
    or assignments keeps the username: exports and the history name it."""

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and (
            m.Judgment.objects.filter(assessor=obj).exists()
            or m.Nugget.objects.filter(assessor=obj).exists()
            or m.Assignment.objects.filter(assessor=obj).exists()
        ):
            fields.append("username")
        return fields
