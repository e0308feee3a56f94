# The two commands: `make demo` (set up + run the main job) and `make test` (all tests);
# `make test-fast` runs the unit tier while you work.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ENV := source scripts/env.sh

.PHONY: help demo test test-fast test-services up down setup venv pg migrate compact examples marts dist client bench bench-lineage bench-fields bench-search bench-pages bench-openlineage bench-metadata bench-storage bench-ingest-bounds bench-capture bench-tags bench-blast bench-export bench-column-accuracy bench-managed-pg bench-freshness lint clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

demo:  ## set up everything and run the main job on the embedded default, then print a summary
	@scripts/demo.sh

test:  ## run every test (installs what it needs): ruff, mypy, pytest
	@scripts/test.sh

test-fast:  ## ruff, import contracts, warm mypy + the unit tests (no PostgreSQL, Spark or Airflow), under 30 s
	@scripts/test.sh --fast

test-services:  ## the middle loop: every test on real services but the end-to-end ones (-m "not e2e")
	@scripts/test.sh --services

up:  ## start Airflow (standalone, with the plugin) on localhost in the background
	@scripts/airflow_up.sh

down:  ## stop every local service the project started (Airflow, PostgreSQL)
	@scripts/down.sh

setup: venv pg migrate  ## venvs, PostgreSQL, migrations, Airflow home
	@scripts/airflow_setup.sh

venv:  ## create/refresh the pinned virtual environments
	@scripts/bootstrap.sh

pg:  ## start the project-local PostgreSQL
	@scripts/pg.sh start

migrate: venv  ## apply warehouse migrations
	@$(ENV) && .venv/bin/python -m warehouse.db.migrate

examples: venv  ## run the example pipelines (RUNS=3)
	@$(ENV) && .venv/bin/python -m spark_jobs.examples --runs $${RUNS:-3}

compact: venv  ## run the compaction Spark job once, outside Airflow
	@$(ENV) && .venv/bin/python -m spark_jobs.compaction.job

marts: venv  ## dbt build of the marts and the search index rebuilt, outside Airflow
	@$(ENV) && .venv/bin/python -c "from warehouse.pipeline.dbt_build import build_marts; from lineage.settings import Settings; built = build_marts(Settings.from_env().database_url); print(built.output[-600:]); print(built.render())"

dist: venv  ## build the sdist and wheel (what an existing Airflow installs, with the pages' browser libraries) into dist/
	@test -f plugins/lineage_api/ui/node_modules/cytoscape/dist/cytoscape.min.js || { echo "dist: run make venv first (npm ci)" >&2; exit 1; }
	@mkdir -p .local && .venv/bin/python -m build --outdir dist . >.local/dist.log 2>&1 || { tail -30 .local/dist.log >&2; exit 1; }
	@ls dist/lineage_warehouse-*

client:  ## build the client wheel (what Spark jobs install: pip install dist/lineage_client-*.whl) into dist/
	@python3 -m pip wheel ./client --no-deps -w dist -q && rm -rf client/build client/*.egg-info && ls dist/lineage_client-*.whl

bench-lineage: venv pg  ## benchmark: dataset lineage walk at 1.44M runs, mart builds, compaction of that workload
	@$(ENV) && .venv/bin/python -m bench.lineage_walk

bench-fields: venv pg  ## benchmark: field lineage, 200 pipelines x 20 fields hourly for 30 days; a 500-operation record x 1,000 runs
	@$(ENV) && .venv/bin/python -m bench.field_lineage && .venv/bin/python -m bench.field_lineage_wide

bench-search: venv pg  ## benchmark: metadata search and suggest over 100k entities, 1M tags and properties
	@$(ENV) && .venv/bin/python -m bench.metadata_search

bench-pages: venv pg  ## benchmark: pages in headless Chromium (after make demo and make bench-lineage)
	@scripts/browser.sh && $(ENV) && .venv/bin/python -m bench.pages

bench-openlineage: setup  ## benchmark: OpenLineage over HTTP, a platform's hour (2,000 task runs x 3 events) by 16 clients
	@$(ENV) && .venv/bin/python -m bench.openlineage_ingest

bench-metadata: venv pg  ## benchmark: the metadata stage on OpenLineage schema facets, each change alone vs a chunk's unchanged ones together
	@$(ENV) && .venv/bin/python -m bench.program_metadata

bench-storage: venv pg  ## benchmark: what the warehouse stores for two days of a 2,000-task platform's OpenLineage events
	@$(ENV) && .venv/bin/python -m bench.storage

bench-ingest-bounds: setup  ## benchmark: what a hostile OpenLineage request costs (BENCH_ARGS="--baseline DIR": another checkout first)
	@$(ENV) && .venv/bin/python -m bench.ingest_bounds $${BENCH_ARGS:-}

bench-capture: venv  ## benchmark: automatic capture from PySpark, cost per write (10/50/200 operators) and a 20-write job with/without
	@$(ENV) && .venv/bin/python -m bench.spark_capture

bench-tags: venv pg  ## benchmark: tag propagation over the field benchmark's warehouse (run bench-fields first)
	@$(ENV) && .venv/bin/python -m bench.tag_propagation

bench-blast: venv pg  ## benchmark: the blast radius of a bad dataset at levels 5 (run bench-lineage first)
	@$(ENV) && .venv/bin/python -m bench.blast_radius

bench-export: venv pg  ## benchmark: OpenLineage export (events/s, memory) and Marquez's lineage graph vs ours (run bench-lineage first)
	@$(ENV) && .venv/bin/python -m bench.openlineage_out

bench-column-accuracy: venv  ## benchmark: column lineage precision, recall and kinds on labelled Spark cases (BENCH_ARGS="--only join", "--markdown")
	@$(ENV) && .venv/bin/python -m bench.column_accuracy $${BENCH_ARGS:-}

bench-freshness: setup  ## benchmark: write-to-visible under a real Airflow, 20 writes (BENCH_ARGS="--mode cron": one-minute schedule)
	@$(ENV) && .venv/bin/python -m bench.freshness $${BENCH_ARGS:-}

bench-managed-pg: venv  ## benchmark: plain vs TLS + password vs PgBouncer (transaction mode): connect, queries, compaction (EVENTS=100000)
	@scripts/pgbouncer.sh && $(ENV) && .venv/bin/python -m bench.managed_postgres --events $${EVENTS:-100000}

bench: venv pg  ## benchmark: compaction of 1M synthetic events (EVENTS=1000000; BENCH_ARGS="--events-per-file 8", "--noop-files 300000", "--against DIR")
	@$(ENV) && .venv/bin/python -m bench.compaction --events $${EVENTS:-1000000} $${BENCH_ARGS:-}

lint: venv  ## ruff + import contracts + mypy
	@.venv/bin/ruff check . && PYTHONPATH=.:plugins .venv/bin/lint-imports && .venv/bin/mypy

clean: down  ## stop services and delete local state (.local: PostgreSQL data, Airflow home, raw logs)
	@scripts/pg.sh destroy
	rm -rf .local
