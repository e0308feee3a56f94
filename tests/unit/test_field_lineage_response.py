from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from lineage import ids
from warehouse.service.field_lineage_response import FieldKey, field_lineage, render_paths
from warehouse.service.field_lineage_rows import FlowRow, PathRow

T0 = datetime(2026, 11, 20, tzinfo=UTC)
SECONDS = int(T0.timestamp())


def at(hour: int) -> datetime:
    return T0.replace(hour=hour)


def path(field: str, *sources: FieldKey, kinds: dict[FieldKey, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A stored path of ``field``: one read of each source field, then ``create`` of the field
    (an input with its transformation when ``kinds`` gives one)."""
    kinds = kinds or {}
    return {
        "field": field, "origin": "create", "fingerprint": "unused by the answer",
        "operations": [
            {"id": "read", "type": "read", "name": "read", "inputs": [],
             "sources": [{"namespace": s.namespace, "type": "dataset", "name": s.dataset} for s in sources],
             "outputs": [s.field for s in sources]},
            {"id": "create", "type": "transform", "name": "create", "sources": [],
             "inputs": [{"field": s.field, "origin": "read", **({"transformation": kinds[s]} if s in kinds else {})}
                        for s in sources], "outputs": [field]},
        ],
        "sources": [{"namespace": s.namespace, "type": "dataset", "name": s.dataset, "field": s.field}
                    for s in sources],
    }


def row(key: FieldKey, fingerprint: str, stored: dict[str, Any], runs: list[str], first: int, last: int,
        descriptions: dict[str, str] | None = None, described: int = 0) -> PathRow:
    """A row as ``FieldLineageQueries.paths`` answers it: one operation set's path of a field."""
    return PathRow(key=key, path_fingerprint=fingerprint, path=stored, descriptions=descriptions or {},
                   described_at=at(described), runs=tuple(runs), programs=(), first_seen=at(first),
                   last_seen=at(last))


class Warehouse:
    """In-memory ``FieldLineageQueries``: rows per field, and which fields each field feeds.
    Records every call with the fields it was asked about."""

    def __init__(self, rows: list[PathRow], feeds: dict[FieldKey, list[FieldKey]] | None = None) -> None:
        self.rows, self.feeds = rows, feeds or {}
        self.calls: list[tuple[str, tuple[FieldKey, ...]]] = []

    def paths(self, keys: Sequence[FieldKey]) -> list[PathRow]:
        self.calls.append(("paths", tuple(keys)))
        return [r for r in self.rows if r.key in keys]

    def flows(self, key: FieldKey) -> list[FlowRow]:
        self.calls.append(("flows", (key,)))
        return []

    def fed_by(self, keys: Sequence[FieldKey]) -> list[FieldKey]:
        self.calls.append(("fed_by", tuple(keys)))
        return [fed for key in keys for fed in self.feeds.get(key, [])]


A, B, C, D, E = (FieldKey("ns", name, field) for name, field in
                 (("a", "x"), ("b", "y"), ("c", "z"), ("d", "w"), ("e", "v")))


def test_rows_of_one_path_merge_runs_times_and_the_latest_descriptions() -> None:
    stored = path("x", B)
    rows = [row(A, "fp-2", path("x", C), ["r4"], 9, 9),
            row(A, "fp-1", stored, ["r2", "r1"], 10, 12, {"read": "old"}, described=1),
            row(A, "fp-1", stored, ["r3", "r1"], 9, 13, {"read": "new", "create": "x from y"}, described=2)]
    rendered = render_paths(rows, [A, B])
    assert rendered[B] == []
    assert rendered[A] == [
        {"operations": [{**stored["operations"][0], "description": "new"},
                        {**stored["operations"][1], "description": "x from y"}],
         "sources": [{"namespace": "ns", "type": "dataset", "name": "b", "field": "y"}],
         "runs": ["r1", "r2", "r3"], "runCount": 3, "programs": [],
         "firstSeenInSeconds": SECONDS + 9 * 3600, "lastSeenInSeconds": SECONDS + 13 * 3600, "fingerprint": "fp-1"},
        {"operations": [{**path("x", C)["operations"][0], "description": ""},
                        {**path("x", C)["operations"][1], "description": ""}],
         "sources": [{"namespace": "ns", "type": "dataset", "name": "c", "field": "z"}],
         "runs": ["r4"], "runCount": 1, "programs": [],
         "firstSeenInSeconds": SECONDS + 9 * 3600, "lastSeenInSeconds": SECONDS + 9 * 3600, "fingerprint": "fp-2"},
    ]


def test_paths_are_ordered_by_first_run() -> None:
    rows = [row(A, "fp-1", path("x", B), ["r1"], 11, 11), row(A, "fp-2", path("x", C), ["r2"], 10, 10)]
    assert [p["fingerprint"] for p in render_paths(rows, [A])[A]] == ["fp-2", "fp-1"]


def test_a_view_draws_each_path() -> None:
    (rendered,) = render_paths([row(A, "fp", path("x", B), ["r1"], 1, 1)], [A], "simple")[A]
    assert rendered["graph"] == {
        "nodes": [{"id": "field.a.x", "field": "x", "dataset": "a", "kind": "field"},
                  {"id": "operation.read.y", "field": "y", "origin": "read", "kind": "source",
                   "sources": [{"namespace": "ns", "type": "dataset", "name": "b"}]}],
        "edges": [{"from": "operation.read.y", "to": "field.a.x", "operations": ["create"], "names": ["create"]}]}


def test_incoming_answer_without_levels_is_the_fields_paths_from_one_query() -> None:
    warehouse = Warehouse([row(A, "fp", path("x", B), ["r1"], 1, 2)])
    assert field_lineage(warehouse, A, SECONDS, SECONDS + 86400) == {
        "fieldName": "x", "startTimeInSeconds": SECONDS, "endTimeInSeconds": SECONDS + 86400,
        "direction": "incoming",
        "paths": [{"operations": [{**path("x", B)["operations"][0], "description": ""},
                                  {**path("x", B)["operations"][1], "description": ""}],
                   "sources": [{"namespace": "ns", "type": "dataset", "name": "b", "field": "y"}],
                   "runs": ["r1"], "runCount": 1, "programs": [], "firstSeenInSeconds": SECONDS + 3600,
                   "lastSeenInSeconds": SECONDS + 7200, "fingerprint": "fp"}],
        "upstream": [], "truncated": False}
    assert warehouse.calls == [("paths", (A,))]


# a.x <- b.y <- (c.z <- e.v, d.w); d.w and e.v have no lineage of their own.
UPSTREAM = [row(A, "fa", path("x", B), ["r1"], 3, 3), row(B, "fb", path("y", C, D), ["r2"], 2, 2),
            row(C, "fc", path("z", E), ["r3"], 1, 1)]


@pytest.mark.parametrize(("levels", "upstream", "asked", "truncated"), [
    (1, [], [(A,)], False),  # no walk asked for
    (2, [("b", "y", 1, ["fb"])], [(A,), (B,), (C, D)], True),  # c.z, with lineage, lies one level further
    (3, [("b", "y", 1, ["fb"]), ("c", "z", 2, ["fc"])], [(A,), (B,), (C, D), (E,)], False),
    (10, [("b", "y", 1, ["fb"]), ("c", "z", 2, ["fc"])], [(A,), (B,), (C, D), (E,)], False),
])
def test_upstream_follows_path_sources_and_stops_at_a_source_without_lineage(
        levels: int, upstream: list[tuple[str, str, int, list[str]]], asked: list[tuple[FieldKey, ...]],
        truncated: bool) -> None:
    warehouse = Warehouse(UPSTREAM)
    body = field_lineage(warehouse, A, 0, 1, levels=levels)
    assert body["truncated"] is truncated
    assert [p["fingerprint"] for p in body["paths"]] == ["fa"]
    assert [(u["dataset"], u["field"], u["level"], [p["fingerprint"] for p in u["paths"]])
            for u in body["upstream"]] == upstream
    assert all(u["namespace"] == "ns" for u in body["upstream"])
    # One query per level, over the whole level; d.w is asked once and not listed.
    assert warehouse.calls == [("paths", fields) for fields in asked]


def test_upstream_through_a_cycle_ends() -> None:
    warehouse = Warehouse([row(A, "fa", path("x", B), ["r1"], 1, 1), row(B, "fb", path("y", A), ["r2"], 1, 1)])
    body = field_lineage(warehouse, A, 0, 1, levels=100)
    assert [(u["dataset"], u["level"]) for u in body["upstream"]] == [("b", 1)]
    assert warehouse.calls == [("paths", (A,)), ("paths", (B,))]


S, R, T, T2, U, V = (FieldKey("ns", name, field) for name, field in
                     (("s", "a"), ("r", "q"), ("t", "b"), ("t", "c"), ("u", "d"), ("v", "e")))


def test_downstream_lists_fed_fields_with_only_their_paths_starting_at_the_frontier() -> None:
    rows = [row(T, "from-s", path("b", S), ["r1"], 1, 1), row(T, "from-r", path("b", R), ["r2"], 2, 2),
            row(T2, "c-from-r", path("c", R), ["r3"], 1, 1), row(U, "from-t", path("d", T), ["r4"], 3, 3),
            row(S, "loop", path("a", U), ["r5"], 4, 4), row(V, "from-t2", path("e", T2), ["r6"], 1, 1)]
    # t.c is fed by s.a according to the index, but none of its paths in the window starts there.
    warehouse = Warehouse(rows, {S: [T, T2], T: [U], T2: [V], U: [S]})
    body = field_lineage(warehouse, S, 0, 1, direction="outgoing", levels=10)
    assert list(body) == ["fieldName", "startTimeInSeconds", "endTimeInSeconds", "direction", "flows", "impacts",
                          "truncated"]
    assert [(i["namespace"], i["dataset"], i["field"], i["level"], [p["fingerprint"] for p in i["paths"]])
            for i in body["impacts"]] == [("ns", "t", "b", 1, ["from-s"]), ("ns", "u", "d", 2, ["from-t"])]
    # Two queries per level; t.c is not walked from (v.e never reached); s.a, the origin, ends the loop.
    # One query for where s.a went inside the records that read it (its flows), then two per level.
    assert warehouse.calls == [("flows", (S,)), ("fed_by", (S,)), ("paths", (T, T2)), ("fed_by", (T,)),
                               ("paths", (U,)), ("fed_by", (U,))]


def test_downstream_respects_the_level_bound() -> None:
    warehouse = Warehouse([row(T, "from-s", path("b", S), ["r1"], 1, 1), row(U, "from-t", path("d", T), ["r2"], 1, 1)],
                          {S: [T], T: [U]})
    body = field_lineage(warehouse, S, 0, 1, direction="outgoing", levels=1)
    assert [(i["dataset"], i["level"]) for i in body["impacts"]] == [("t", 1)]
    assert body["truncated"] is True  # u.d lies a level further: the walk looked to know
    assert warehouse.calls == [("flows", (S,)), ("fed_by", (S,)), ("paths", (T,)), ("fed_by", (T,)), ("paths", (U,))]
    two = field_lineage(Warehouse(warehouse.rows, {S: [T], T: [U]}), S, 0, 1, direction="outgoing", levels=2)
    assert [(i["dataset"], i["level"]) for i in two["impacts"]] == [("t", 1), ("u", 2)] and not two["truncated"]


INDIRECT = {"type": "INDIRECT", "subtype": "JOIN", "masking": False}
DIRECT = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}


def test_direct_only_narrows_each_path_and_merges_those_that_become_one() -> None:
    # Two operation sets: b.y joined on c.z, and b.y filtered by c.z; directly, both are x from b.y.
    rows = [row(A, "fp-1", path("x", B, C, kinds={B: DIRECT, C: INDIRECT}), ["r1"], 1, 1),
            row(A, "fp-2", path("x", B, C, kinds={B: DIRECT, C: {**INDIRECT, "subtype": "FILTER"}}), ["r2"], 2, 2),
            row(A, "fp-3", path("x", C, kinds={C: INDIRECT}), ["r3"], 3, 3)]
    assert [(p["fingerprint"], p["runs"]) for p in render_paths(rows, [A])[A]] == [
        ("fp-1", ["r1"]), ("fp-2", ["r2"]), ("fp-3", ["r3"])]
    (direct,) = render_paths(rows, [A], "detailed", transformations="direct")[A]
    assert (direct["runs"], direct["sources"]) == (["r1", "r2"], [{"namespace": "ns", "type": "dataset", "name": "b",
                                                                   "field": "y"}])
    assert direct["fingerprint"] not in ("fp-1", "fp-2")  # the fingerprint of what is shown
    assert [e["transformation"] for e in direct["graph"]["edges"]] == [DIRECT]


def test_direct_only_walks_upstream_through_direct_edges_only() -> None:
    # a.x <- b.y (direct), c.z (indirect); b.y and c.z have lineage of their own.
    warehouse = Warehouse([row(A, "fa", path("x", B, C, kinds={B: DIRECT, C: INDIRECT}), ["r1"], 3, 3),
                           row(B, "fb", path("y", D), ["r2"], 2, 2), row(C, "fc", path("z", E), ["r3"], 1, 1)])
    every = field_lineage(warehouse, A, 0, 1, levels=2)
    assert [u["dataset"] for u in every["upstream"]] == ["b", "c"]
    direct = field_lineage(warehouse, A, 0, 1, levels=2, transformations="direct")
    assert [(u["dataset"], u["level"]) for u in direct["upstream"]] == [("b", 1)]
    # the walk's own queries, then the look one level further (d.w, which has no lineage: not cut)
    assert warehouse.calls[-3:] == [("paths", (A,)), ("paths", (B,)), ("paths", (D,))]
    assert direct["truncated"] is False


def test_direct_only_impact_leaves_out_fields_the_origin_reaches_indirectly() -> None:
    # s.a feeds t.b directly and t.c only as a join key.
    warehouse = Warehouse([row(T, "b", path("b", S, kinds={S: DIRECT}), ["r1"], 1, 1),
                           row(T2, "c", path("c", S, R, kinds={S: INDIRECT}), ["r2"], 1, 1)], {S: [T, T2]})
    every = field_lineage(warehouse, S, 0, 1, direction="outgoing", levels=3)
    assert [(i["field"], i["paths"][0]["fingerprint"]) for i in every["impacts"]] == [("b", "b"), ("c", "c")]
    direct = field_lineage(warehouse, S, 0, 1, direction="outgoing", levels=3, transformations="direct")
    assert [(i["field"], i["paths"][0]["fingerprint"]) for i in direct["impacts"]] == [("b", "b")]


SECRET = FieldKey("hr", "salaries", "pay")


def test_a_caller_sees_nothing_of_an_unreadable_dataset_but_that_something_hidden_is_there() -> None:
    """a.x is made from b.y (readable) and hr.salaries.pay (not): no name of the hidden dataset
    or its fields survives in operations, sources, drawings or the upstream fields."""
    stored = path("x", B, SECRET)
    stored["operations"][0:1] = [  # one read per source, the hidden one named after what it reads
        {"id": "read", "type": "read", "name": "read", "inputs": [],
         "sources": [{"namespace": "ns", "type": "dataset", "name": "b"}], "outputs": ["y"]},
        {"id": "read pay", "type": "read", "name": "read salaries.pay", "inputs": [],
         "sources": [{"namespace": "hr", "type": "dataset", "name": "salaries"}], "outputs": ["pay", "bonus"]}]
    stored["operations"][2]["inputs"] = [{"field": "y", "origin": "read"}, {"field": "pay", "origin": "read pay"},
                                         {"field": "bonus", "origin": "read pay"}]
    rows = [row(A, "fa", stored, ["r1"], 1, 1, {"read pay": "reads the payroll"}),
            row(SECRET, "fs", path("pay", C), ["r2"], 1, 1), row(C, "fc", path("z", E), ["r3"], 1, 1)]
    for view in (None, "simple", "detailed"):
        body = field_lineage(Warehouse(rows), A, 0, 1, levels=3, view=view,
                             readable=lambda namespace, kind, name: namespace == "ns")
        text = repr(body)
        for secret in ("hr", "salaries", "pay", "bonus", "payroll"):
            assert secret not in text, (view, secret, text)
        (shown,) = body["paths"]
        assert [op["id"] for op in shown["operations"]] == ["read", "hidden:1", "create"]
        assert shown["operations"][1] == {"id": "hidden:1", "type": "read", "name": "hidden", "description": "",
                                          "sources": [{"namespace": "", "type": "hidden", "name": ""}],
                                          "inputs": [], "outputs": ["hidden"]}
        assert shown["operations"][2]["inputs"] == [{"field": "y", "origin": "read"},
                                                    {"field": "hidden", "origin": "hidden:1"}]
        assert shown["sources"] == [{"namespace": "ns", "type": "dataset", "name": "b", "field": "y"},
                                    {"namespace": "", "type": "hidden", "name": "", "field": ""}]
        # the walk went through the hidden field to c.z, which the caller may read
        assert [(u["namespace"], u["dataset"], u["field"], u["level"]) for u in body["upstream"]] == [
            ("", "hidden", "hidden", 1), ("ns", "c", "z", 2)]
        assert body["upstream"][0]["paths"] == []
        assert shown["fingerprint"] != "fa"  # the stored one would confirm a guess at the hidden names
    detailed = field_lineage(Warehouse(rows), A, 0, 1, view="detailed",
                             readable=lambda namespace, kind, name: namespace == "ns")["paths"][0]["graph"]
    assert {node["id"] for node in detailed["nodes"]} == {"field.a.x", "operation.read.y", "operation.hidden:1.hidden"}


def test_an_admin_sees_every_name() -> None:
    body = field_lineage(Warehouse([row(A, "fa", path("x", SECRET), ["r1"], 1, 1)]), A, 0, 1)
    assert body["paths"][0]["sources"] == [{"namespace": "hr", "type": "dataset", "name": "salaries", "field": "pay"}]


def unscoped(node_id: str) -> str:
    """An answer drawing's node id as a path's drawing names it (``operation.<set>.<op>.<field>``
    -> ``operation.<op>.<field>``, ``field.<namespace>.<dataset>.<field>`` -> ``field.<dataset>.<field>``)."""
    kind, _, *rest = ids.parse(node_id, 4)
    return ids.render((kind, *rest))


def drawing_of(body: dict[str, Any], listing: str = "impacts") -> tuple[set[str], set[str]]:
    """The node ids and edges (JSON text) of an answer's per-path drawings (taken off the paths)."""
    drawn = [path.pop("graph") for item in body[listing] for path in item["paths"]]
    return ({node["id"] for drawing in drawn for node in drawing["nodes"]},
            {repr(sorted(edge.items())) for drawing in drawn for edge in drawing["edges"]})


def answer_drawing(body: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The node ids and edges of an answer's one drawing, named as a path's drawing names them."""
    graph = body["graph"]
    assert [node["id"] for node in graph["nodes"]] == sorted({node["id"] for node in graph["nodes"]})  # each once
    edges = set()
    for edge in graph["edges"]:
        edges.add(repr(sorted({**edge, "from": unscoped(edge["from"]), "to": unscoped(edge["to"])}.items())))
    return {unscoped(node["id"]) for node in graph["nodes"]}, edges


def store_rows(*operations: dict[str, Any], destination: str = "out", namespace: str = "ns"
               ) -> tuple[list[PathRow], dict[FieldKey, list]]:
    """The rows a store answers for one record: each path's operations rebuilt from its set's, so
    the paths share their operation objects as the store's do, and named by their set; and which
    fields each source field feeds."""
    from lineage.model.field_paths import field_paths, normalize, path_fingerprint, path_operations
    from tests.unit.test_field_flows import record

    normalized = normalize({**record(*operations), "destination": {"name": destination}}, namespace)
    by_id = {operation.id: operation.identity() for operation in normalized.operations}
    rows, feeds = [], {}
    for found in field_paths(normalized):
        stored = found.to_dict()
        rebuilt = path_operations(by_id, [operation["id"] for operation in stored["operations"]], found.field)
        if path_fingerprint(found.field, found.origins, rebuilt) == stored["fingerprint"]:  # else as stored
            stored["operations"] = rebuilt
        stored["set"] = f"set-of-{namespace}.{destination}"
        key = FieldKey(namespace, destination, found.field)
        rows.append(row(key, stored["fingerprint"], stored, ["r1", "r2"], 1, 2))
        for source in stored["sources"]:
            feeds.setdefault(FieldKey(source["namespace"], source["name"], source["field"]), []).append(key)
    return rows, feeds


def wide_warehouse() -> tuple[Warehouse, list[FieldKey]]:
    """A wide record (fields f0..f8 read from ``wide``; a spine merging them one by one; out_i a
    rename of the spine after f_i, written to ``out``), as the store answers it: f0 feeds every field."""
    from tests.unit.test_field_flows import op, read, write

    operations, spine = [read("read", "wide", *(f"f{i}" for i in range(9)))], "f0"
    for i in range(1, 9):
        operations += [op(f"spine{i}", [spine, f"f{i}"], f"s{i}"), op(f"mix{i}", [f"s{i}"], f"o{i}")]
        spine = f"s{i}"
    operations.append(write("write", [f"o{i}" for i in range(1, 9)], *(f"out{i}" for i in range(1, 9))))
    rows, feeds = store_rows(*operations)
    return Warehouse(rows, feeds), sorted(feeds)


@pytest.mark.parametrize("view", ["simple", "detailed"])
def test_one_drawing_of_an_answer_is_the_union_of_its_paths_drawings_each_node_and_edge_once(view: str) -> None:
    warehouse, sources = wide_warehouse()
    widest = 0
    for source in sources:
        each = field_lineage(warehouse, source, 0, 1, direction="outgoing", view=view)
        one = field_lineage(warehouse, source, 0, 1, direction="outgoing", view=view, graph="answer")
        widest = max(widest, sum(len(item["paths"]) for item in each["impacts"]))
        assert drawing_of(each) == answer_drawing(one)
        assert each["impacts"] == one["impacts"]  # the same answer, but for the drawings
    assert widest == 8  # f0 reaches every field through the shared spine


def test_a_path_that_reads_its_own_field_again_is_drawn_whole_in_one_drawing() -> None:
    """w1 writes f, P reads that f again, and w2 writes f again from it, w3 writes g: f's path draws
    w1's output as its own field node, g's as an operation node; in either order the one drawing
    is the union of both (a walk that stopped at a node drawn for the other path lost edges)."""
    from tests.unit.test_field_flows import op, read, write

    rows, feeds = store_rows(read("r", "a", "s"), write("w1", ["s"], "f"), op("P", [("f", "w1")], "x"),
                             op("Q", ["x"], "y"), write("w2", ["y"], "f"), write("w3", ["y"], "g"))
    for order in (1, -1):
        warehouse = Warehouse(rows, {key: fed[::order] for key, fed in feeds.items()})
        (source,) = feeds
        each = field_lineage(warehouse, source, 0, 1, direction="outgoing", view="detailed")
        one = field_lineage(warehouse, source, 0, 1, direction="outgoing", view="detailed", graph="answer")
        assert [item["field"] for item in each["impacts"]] == ["f", "g"][::order]
        assert drawing_of(each) == answer_drawing(one)


@pytest.mark.parametrize("view", ["simple", "detailed"])
def test_one_drawing_keeps_the_operations_of_different_records_apart(view: str) -> None:
    """b.f -> a.f -> c.f: both records have a ``read`` and a ``create``. Drawn once, each record's
    operations are its own nodes (named in its set): the read of b does not feed c."""
    from tests.unit.test_field_flows import op, read, write

    rows_a, feeds_a = store_rows(read("read", "b", "f"), op("create", ["f"], "g"), write("write", ["g"], "f"),
                                 destination="a")
    rows_c, feeds_c = store_rows(read("read", "a", "f"), op("create", ["f"], "g"), write("write", ["g"], "f"),
                                 destination="c")
    warehouse = Warehouse(rows_a + rows_c, {**feeds_a, **feeds_c})
    source = FieldKey("ns", "b", "f")
    body = field_lineage(warehouse, source, 0, 1, direction="outgoing", view=view, levels=2, graph="answer")
    reads = [node for node in body["graph"]["nodes"] if node.get("sources")]
    assert sorted(node["sources"][0]["name"] for node in reads) == ["a", "b"]
    (read_of_b,) = [node["id"] for node in reads if node["sources"][0]["name"] == "b"]
    reached = {edge["to"] for edge in body["graph"]["edges"] if edge["from"] == read_of_b}
    assert "field.c.f" not in reached


@pytest.mark.parametrize("view", ["simple", "detailed"])
def test_one_drawing_keeps_fields_of_datasets_named_alike_in_two_namespaces_apart(view: str) -> None:
    from tests.unit.test_field_flows import op, read, write

    rows_1, feeds_1 = store_rows(read("read", "src", "x"), op("upper", ["x"], "y"), write("write", ["y"], "f"),
                                 destination="d", namespace="n1")
    n1_source = {"name": "read", "inputs": [{"source": {"namespace": "n1", "name": "src"}}], "outputs": ["x"]}
    rows_2, feeds_2 = store_rows(n1_source, op("lower", ["x"], "y"), write("write", ["y"], "f"),
                                 destination="d", namespace="n2")
    (source,) = {*feeds_1, *feeds_2}  # both read n1's src.x
    feeds = {source: [*feeds_1[source], *feeds_2[source]]}
    body = field_lineage(Warehouse(rows_1 + rows_2, feeds), source, 0, 1, direction="outgoing", view=view,
                         graph="answer")
    fields = [node["id"] for node in body["graph"]["nodes"] if node["kind"] == "field"]
    assert fields == [ids.render(("field", "n1", "d", "f")), ids.render(("field", "n2", "d", "f"))]
    assert len({(edge["to"]) for edge in body["graph"]["edges"] if edge["to"] in fields}) == 2


def test_one_simple_drawing_keeps_each_edges_transformations() -> None:
    """Two paths of a.x from b.y, one masked, one not: both edges stay."""
    masked = {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}
    plain = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}
    warehouse = Warehouse([row(A, "f1", path("x", B, kinds={B: masked}), ["r1"], 1, 1),
                           row(A, "f2", path("x", B, kinds={B: plain}), ["r2"], 2, 2)])
    body = field_lineage(warehouse, A, 0, 1, view="simple", graph="answer")
    assert sorted(edge["transformations"][0]["masking"] for edge in body["graph"]["edges"]) == [False, True]


def test_one_drawing_holds_only_the_paths_the_answer_shows() -> None:
    """The walk looks one level beyond ``levels`` to say ``truncated``: what it found there is
    neither in the answer nor in its drawing."""
    warehouse = Warehouse([row(A, "fa", path("x", B), ["r1"], 1, 1), row(C, "fc", path("z", A), ["r2"], 2, 2)],
                          feeds={B: [A], A: [C]})
    body = field_lineage(warehouse, B, 0, 1, direction="outgoing", view="detailed", graph="answer")
    assert body["truncated"] is True and [item["field"] for item in body["impacts"]] == ["x"]
    assert "graph" not in body["impacts"][0]["paths"][0]
    assert {unscoped(node["id"]) for node in body["graph"]["nodes"]} == {"field.a.x", "operation.read.y"}


def test_one_drawing_names_nothing_a_caller_cannot_read() -> None:
    stored = path("x", B, SECRET)
    rows = [row(A, "fa", stored, ["r1"], 1, 1), row(SECRET, "fs", path("pay", C), ["r2"], 1, 1)]
    body = field_lineage(Warehouse(rows), A, 0, 1, levels=2, view="detailed", graph="answer",
                         readable=lambda namespace, kind, name: namespace == "ns")
    assert "salaries" not in repr(body) and "pay" not in repr(body)
    each = field_lineage(Warehouse(rows), A, 0, 1, levels=2, view="detailed",
                         readable=lambda namespace, kind, name: namespace == "ns")
    assert drawing_of(each, "upstream") == (set(), set())  # the hidden field: no path
    graph = each["paths"][0]["graph"]
    assert answer_drawing(body) == ({node["id"] for node in graph["nodes"]},
                                    {repr(sorted(edge.items())) for edge in graph["edges"]})
    assert "operation.hidden:1.hidden" in {node["id"] for node in graph["nodes"]}


def test_one_drawing_names_sets_by_number_never_by_their_fingerprint() -> None:
    """A set's fingerprint digests its whole record, the reads the caller may not see included: an
    answer's one drawing names each set it draws ``s1``, ``s2``, ... (a path shown with hidden reads
    is drawn in a set of its own), so no node id holds a stored fingerprint (a review found the
    hidden paths' node ids did)."""
    from tests.unit.test_field_flows import op, read, write

    rows, feeds = store_rows(read("r3", "ok", "k"), read("r1", "h1", "x"), op("A", ["x", "k"], "a"),
                             write("wf", ["a"], "f"), write("wg", ["k"], "g"), destination="d")
    def readable(namespace: str, kind: str, name: str) -> bool:
        return name != "h1"

    body = field_lineage(Warehouse(rows, feeds), FieldKey("ns", "ok", "k"), 0, 1, direction="outgoing",
                         view="detailed", graph="answer", readable=readable)
    stored = {row.path["set"] for row in rows} | {row.path_fingerprint for row in rows}
    named = [node["id"] for node in body["graph"]["nodes"]]
    named += [end for edge in body["graph"]["edges"] for end in (edge["from"], edge["to"])]
    assert stored and not [name for name in named for fingerprint in stored if fingerprint in name]
    scopes = {ids.parse(name, 4)[1] for name in named if name.startswith("operation.")}
    assert scopes == {"s1", "s2"}  # f's path, shown with a hidden read, apart from g's


def test_one_drawing_keeps_each_paths_hidden_reads_apart() -> None:
    """f reads h2 (hidden), g reads h1 and h2: each path numbers its hidden reads its own way
    (``hidden:1`` is h2 in f's path, h1 in g's), so a path shown with hidden reads is drawn in a
    scope of its own, and no node stands for two different reads."""
    from tests.unit.test_field_flows import op, read, write

    rows, feeds = store_rows(read("r3", "ok", "k"), read("r1", "h1", "x"), read("r2", "h2", "y"),
                             op("A", ["x"], "a"), op("B", ["y", "k"], "b"), write("wf", ["b"], "f"),
                             op("C", ["a", "b", "k"], "c"), write("wg", ["c"], "g"), destination="d")
    def readable(namespace: str, kind: str, name: str) -> bool:
        return name not in ("h1", "h2")

    body = field_lineage(Warehouse(rows, feeds), FieldKey("ns", "ok", "k"), 0, 1, direction="outgoing",
                         view="detailed", graph="answer", readable=readable)
    assert [item["field"] for item in body["impacts"]] == ["f", "g"]
    hidden = [node["id"] for node in body["graph"]["nodes"] if node.get("origin", "").startswith("hidden:")]
    each = field_lineage(Warehouse(rows, feeds), FieldKey("ns", "ok", "k"), 0, 1, direction="outgoing",
                         view="detailed", readable=readable)
    per_path = [node for item in each["impacts"] for path in item["paths"] for node in path["graph"]["nodes"]
                if node.get("origin", "").startswith("hidden:")]
    assert len(hidden) == len(per_path) == 3  # f's one hidden read, g's two: none shared


def test_the_runs_of_a_program_the_caller_may_not_read_are_not_listed() -> None:
    """A path recorded by two programs' runs: a caller who may read only one sees that one's runs
    (the other program itself is then shown hidden by ``hide_unreadable_programs``); run ids are
    the producer's text and can name their program (a review finding)."""
    from dataclasses import replace

    from warehouse.service.field_lineage_rows import ProgramLastRun

    programs = (ProgramLastRun("ns", "shop", "spark", "orders", SECONDS, ("orders.r1",)),
                ProgramLastRun("ns", "hr", "spark", "payroll_export", SECONDS, ("payroll_export.r2", "r3")))
    recorded = replace(row(A, "fp", path("x", B), ["orders.r1", "payroll_export.r2", "r3"], 9, 9), programs=programs)

    def readable_program(program: Any) -> bool:
        return program["program"] != "payroll_export"

    mine = field_lineage(Warehouse([recorded]), A, 0, 1, readable_program=readable_program)
    assert (mine["paths"][0]["runs"], mine["paths"][0]["runCount"]) == (["orders.r1"], 1)
    everything = field_lineage(Warehouse([recorded]), A, 0, 1)
    assert everything["paths"][0]["runs"] == ["orders.r1", "payroll_export.r2", "r3"]
    assert {p["program"]["program"] for p in mine["paths"][0]["programs"]} == {"orders", "payroll_export"}
