# Steps the studies' scripts share; each script sources this file (from the repository
# root) after `set -e`, then sets its own DATA, WORK and OUT.
# The lab's commands (simulate, evaluate_matcher, export_ltr) are installed with LAB=1.
export LAB=1
PY=${PY:-.venv/bin/python}

# import_collection NAME DOCS TOPICS: migrate the database of $DATA_DIR and import one
# collection and its topics.
import_collection() {
  $PY manage.py migrate -v0
  $PY manage.py import_collection --name "$1" "$2"
  $PY manage.py import_topics --collection "$1" "$3"
}

# shared_collection C: SRC (its folder under $DATA) and LEVEL (the grade that counts as
# relevant) of a shared collection; DL19 passages count grade >= 2 (the track's convention).
shared_collection() {
  if [ "$1" = dl19 ]; then
    SRC="$DATA/trec-dl19-passage"; LEVEL=2
  else
    SRC="$DATA/$1"; LEVEL=1
  fi
}

# import_once C: the collection C (its SRC from shared_collection) in the database of
# $DATA_DIR, imported on the first call only; DL19's passages are prepared first
# (dl19/prepare.py says why).
import_once() {
  mkdir -p "$DATA_DIR"
  [ -f "$DATA_DIR/imported" ] && return 0
  docs="$SRC/docs.jsonl.gz"
  if [ "$1" = dl19 ]; then
    docs="$DATA_DIR/docs.jsonl.gz"
    $PY lab/studies/dl19/prepare.py "$SRC" "$docs"
  fi
  import_collection "$1" "$docs" "$SRC/topics.jsonl"
  touch "$DATA_DIR/imported"
}

# keep_report DIR DEST: copy the report.json a simulation wrote in DIR to DEST (a file,
# or a folder ending in /), making its folder.
keep_report() {
  case $2 in */) mkdir -p "$2" ;; *) mkdir -p "$(dirname "$2")" ;; esac
  cp "$1/report.json" "$2"
}

# newest_job: the id of the matching job simulate last ran in the database of $DATA_DIR.
newest_job() {
  $PY manage.py shell -v0 -c \
    "from nuggets_app.models import MatchJob; print(MatchJob.objects.latest('pk').pk)"
}

# match_ts_year YEAR [OPTION ...]: evaluate_matcher against people's nugget matches on
# TREC TS 20YEAR (in $TS), at sentence then at document level, reports in $OUT.
match_ts_year() {
  year=$1
  shift
  for level in sentence document; do
    case $level in
      sentence) units=sentences gold=matches title=sentences ;;
      document) units=docs gold=doc_matches title=pseudo-documents ;;
    esac
    $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
      --units "$TS/$units.jsonl.gz" --gold "$TS/$gold.jsonl.gz" --level $level \
      --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 "$@" \
      --title "TREC TS 20$year, $title" --out "$OUT/ts$year-$level"
  done
}
