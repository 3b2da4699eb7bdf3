"""Write the TREC TS assessors' nugget matches as a nugget bank in the project's JSONL:
one line per match placed in a pseudo-document (``doc_matches.jsonl.gz``) of a known
nugget, with the NIST nugget text, its importance as grade, and the match's offsets.
With ``--aspects`` each nugget is also its own aspect (``"aspect": nugget_id``), so
that the matches are the full subtopic qrels (docs/results/diversity.md).

Usage: python lab/studies/ts/bank.py TS_DATA_DIR OUT.jsonl [--aspects]
"""

import gzip
import json
import sys
from pathlib import Path


def main(data: Path, out: Path, aspects: bool = False) -> None:
    texts = {}
    with (data / "nuggets.jsonl").open(encoding="utf-8") as rows:
        for row in map(json.loads, rows):
            texts[(row["qid"], row["nugget_id"])] = row["text"]
    written = skipped = 0
    with (
        gzip.open(data / "doc_matches.jsonl.gz", "rt", encoding="utf-8") as rows,
        out.open("w", encoding="utf-8") as sink,
    ):
        for row in map(json.loads, rows):
            text = texts.get((row["qid"], row["nugget_id"]))
            if text is None or row["start"] is None or not text.strip():
                skipped += 1
                continue
            record = {
                "qid": row["qid"],
                "id": row["nugget_id"],
                "text": text,
                "grade": row["importance"],
                "docno": row["docno"],
                "start": row["start"],
                "end": row["end"],
            }
            if aspects:
                record["aspect"] = row["nugget_id"]
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    print(f"{written} placed matches written, {skipped} skipped (no offsets or nugget)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), aspects="--aspects" in sys.argv[3:])
