"""Passages per CPU-second of the product's numpy forward pass on the first 200 DL19
passages with text (docs/results/semantic.md). Run from the repository root:
OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python lab/studies/semantic/numpy_speed.py LABEL DOCS
"""

import gzip
import json
import sys
import time

from nuggets_app.learning import embeddings as E

texts = []
with gzip.open(sys.argv[2], "rt") as f:
    for line in f:
        t = json.loads(line).get("text", "").strip()
        if t:
            texts.append(t)
        if len(texts) >= 200:
            break
enc = E.load_encoder()
enc.embed(texts[:4])
w, c = time.perf_counter(), time.process_time()
out = enc.embed(texts)
w, c = time.perf_counter() - w, time.process_time() - c
print(
    json.dumps(
        {
            "backend": "numpy " + sys.argv[1],
            "wall_per_s": round(200 / w, 1),
            "per_cpu_s": round(200 / c, 1),
        }
    )
)
