"""Run one simulation (as ``manage.py simulate`` does) and keep its estimator inputs.

Writes ``inputs.pickle`` (no report; with ``inputs_only`` the BM25 feedback baseline
and the job's estimates, which no estimator variant reads, are skipped): the sample's
prels, the job's cross-fitted p, the design (π of every pooled document), the pool,
the runs restricted to the pooled topics, the binary truth and the relevance level,
so that estimator variants can be compared on the very samples of the product's path
(:mod:`lab.studies.estimator_bias`) without simulating again.

Usage (DATA_DIR the collection's database, LAB=1):
  python -m lab.studies.simulate_dump COLLECTION QRELS OUT SIZE% SEED LEVEL [RUNS_DIR]
    [--semantic]

``--semantic``: the job's fit with the semantic features (``simulate --semantic``; the
semantic extra installed).
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nuggets_app.settings")
    import django

    django.setup()
    from lab.management.commands.simulate import Command, sample_size
    from lab.services import simulation
    from lab.services.simulation_config import SimulationConfig
    from nuggets_app.models import Collection

    semantic = "--semantic" in argv
    argv = [a for a in argv if a != "--semantic"]
    name, qrels, out, size, seed, level = argv[:6]
    collection = Collection.objects.get(name=name)
    count, fraction = sample_size(size)
    config = SimulationConfig(
        depth=100,
        sample_size=count,
        sample_fraction=fraction,
        seed=int(seed),
        relevance_level=int(level),
        replace=True,
        semantic=semantic,
        inputs_only=True,
    )
    runs = Command()._runs(collection, argv[6] if len(argv) > 6 else None)
    data = simulation.simulation_run(
        collection=collection, qrels_path=qrels, runs=runs, config=config
    )
    topics = set(data.pool)
    inputs = {
        "level": int(level),
        "prels": data.prels,
        "crossfit": data.crossfit,
        "design": data.design,
        "pool": data.pool,
        "runs": {
            r: {q: d for q, d in run.items() if q in topics}
            for r, run in data.runs.items()
        },
        "truth": data.truth,
        "human": data.human,
        "probabilities": data.probabilities,
    }
    Path(out).mkdir(parents=True, exist_ok=True)
    with open(Path(out) / "inputs.pickle", "wb") as fh:
        pickle.dump(inputs, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
