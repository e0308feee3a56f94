"""Programs a caller cannot read, made anonymous in an answer (``field_hiding.hide_unreadable_programs``):
the same answer as a copy of every part gave, without copying or walking what holds no program."""

from __future__ import annotations

from typing import Any

import pytest

from warehouse.service.field_hiding import HIDDEN_PROGRAM, hide_unreadable_programs

pytestmark = pytest.mark.unit


def info(program: str, last: int) -> dict[str, Any]:
    return {"program": {"namespace": "ns", "application": "app", "type": "spark", "program": program,
                        "entity": "PROGRAM"}, "lastExecutedTimeInSeconds": last}


def copied(value: Any, readable: Any) -> Any:
    """The rule as it was first written: every part copied."""
    if isinstance(value, list):
        shown = [copied(item, readable) for item in value]
        hidden = [item for item in shown if isinstance(item, dict) and item.get("program") == HIDDEN_PROGRAM]
        return [item for item in shown if item not in hidden or item is hidden[0]]
    if not isinstance(value, dict):
        return value
    program = value.get("program")
    if isinstance(program, dict) and program.get("entity") == "PROGRAM" and program != HIDDEN_PROGRAM:
        return {**value, "program": program if readable(program) else HIDDEN_PROGRAM}
    return {key: copied(item, readable) for key, item in value.items()}


def answer() -> dict[str, Any]:
    shared = [info("public", 9), info("secret", 8), info("other secret", 7)]  # the rows of one set
    runs = [f"r{index}" for index in range(1000)]
    paths = [{"operations": [{"id": "read", "inputs": [], "sources": [{"namespace": "ns", "name": "d"}]}],
              "runs": runs, "runCount": 1000, "programs": shared, "graph": {"nodes": [{"id": "field.d.x"}]}}
             for _ in range(3)]
    return {"paths": paths, "impacts": [{"namespace": "ns", "paths": paths[:1]}],
            "incoming": [{"programs": [info("secret", 3)], "operations": []}]}


@pytest.mark.parametrize("readable", [lambda program: True, lambda program: "secret" not in program["program"],
                                      lambda program: False], ids=["all", "some", "none"])
def test_the_answer_is_the_one_a_copy_of_every_part_gave(readable: Any) -> None:
    assert hide_unreadable_programs(answer(), readable) == copied(answer(), readable)


def test_the_hidden_programs_of_one_list_merge_into_the_latest_and_nothing_readable_is_copied() -> None:
    body = answer()
    shown = hide_unreadable_programs(body, lambda program: "secret" not in program["program"])
    assert shown["paths"][0]["programs"] == [info("public", 9), {**info("secret", 8), "program": HIDDEN_PROGRAM}]
    assert shown["paths"][0]["runs"] is body["paths"][0]["runs"]  # run ids and operations are not walked
    assert shown["paths"][0]["operations"] is body["paths"][0]["operations"]
    assert shown["paths"][1]["programs"] is shown["paths"][0]["programs"]  # a shared list looked at once
    everything = answer()
    assert hide_unreadable_programs(everything, lambda program: True) is everything  # nothing to hide: as it is
