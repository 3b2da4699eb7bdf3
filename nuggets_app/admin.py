"""Django admin: every model visible to staff; human work and statistical rows only
visible.

Judgments, nuggets and their history, assignments, samples and their inclusion
probabilities, pool rows, match results and chunks, and qrels are written by the
services alone, which check each change and keep derived data in step (a nugget's
version and embedding, a design's inclusion probabilities). Staff correct them with
``manage.py correct_judgment`` and the staff pages, which use the same services and
leave history.
"""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from nuggets_app import models as m


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shown, never added, changed or deleted here: one write path per kind of row."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(m.Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(m.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docno", "collection", "title", "length_words"]
    list_filter = ["collection"]
    search_fields = ["docno", "title"]
    list_select_related = ["collection"]


@admin.register(m.Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["qid", "collection", "title"]
    list_filter = ["collection"]
    search_fields = ["qid", "title"]


class RunEntryInline(admin.TabularInline):
    model = m.RunEntry
    raw_id_fields = ["topic", "document"]
    extra = 0
    max_num = 0
    show_change_link = False


@admin.register(m.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "source_file", "created_at"]
    list_filter = ["collection"]
    search_fields = ["name"]


@admin.register(m.RunEntry)
class RunEntryAdmin(admin.ModelAdmin):
    list_display = ["run", "topic", "document", "rank", "score"]
    list_filter = ["run"]
    raw_id_fields = ["run", "topic", "document"]


@admin.register(m.Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "depth", "created_at"]
    list_filter = ["collection"]
    filter_horizontal = ["runs"]


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
class NuggetBankAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "format", "source_file", "created_at"]
    list_filter = ["collection", "format"]
    search_fields = ["name", "source_file"]


@admin.register(m.Qrels)
class QrelsAdmin(ReadOnlyAdmin):
    list_display = ["name", "collection", "kind", "created_at"]
    list_filter = ["collection", "kind"]


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
class MatchJobAdmin(admin.ModelAdmin):
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
