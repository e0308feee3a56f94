"""Benchmark: metadata search and suggest (``python -m bench.metadata_search``, ``make bench-search``).

Workload (issue 5): 100,000 entities (datasets, streams, applications, programs, fields) with
about 1,000,000 tags and properties: 4 tags each from a vocabulary of 2,000 (skewed: a few
tags are on many entities), 6 properties each (owner from 500 teams, tier, format,
retention, source system, a three-word description), and a 20-field schema on one dataset in
five. Names, descriptions and field names are made of generated words. The search index is
built as the marts stage builds it: the real dbt project's terms view, then the store's rebuild
of the index from it. Then it prints p50/p95 of:

- search by value prefix (a word's first 4-6 letters), by ``key:value`` prefix and by schema
  field (``field:emp*``), each returning its total and the first page;
- suggest for 2-4 letter prefixes, and after ``key:``;
- a tag added through the store the API uses, with its search index refresh;
- in the same run, the scan Marquez's search does (``name ILIKE '%q%'``, here over names and
  values so it finds what ours finds), and the ratio;
- last, one more rebuild of the whole index while an API writer adds a tag every 100 ms:
  how long the rebuild takes, and how long the writes made during it take (p50, p95 and the
  longest: what a rebuild makes a write wait), beside the same writes for 10 s before it, and
  the longest wait for the index's lock itself (taken shared every 20 ms, as a write takes it).
  ``--rebuild-only`` (with ``--reuse``) measures only that.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
import uuid
from collections.abc import Callable

import psycopg
from psycopg import sql

from bench.compaction import scratch_database
from bench.lineage_walk import p95, percentiles
from lineage.model.metadata_entity import entity
from lineage.settings import Settings, libpq_url
from warehouse.db import entity_keys, metadata_search, metadata_store
from warehouse.db.migrate import apply_migrations
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import Readable
from warehouse.service.search_query import parse_query

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi", "gu", "ha", "ja", "be",
             "co", "da", "el", "or", "un", "is", "at", "em"]
TYPES = ["dataset"] * 6 + ["stream", "application", "program", "field"]


def words(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    found: set[str] = set()
    while len(found) < count:
        found.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(found)


LOAD = """
with entities as (
    select i, (array['dataset','dataset','dataset','dataset','dataset','dataset','stream','application',
                     'program','field'])[1 + i %% 10] as entity_type,
           (%(words)s::text[])[1 + (i * 7919) %% cardinality(%(words)s::text[])] || '_' ||
           (%(words)s::text[])[1 + (i * 104729) %% cardinality(%(words)s::text[])] || '_' || i as name
    from generate_series(0::bigint, %(entities)s - 1) as i
), keyed as (
    select i, entity_type, name,
           case entity_type
             when 'dataset' then 'namespace=bench,dataset=' || name
             when 'stream' then 'namespace=bench,stream=' || name
             when 'application' then 'namespace=bench,application=' || name
             when 'program' then 'namespace=bench,application=app_' || (i %% 100) || ',type=spark,program=' || name
             else 'namespace=bench,dataset=ds_' || (i %% 1000) || ',field=' || name end as entity_key,
           case entity_type
             when 'program' then jsonb_build_array(jsonb_build_object('key','namespace','value','bench'),
                 jsonb_build_object('key','application','value','app_' || (i %% 100)),
                 jsonb_build_object('key','type','value','spark'), jsonb_build_object('key','program','value',name))
             when 'field' then jsonb_build_array(jsonb_build_object('key','namespace','value','bench'),
                 jsonb_build_object('key','dataset','value','ds_' || (i %% 1000)),
                 jsonb_build_object('key','field','value',name))
             else jsonb_build_array(jsonb_build_object('key','namespace','value','bench'),
                 jsonb_build_object('key',entity_type,'value',name)) end as entity
    from entities
), rows as (
    select k.*, 'tag' as kind,
           (%(tags)s::text[])[1 + floor(power(random(), 3) * cardinality(%(tags)s::text[]))::int] as key,
           '' as value
    from keyed k cross join generate_series(1, 4)
    union all
    select k.*, 'property', p.key, p.value
    from keyed k cross join lateral (values
        ('owner', 'team_' || (1 + floor(random() * 500))::int),
        ('tier', (array['bronze','silver','gold','platinum','diamond'])[1 + (k.i %% 5)]),
        ('format', (array['parquet','avro','orc','json','csv','delta'])[1 + (k.i %% 6)]),
        ('retention', (1 + k.i %% 365) || 'd'),
        ('source_system', (%(words)s::text[])[1 + (k.i * 31) %% cardinality(%(words)s::text[])] || '_system'),
        ('description', (%(words)s::text[])[1 + (k.i * 13) %% cardinality(%(words)s::text[])] || ' ' ||
                        (%(words)s::text[])[1 + (k.i * 17) %% cardinality(%(words)s::text[])] || ' ' ||
                        (%(words)s::text[])[1 + (k.i * 23) %% cardinality(%(words)s::text[])])) as p(key, value)
)
insert into lineage.metadata (entity_key, entity_type, namespace, entity, scope, kind, key, value, updated_by)
select entity_key, entity_type, 'bench', entity, 'USER', kind, key, value, 'bench' from rows
on conflict do nothing
"""

SCHEMAS = """
insert into lineage.metadata (entity_key, entity_type, namespace, entity, scope, kind, key, value, updated_by)
select entity_key, entity_type, namespace, entity, 'SYSTEM', 'property', 'schema',
       jsonb_build_object('fields', (
           select jsonb_agg(jsonb_build_object('name', (%(fields)s::text[])[1 + (abs(hashtext(entity_key)) + f * 37)
                                                                   %% cardinality(%(fields)s::text[])] || '_' || f,
                                               'type', 'string', 'nullable', true))
           from generate_series(1, 20) as f))::text,
       'bench'
from (select distinct entity_key, entity_type, namespace, entity from lineage.metadata
      where entity_type = 'dataset' and abs(hashtext(entity_key)) %% 5 = 0) as datasets
"""


def timed(samples: list[str], run: Callable[[str], object]) -> list[float]:
    spent = []
    for sample in samples:
        began = time.perf_counter()
        run(sample)
        spent.append(time.perf_counter() - began)
    return spent


def writes_during_a_rebuild(url: str, rng: random.Random, vocabulary: list[str], tags: list[str]) -> None:
    """Rebuild the whole index on a connection of its own while this one adds a tag through the
    API's store every 100 ms; print the rebuild's time and the writes' times, and those of the
    same writes for 10 s before it (the machine's own spread)."""
    rebuilt: dict[str, float | int | None] = {}

    def rebuild() -> None:
        with psycopg.connect(libpq_url(url), autocommit=True) as builder:
            began = time.perf_counter()
            rebuilt["rows"] = metadata_search.rebuild(builder)
            rebuilt["spent"] = time.perf_counter() - began

    def writes(conn: psycopg.Connection, going_on: Callable[[], bool]) -> list[float]:
        spent = []
        while going_on():
            time.sleep(0.1)
            name = f"{rng.choice(vocabulary)}_{uuid.uuid4().hex[:12]}"  # a new entity: every write changes it
            began = time.perf_counter()
            metadata_store.change(conn, entity([("namespace", "bench"), ("dataset", name)]), "USER", "bench",
                                  add_tags=[rng.choice(tags)])
            spent.append(time.perf_counter() - began)
        return spent

    lock_waits: list[float] = []

    def probe(going_on: Callable[[], bool]) -> None:
        """Take the index's lock as a write does (``metadata_search.lock_as_a_writer``) every 20 ms: the
        waits a rebuild makes, apart from the write's own work."""
        with psycopg.connect(libpq_url(url), autocommit=True) as prober:
            while going_on():
                began = time.perf_counter()
                with prober.transaction():
                    metadata_search.lock_as_a_writer(prober)
                lock_waits.append(time.perf_counter() - began)
                time.sleep(0.02)

    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("insert into lineage.namespaces (namespace) values ('bench') on conflict do nothing")
        until = time.perf_counter() + 10
        alone = writes(conn, lambda: time.perf_counter() < until)
        rebuilding = threading.Thread(target=rebuild)
        rebuilding.start()
        probing = threading.Thread(target=probe, args=(rebuilding.is_alive,))
        probing.start()
        during = writes(conn, rebuilding.is_alive)
        rebuilding.join()
        probing.join()
    print(f"{'API writes, no rebuild':28s} {percentiles(alone)}, longest {max(alone) * 1000:,.1f} ms ({len(alone)})")
    print(f"index rebuild with an API write every 100 ms: {rebuilt['spent']:.1f}s, {rebuilt['rows']:,} rows")
    print(f"{'API writes during it':28s} {percentiles(during)}, longest {max(during) * 1000:,.1f} ms ({len(during)})")
    print(f"{'the index lock, shared':28s} {percentiles(lock_waits)}, longest {max(lock_waits) * 1000:,.1f} ms "
          f"({len(lock_waits)} takes during it)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark metadata search and suggest.")
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--reuse", action="store_true", help="query the database a previous run loaded")
    parser.add_argument("--rebuild-only", action="store_true",
                        help="measure only a rebuild and the API writes made during it (with --reuse)")
    parser.add_argument("--propagated", type=int, default=200_000,
                        help="propagated tags added for the last measure: tags:<tag> before and after (0: skip)")
    parser.add_argument("--propagated-only", action="store_true", help="measure only that (with --reuse)")
    args = parser.parse_args(argv)
    base = Settings.from_env()
    vocabulary, tags, field_words = words(3000, 1), words(2000, 2), words(1500, 3)
    if args.reuse:
        url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_search"
    else:
        url = scratch_database(base.database_url, "lineage_bench_search")
        apply_migrations(url)
        began = time.perf_counter()
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute(LOAD, {"words": vocabulary, "tags": tags, "entities": args.entities})
            conn.execute(SCHEMAS, {"fields": field_words})
            entity_keys.backfill(conn)  # the grant keys the API's writes would have stored
            conn.execute("vacuum analyze lineage.metadata")
        print(f"loaded in {time.perf_counter() - began:.1f}s")
        began = time.perf_counter()
        built = build_marts(url, base, command="run", select="+metadata_search_terms")
        print(f"search index, full build (dbt view, then the rebuild): {time.perf_counter() - began:.1f}s, "
              f"{built.search_rows:,} rows")

    rng = random.Random(11)
    if args.propagated_only:
        tag_search_with_propagation(url, base, rng, tags, args.samples, args.propagated)
        return 0
    if args.rebuild_only:
        writes_during_a_rebuild(url, rng, vocabulary, tags)
        return 0
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        stored_row = conn.execute("select count(distinct entity_key), count(*) from lineage.metadata "
                                  "where not (scope = 'SYSTEM' and key = 'schema')").fetchone()
        index_row = conn.execute(sql.SQL("select count(*) from {}").format(
            sql.Identifier(*metadata_search.INDEX.split(".")))).fetchone()
        if stored_row is None or index_row is None:
            raise RuntimeError("a count(*) answered no row")
        (entities, stored), index_rows = stored_row, index_row[0]
        print(f"workload: {entities:,} entities, {stored:,} tags and properties, "
              f"{index_rows:,} search index rows (names, tags, properties, schema fields)")

        def search(query: str) -> dict[str, object]:
            return metadata_search.search(conn, parse_query(query), namespace="bench", limit=20)

        def suggest(prefix: str) -> object:
            return metadata_search.suggest(conn, prefix, namespace="bench", limit=10)

        def ilike(query: str) -> object:
            pattern = f"%{query}%"
            return conn.execute(
                """select entity_key, count(*) over () from (
                       select distinct entity_key from lineage.metadata
                       where namespace = 'bench' and (entity_key ilike %s or key ilike %s or value ilike %s)) as found
                   order by entity_key limit 20""", (pattern, pattern, pattern)).fetchall()

        value_terms = [w[:rng.randint(4, 6)] for w in rng.sample(vocabulary, args.samples)]
        key_terms = [f"owner:team_{rng.randint(1, 500)}" for _ in range(args.samples // 2)] + [
            f"source_system:{w[:4]}" for w in rng.sample(vocabulary, args.samples // 2)]
        field_terms = [f"field:{w[:rng.randint(3, 5)]}*" for w in rng.sample(field_words, args.samples)]
        suggest_terms = [w[:rng.randint(2, 4)] for w in rng.sample(vocabulary, args.samples)] + [
            "owner:", "tier:", "format:p", "owner:team_4"]
        for sample in value_terms[:3]:  # warm the caches once
            search(sample)
        print(f"sample totals: value prefix '{value_terms[0]}' -> {search(value_terms[0])['total']}, "
              f"'{key_terms[0]}' -> {search(key_terms[0])['total']}, "
              f"'{field_terms[0]}' -> {search(field_terms[0])['total']}")
        ours = {}
        for label, samples in (("search, value prefix", value_terms), ("search, key:value prefix", key_terms),
                               ("search, schema field", field_terms)):
            ours[label] = timed(samples, search)
            print(f"{label:28s} {percentiles(ours[label])}")
        print(f"{'suggest':28s} {percentiles(timed(suggest_terms, suggest))}")
        # A non-admin caller: READ on 1,000 datasets (and their fields), not on the namespace.
        granted = [row[0] for row in conn.execute("""select distinct entity_key from lineage.metadata
                                                     where entity_type = 'dataset' order by 1 limit 1000""")]
        reader = Readable(namespaces=(), entity_keys=tuple(granted), external=False)

        def search_as_reader(query: str) -> object:
            return metadata_search.search(conn, parse_query(query), namespace="bench", limit=20, readable=reader)

        def suggest_as_reader(prefix: str) -> object:
            return metadata_search.suggest(conn, prefix, namespace="bench", limit=10, readable=reader)

        print(f"{'search, 1,000 dataset grants':28s} {percentiles(timed(value_terms, search_as_reader))}")
        print(f"{'suggest, 1,000 grants':28s} {percentiles(timed(suggest_terms, suggest_as_reader))}")
        conn.execute("set jit = off")  # as ours runs: a fair comparison of the scans themselves
        theirs = timed(value_terms[: max(5, args.samples // 4)], ilike)
        print(f"{'ILIKE %q% scan (Marquez)':28s} {percentiles(theirs)}")
        mine = sorted(ours["search, value prefix"])
        tagged = [(f"{rng.choice(vocabulary)}_{number}", rng.choice(tags)) for number in range(args.samples)]
        # the namespace the API writes into must exist (the namespace guard); LOAD wrote rows only
        conn.execute("insert into lineage.namespaces (namespace) values ('bench') on conflict do nothing")

        def tag(sample: str) -> None:
            name, value = sample.split("|")
            metadata_store.change(conn, entity([("namespace", "bench"), ("dataset", name)]), "USER", "bench",
                                  add_tags=[value])

        writes = timed([f"{name}|{value}" for name, value in tagged], tag)
        print(f"{'API write + index refresh':28s} {percentiles(writes)}")
        print(f"ILIKE scan / prefix search, p50: {sorted(theirs)[len(theirs) // 2] / mine[len(mine) // 2]:.0f}x")
    writes_during_a_rebuild(url, rng, vocabulary, tags)
    if args.propagated:
        tag_search_with_propagation(url, base, rng, tags, args.samples, args.propagated)
    return 0


# Propagated tags (issue 33) on fields f_1..f_20 of the workload's datasets, tags of its vocabulary,
# with the keys the core renders (the workload's names hold no ',', '=' or '\\').
PROPAGATED = """
    insert into lineage.propagated_tags
        (namespace, dataset_type, dataset, field, tag, origin_namespace, origin_type, origin_dataset, origin_field,
         levels, path, runs, first_seen, last_seen, window_start, window_end, field_key, field_details, dataset_key)
    select 'bench', 'dataset', d.name, 'f_' || g,
           (%(tags)s::text[])[1 + (hashtext(d.name || g) & 2147483647) %% cardinality(%(tags)s::text[])],
           'bench', 'dataset', 'origin', 'ssn', 1, '[]', '{}', now(), now(), now() - interval '30 days', now(),
           'namespace=bench,dataset=' || d.name || ',field=f_' || g,
           jsonb_build_array(jsonb_build_object('key', 'namespace', 'value', 'bench'),
                             jsonb_build_object('key', 'dataset', 'value', d.name),
                             jsonb_build_object('key', 'field', 'value', 'f_' || g)),
           'namespace=bench,dataset=' || d.name
    from (select distinct entity->1->>'value' as name from lineage.metadata
          where namespace = 'bench' and entity_type = 'dataset' order by 1 limit %(datasets)s) d
    cross join generate_series(1, 20) g
    on conflict do nothing"""


def tag_search_with_propagation(url: str, base: Settings, rng: random.Random, tags: list[str], samples: int,
                                rows: int) -> None:
    """``tags:<tag>`` (which finds assigned and propagated tags) before and after ``rows`` propagated
    tags join the search index, the same queries in one run: the p95 ratio (target at most 1.5x)."""
    queries = [f"tags:{tag}" for tag in rng.sample(tags, samples)]
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        def search(query: str) -> object:
            return metadata_search.search(conn, parse_query(query), namespace="bench", limit=20)

        conn.execute("delete from lineage.propagated_tags")
        build_marts(url, base, command="run", select="+metadata_search_terms")
        for query in queries[:3]:
            search(query)
        before = timed(queries, search)
        conn.execute(PROPAGATED, {"tags": tags, "datasets": max(1, rows // 20)})
        added = conn.execute("select count(*) from lineage.propagated_tags").fetchone()
    build_marts(url, base, command="run", select="+metadata_search_terms")  # the index, with them
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        def search_again(query: str) -> object:
            return metadata_search.search(conn, parse_query(query), namespace="bench", limit=20)

        for query in queries[:3]:
            search_again(query)
        after = timed(queries, search_again)
    print(f"{'tags:<tag>, assigned only':28s} {percentiles(before)}")
    print(f"{'tags:<tag>, with propagated':28s} {percentiles(after)}   "
          f"({added[0] if added else 0:,} propagated tags)")
    print(f"  p95 ratio with / without: {p95(after) / p95(before):.2f}x (target at most 1.5x)")


if __name__ == "__main__":
    raise SystemExit(main())
