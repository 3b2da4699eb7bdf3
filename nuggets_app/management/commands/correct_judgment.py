"""``manage.py correct_judgment``: staff correct the grade of an assessor's judgment.

The correction goes through the judging service: the grade is checked against the
collection's grades, the judgment's version goes up (an open judging page meets it as
a change made elsewhere), and the history keeps who corrected it, when, from what to
what, and why.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.judging.services.judgments import JudgingError, judgment_correct
from nuggets_app.management.commands._base import only_one
from nuggets_app.models import Document, Topic


def _user(name: str, role: str):
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        raise CommandError(f"unknown {role} {name}")
    return user


class Command(BaseCommand):
    help = "Correct the grade of an assessor's judgment, keeping who did it in history."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--qid", required=True, help="topic id")
        parser.add_argument("--docno", required=True, help="document id")
        parser.add_argument("--assessor", required=True, help="whose judgment")
        parser.add_argument(
            "--relevance",
            required=True,
            help="the correct grade, or 'skip' for seen but not graded",
        )
        parser.add_argument(
            "--by", required=True, help="the staff member making the correction"
        )
        parser.add_argument("--note", default="", help="why (kept in the history)")
        parser.add_argument("--collection", help="collection, if the qid is ambiguous")

    def handle(self, *args, **options) -> None:
        staff = _user(options["by"], "staff member")
        if not staff.is_staff:
            raise CommandError(f"{staff} is not staff")
        assessor = _user(options["assessor"], "assessor")
        topics = Topic.objects.filter(qid=options["qid"]).select_related("collection")
        if options["collection"]:
            topics = topics.filter(collection__name=options["collection"])
        topic = only_one(
            topics,
            unknown=f"unknown topic {options['qid']}",
            several=f"several collections have a topic {options['qid']}; "
            "add --collection",
        )
        document = only_one(
            Document.objects.filter(
                collection=topic.collection, docno=options["docno"]
            ),
            unknown=f"unknown document {options['docno']} in {topic.collection}",
            several=f"several documents {options['docno']}",
        )
        raw = options["relevance"]
        try:
            relevance = None if raw == "skip" else int(raw)
        except ValueError:
            raise CommandError(f"--relevance {raw!r} is not a grade") from None
        try:
            judgment = judgment_correct(
                actor=staff,
                assessor=assessor,
                topic=topic,
                document=document,
                relevance=relevance,
                note=options["note"],
            )
        except JudgingError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"topic {topic.qid} document {document.docno} of {assessor}: "
            f"relevance {judgment.relevance} (version {judgment.version})"
        )
