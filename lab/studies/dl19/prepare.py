"""Write the DL19 collection the simulation imports: the passages with text, plus an
empty-text placeholder for every judged or retrieved passage without text.

The placeholders let the 37 runs and the qrels import unchanged (every run is then
evaluated exactly as submitted), while nothing can match or retrieve them: they stand
for passages the assessor cannot read. Every judged-relevant passage has text, so a
placeholder never hides a relevant passage (data README, "Passages without text").

Usage: python lab/studies/dl19/prepare.py DATA_DIR OUT.jsonl.gz
"""

import gzip
import json
import sys
from pathlib import Path


def main(data: Path, out: Path) -> None:
    seen: set[str] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as sink:
        with gzip.open(data / "docs.jsonl.gz", "rt", encoding="utf-8") as docs:
            for line in docs:
                doc = json.loads(line)
                seen.add(doc["docno"])
                record = {"docno": doc["docno"], "title": "", "text": doc["text"]}
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
        with_text = len(seen)
        missing = 0
        with gzip.open(data / "missing_text.tsv.gz", "rt", encoding="utf-8") as rows:
            next(rows)
            for row in rows:
                docno = row.split("\t")[1]
                if docno not in seen:
                    seen.add(docno)
                    missing += 1
                    record = {"docno": docno, "title": "", "text": ""}
                    sink.write(json.dumps(record) + "\n")
    print(f"{with_text} passages with text, {missing} placeholders without text")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
