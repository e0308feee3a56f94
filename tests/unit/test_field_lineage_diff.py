"""Two windows' field lineage answers compared (pure core), over hand-written answers."""

from __future__ import annotations

from typing import Any

from warehouse.service.field_lineage_diff import differences, field_diff, kind_text

WINDOWS = {"start": 200, "end": 300, "baseStart": 100, "baseEnd": 200}
IDENTITY = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}
MASKED = {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}


def path(fingerprint: str, source: str, transformation: dict[str, Any] | None, name: str = "copy",
         runs: int = 1) -> dict[str, Any]:
    inputs = [{"field": "ssn", **({"transformation": transformation} if transformation else {})}]
    return {"fingerprint": fingerprint, "runCount": runs, "runs": [f"r{n}" for n in range(runs)],
            "firstSeenInSeconds": 1, "lastSeenInSeconds": 2,
            "sources": [{"namespace": "hr", "type": "dataset", "name": source, "field": "ssn"}],
            "operations": [{"name": "read", "inputs": [{"source": {"name": source}}]},
                           {"name": name, "inputs": inputs}, {"name": "write", "inputs": [{"field": "out"}]}]}


def incoming(*paths: dict[str, Any]) -> dict[str, Any]:
    return {"fieldName": "ssn_out", "direction": "incoming", "paths": list(paths)}


def test_an_unchanged_path_keeps_its_runs_on_both_sides_and_changed_only_drops_it() -> None:
    same = path("a", "users", IDENTITY, runs=2)
    body = field_diff(WINDOWS, incoming(same), incoming(path("a", "users", IDENTITY, runs=5)))
    [only] = body["paths"]
    assert (only["change"], only["current"]["runCount"], only["base"]["runCount"]) == ("unchanged", 2, 5)
    assert "replacedBy" not in only and body["summary"]["masked"] == 0
    assert field_diff(WINDOWS, incoming(same), incoming(same), changed_only=True)["paths"] == []


def test_a_gone_path_is_paired_with_the_new_one_sharing_most_sources() -> None:
    body = field_diff(WINDOWS, incoming(path("other", "elsewhere", None), path("b", "users", MASKED, "sha2")),
                      incoming(path("a", "users", IDENTITY)))
    gone = next(p for p in body["paths"] if p["change"] == "gone")
    assert gone["replacedBy"] == "b"
    assert gone["differences"]["transformationsChanged"][0]["summary"] == (
        "ssn: DIRECT/IDENTITY -> DIRECT/TRANSFORMATION masking")
    assert [(s["name"], s["change"]) for s in body["sources"]] == [("elsewhere", "added"), ("users", "unchanged")]
    assert body["summary"]["masked"] == 1


def test_differences_name_operations_and_a_kind_recorded_for_the_first_time() -> None:
    found = differences(path("a", "users", None), path("b", "users", IDENTITY, "cast"))
    assert (found["operationsAdded"], found["operationsRemoved"]) == (["cast"], ["copy"])
    assert found["transformationsChanged"][0]["summary"] == "ssn: none recorded -> DIRECT/IDENTITY"
    assert kind_text({"type": "INDIRECT", "subtype": "FILTER"}) == "INDIRECT/FILTER"


def test_outgoing_compares_the_fields_reached_and_their_paths() -> None:
    def outgoing(*reached: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        return {"fieldName": "ssn", "direction": "outgoing", "flows": [], "impacts": [
            {"namespace": "hr", "dataset": dataset, "field": "ssn_out", "level": 1, "paths": [found]}
            for dataset, found in reached]}

    body = field_diff(WINDOWS, outgoing(("report", path("a", "users", IDENTITY))),
                      outgoing(("report", path("a", "users", IDENTITY)), ("audit", path("c", "users", None))))
    assert [(r["dataset"], r["change"]) for r in body["reached"]] == [("audit", "removed"), ("report", "unchanged")]
    assert [(p["field"]["dataset"], p["change"]) for p in body["paths"]] == [("audit", "gone"), ("report", "unchanged")]
    assert body["summary"]["reached"] == {"added": 0, "removed": 1, "unchanged": 1}
