"""Django admin: every model visible and editable by staff."""

from django import forms
from django.contrib import admin

from nuggets_app import models as m
from nuggets_app.judging.services.judgments import JudgingError
from nuggets_app.judging.services.nuggets import nugget_span_check


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
class PoolDocumentAdmin(admin.ModelAdmin):
    list_display = ["pool", "topic", "document", "best_rank", "num_runs", "prior"]
    list_filter = ["pool"]
    raw_id_fields = ["pool", "topic", "document"]


@admin.register(m.Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ["name", "pool", "method", "size", "seed", "created_at"]
    list_filter = ["method"]


@admin.register(m.SampleDocument)
class SampleDocumentAdmin(admin.ModelAdmin):
    list_display = [
        "sample",
        "topic",
        "document",
        "order",
        "inclusion_prob",
        "round",
        "round_prob",
    ]
    list_filter = ["sample"]
    raw_id_fields = ["sample", "topic", "document"]


@admin.register(m.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["sample", "topic", "assessor", "created_at"]
    list_filter = ["sample", "assessor"]
    raw_id_fields = ["topic"]


@admin.register(m.Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = [
        "topic",
        "document",
        "assessor",
        "relevance",
        "active_seconds",
        "updated_at",
    ]
    list_filter = ["assessor", "relevance"]
    raw_id_fields = ["topic", "document"]


class NuggetAdminForm(forms.ModelForm):
    """Offsets checked as the assessor API checks them: inside the document's text,
    and ``span_text`` equal to the text at ``[start, end)``."""

    class Meta:
        model = m.Nugget
        fields = [
            "topic",
            "assessor",
            "document",
            "start",
            "end",
            "span_text",
            "text",
            "keywords",
            "grade",
            "aspect",
            "version",
        ]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        document, start, end = (data.get(n) for n in ("document", "start", "end"))
        if document is None or start is None or end is None:
            return data  # the field errors say what is missing
        try:
            nugget_span_check(
                document=document,
                start=start,
                end=end,
                span_text=data.get("span_text", ""),
            )
        except JudgingError as error:
            field = error.field if error.field in self.fields else None
            self.add_error(field, error.message)
        return data


@admin.register(m.Nugget)
class NuggetAdmin(admin.ModelAdmin):
    form = NuggetAdminForm
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
class QrelsAdmin(admin.ModelAdmin):
    list_display = ["name", "collection", "kind", "created_at"]
    list_filter = ["collection", "kind"]


@admin.register(m.QrelsEntry)
class QrelsEntryAdmin(admin.ModelAdmin):
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
class MatchChunkAdmin(admin.ModelAdmin):
    list_display = ["job", "topic", "index", "status", "attempts", "heartbeat_at"]
    list_filter = ["status"]
    raw_id_fields = ["job", "topic"]


@admin.register(m.MatchResult)
class MatchResultAdmin(admin.ModelAdmin):
    list_display = ["job", "topic", "document", "score", "nugget"]
    list_filter = ["job"]
    raw_id_fields = ["job", "topic", "document", "nugget"]


@admin.register(m.TaskRecord)
class TaskRecordAdmin(admin.ModelAdmin):
    list_display = ["pk", "kind", "status", "label", "collection", "started_by"]
    list_filter = ["kind", "status", "collection"]
    search_fields = ["label"]
