"""Automatic judges of a simulated collection, brought in through the product's importer.

``simulate --judge-labels NAME=FILE`` imports a judge's labels file as the judge
``NAME`` of the simulated collection (:func:`nuggets_app.judges.services.judge_labels_import`,
what ``import_judge_labels`` does); ``--judge-table NAME=FILE`` first draws a judge
for the simulation's pool from a measured table P(judge grade | people's grade)
(:func:`lab.maths.judge_tables.judge_draw`, with the simulation's seed) and imports
its qrels the same way. The job's fit then reads the collection's judges as any
user's job does. The collection's judges are those given: an earlier simulation's
judges are deleted first with ``--replace`` (a simulation without ``--replace`` on a
collection with other judges is refused).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from lab.maths.judge_tables import judge_draw, table_read
from lab.services.simulation_config import SimulationConfig
from nuggets_app.errors import DomainError
from nuggets_app.judges.services import judge_labels_import
from nuggets_app.models import Collection, Judge


class SimulationJudgeError(DomainError):
    """The simulation's judges cannot be brought in as asked; the message says why."""


def judge_spec(text: str) -> tuple[str, str]:
    """``NAME=FILE`` or ``FILE`` (the name is the file's stem) as (name, path)."""
    name, sep, path = text.partition("=")
    if not sep:
        return Path(text).stem.split(".")[0], text
    if not name or not path:
        raise SimulationJudgeError(f"judge {text!r}: expected NAME=FILE or FILE")
    return name, path


def simulation_judges(
    *,
    collection: Collection,
    pooled: Mapping[str, Sequence[str]],
    truth: Mapping[str, Mapping[str, int]],
    config: SimulationConfig,
) -> list[str]:
    """Make the collection's judges those of ``config`` (imported files, and judges
    drawn from tables for the pool ``pooled``); their names."""
    wanted = [*config.judge_labels, *config.judge_tables]
    names = [n for n, _ in wanted]
    if len(set(names)) < len(names):
        raise SimulationJudgeError(f"two judges share a name: {', '.join(names)}")
    existing = Judge.objects.filter(collection=collection)
    if existing.exists():
        if not config.replace:
            raise SimulationJudgeError(
                f"{collection.name} already has judges "
                f"({', '.join(existing.values_list('name', flat=True))}); replace "
                "them to run a simulation with its own"
            )
        existing.delete()
    for name, path in config.judge_labels:
        judge_labels_import(path=path, collection=collection, name=name)
    with tempfile.TemporaryDirectory() as work:
        for name, path in config.judge_tables:
            grades = judge_draw(
                table_read(path), pooled, truth, seed=config.seed, name=name
            )
            drawn = Path(work) / f"{name}.qrels"
            drawn.write_text(
                "".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(grades.items()))
            )
            judge_labels_import(path=drawn, collection=collection, name=name)
    return names
