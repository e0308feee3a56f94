"""The cleanup after namespace deletions, on real PostgreSQL: each deletion in its own
transaction (several pending deletions are cleaned in one run), and a namespace's records
matched by its key, never by a LIKE pattern a "_" in the name would widen."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lineage.model.metadata_entity import entity
from warehouse.db import metadata_store, namespace_store
from warehouse.db.connection import connect
from warehouse.pipeline import namespace_cleanup

NAMESPACES = ("a_b", "a1b", "aXb", "c1", "c2")


def _history(url: str, namespace: str) -> dict[str, int]:
    """Change records and "later event wins" watermarks of the namespace's entities, the
    namespace entity's own included, found by exact key parts (no pattern)."""
    with connect(url) as conn:
        changes, watermarks = conn.execute(
            """select (select count(*) from lineage.metadata_changes where split_part(entity_key, ',', 1) = %(k)s),
                      (select count(*) from lineage.metadata_event_times
                       where split_part(entity_key, ',', 1) = %(k)s)""",
            {"k": f"namespace={namespace}"}).fetchone() or (0, 0)
    return {"changes": changes, "watermarks": watermarks}


@pytest.fixture
def populated(warehouse_db: str) -> str:
    """Five namespaces, each with a tagged namespace entity and dataset, and two watermarks."""
    with connect(warehouse_db, autocommit=True) as conn:
        for namespace in NAMESPACES:
            namespace_store.create_namespace(conn, namespace, None)
            for subject in (entity([("namespace", namespace)]), entity([("namespace", namespace), ("dataset", "d")])):
                metadata_store.change(conn, subject, "USER", "tester", add_tags=["pii"])
                conn.execute("""insert into lineage.metadata_event_times (entity_key, scope, kind, key, event_time)
                                values (%s, 'SYSTEM', 'tag', 'pii', now())""", (subject.render(),))
    return warehouse_db


def test_three_pending_deletions_are_cleaned_in_one_run_each_in_its_own_transaction(populated: str) -> None:
    with connect(populated, autocommit=True) as conn:
        for namespace in ("a_b", "c1", "c2"):
            assert namespace_store.delete_namespace(conn, namespace, "admin") is not None

    summaries = namespace_cleanup.clean_pending(populated)

    assert [s.namespace for s in summaries] == ["a_b", "c1", "c2"]
    for namespace in ("a_b", "c1", "c2"):
        assert _history(populated, namespace) == {"changes": 0, "watermarks": 0}
    assert [s.removed["metadata_changes"] for s in summaries] == [2, 2, 2]  # the namespace entity's own row too
    with connect(populated) as conn:
        assert conn.execute("select count(*) from lineage.namespace_deletions where removed is not null"
                            ).fetchone() == (3,)
    namespace_cleanup.finish(populated, [s.deletion_id for s in summaries])
    with connect(populated) as conn:
        assert namespace_cleanup.pending(conn) == []


def test_a_namespace_deleted_twice_before_one_cleanup_run_is_cleaned_once_per_deletion(populated: str) -> None:
    with connect(populated, autocommit=True) as conn:
        first = namespace_store.delete_namespace(conn, "c1", "admin")
        namespace_store.create_namespace(conn, "c1", None)
        metadata_store.change(conn, entity([("namespace", "c1"), ("dataset", "e")]), "USER", "tester",
                              add_tags=["recreated"])
        second = namespace_store.delete_namespace(conn, "c1", "admin")
    assert first is not None and second is not None

    summaries = namespace_cleanup.clean_pending(populated)

    assert [s.namespace for s in summaries] == ["c1", "c1"]
    assert len({s.deletion_id for s in summaries}) == 2
    assert _history(populated, "c1") == {"changes": 0, "watermarks": 0}
    assert sum(s.removed["metadata_changes"] for s in summaries) == 3  # two before the first, one between
    namespace_cleanup.finish(populated, [s.deletion_id for s in summaries])
    with connect(populated) as conn:
        assert namespace_cleanup.pending(conn) == []
    assert _history(populated, "c2") == {"changes": 2, "watermarks": 2}


@pytest.mark.parametrize("kept", ["a1b", "aXb"])
def test_cleaning_a_b_leaves_namespaces_its_name_would_match_as_a_like_pattern_whole(populated: str,
                                                                                      kept: str) -> None:
    before = _history(populated, kept)
    assert before == {"changes": 2, "watermarks": 2}
    with connect(populated, autocommit=True) as conn:
        namespace_store.delete_namespace(conn, "a_b", "admin")

    namespace_cleanup.clean_pending(populated)

    assert _history(populated, "a_b") == {"changes": 0, "watermarks": 0}
    assert _history(populated, kept) == before


def test_clean_refuses_a_connection_inside_a_transaction(populated: str) -> None:
    with connect(populated) as conn, pytest.raises(ValueError, match="autocommit"):
        namespace_cleanup.clean(conn, 1, "a_b", datetime.now(UTC))


def test_declared_accesses_of_a_deleted_namespace_s_programs_and_to_its_datasets_are_removed(populated: str) -> None:
    """Declared lineage (an OpenLineage JobEvent's) goes with the namespace of its program or of
    its dataset, and so do the program and the dataset it alone kept."""
    with connect(populated, autocommit=True) as conn:
        programs = {ns: conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                                        values (%s, 'dbt', 'openlineage', 'model') returning program_key""",
                                     (ns,)).fetchone()[0] for ns in ("c1", "a1b")}  # type: ignore[index]
        datasets = {ns: conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                                        values (%s, 'dataset', 'orders') returning dataset_key""",
                                     (ns,)).fetchone()[0] for ns in ("c1", "c2", "a1b")}  # type: ignore[index]
        for program, dataset in (("c1", "a1b"), ("a1b", "c2"), ("a1b", "a1b")):
            conn.execute("""insert into lineage.declared_accesses
                                (program_key, dataset_key, access, first_declared_at, declared_at, batch_id)
                                values (%s, %s, 'read', now(), now(), 'b')""",
                         (programs[program], datasets[dataset]))
        for program_key in programs.values():  # each program's latest declaration (migration 0045)
            conn.execute("insert into lineage.program_declarations values (%s, now())", (program_key,))
        for namespace in ("c1", "c2"):
            namespace_store.delete_namespace(conn, namespace, "admin")

    summaries = namespace_cleanup.clean_pending(populated)

    assert [s.removed["declared_accesses"] for s in summaries] == [1, 1]
    assert [s.removed["program_declarations"] for s in summaries] == [1, 0]  # c1's program's
    with connect(populated) as conn:
        left = conn.execute("""select p.namespace, d.namespace from lineage.declared_accesses a
                               join lineage.programs p using (program_key) join lineage.datasets d using (dataset_key)
                               """).fetchall()
        assert left == [("a1b", "a1b")]  # another namespace's program reading its own dataset stays
        assert conn.execute("select namespace from lineage.programs where program = 'model' order by 1"
                            ).fetchall() == [("a1b",)]
        assert conn.execute("""select p.namespace from lineage.program_declarations
                               join lineage.programs p using (program_key)""").fetchall() == [("a1b",)]
        assert conn.execute("select namespace from lineage.datasets where dataset = 'orders' order by 1"
                            ).fetchall() == [("a1b",)]
