"""lineage.memo: what a worker remembers is bounded by entries and by bytes."""

from __future__ import annotations

from lineage.memo import BoundedMemo


def test_a_memo_keeps_what_it_is_given_within_its_entries_and_bytes() -> None:
    memo = BoundedMemo(entries=3, max_bytes=100, item_bytes=40)
    memo.put("a", 1, 30)
    memo.put("b", 2, 30)
    assert memo.get("a") == 1 and "b" in memo and memo.held_bytes() == 60
    memo.put("huge", 3, 41)  # over item_bytes: not kept, nothing cleared
    assert "huge" not in memo and memo.get("a") == 1
    memo.put("c", 3, 40)  # 60 + 40: the budget, not past it: kept
    assert memo.held_bytes() == 100 and len([k for k in "abc" if k in memo]) == 3
    memo.put("d", 4, 1)  # a fourth entry, or a byte more: cleared whole, then kept
    assert "a" not in memo and memo.get("d") == 4 and memo.held_bytes() == 1
    assert memo.get("missing") is None


def test_a_schema_memo_of_huge_facets_holds_no_more_than_its_budget(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """300 distinct 9,000-column schema facets held 559 MB before the memo had a byte budget; here
    a budget of 1 MB, and facets of 2,000 columns (about 80 KB of fields, as much derived)."""
    from lineage.naming.identity import NO_MAPPING
    from lineage.openlineage import mapping

    memo = BoundedMemo(entries=4096, max_bytes=1_000_000, item_bytes=512 * 1024)
    monkeypatch.setattr(mapping, "_OBSERVED_SCHEMAS", memo)
    for table in range(40):
        fields = [{"name": f"column_{table}_{i}", "type": "bigint"} for i in range(2000)]
        dataset = {"namespace": "postgres://db:5432", "name": f"t{table}", "facets": {"schema": {"fields": fields}}}
        for _ in range(2):  # derived, then remembered (or derived again after a clear): the same answer
            change = mapping.schema_change(dataset, NO_MAPPING)
            assert change is not None and [f["name"] for f in change["schema"]["fields"]][-1] == f"column_{table}_1999"
        assert 0 < memo.held_bytes() <= 1_000_000
