"""A stored schema's fields as the export's ``schema`` facet nests them
(``warehouse.service.openlineage_export``), and an event with a number PostgreSQL gives back past
64 bits written all the same (``lineage.openlineage.event.event_json``)."""

from __future__ import annotations

import json

from lineage.openlineage.event import event_json
from warehouse.service.openlineage_export import _schema_fields


def test_paths_nest_and_a_field_whose_name_holds_a_slash_keeps_its_own_fields() -> None:
    """``geo/point`` came from an OpenLineage field of that name: no field ``geo`` is its parent,
    so it stays whole at the top, and its fields nest in it (they were dropped: a review finding)."""
    stored = [{"name": "id", "type": "long", "nullable": False}, {"name": "address", "type": "struct"},
              {"name": "address/city", "type": "string"}, {"name": "geo/point", "type": "struct"},
              {"name": "geo/point/lat", "type": "double"}, {"name": "geo/point/lon", "type": "double"}]
    assert _schema_fields(stored) == [
        {"name": "id", "type": "long", "nullable": False},
        {"name": "address", "type": "struct", "fields": [{"name": "city", "type": "string"}]},
        {"name": "geo/point", "type": "struct",
         "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}]


def test_a_number_past_64_bits_is_written_as_the_same_number() -> None:
    event = {"eventType": "COMPLETE", "facets": {"rows": 10**20, "ratio": 0.5, "name": "ünïcode"}}
    assert json.loads(event_json(event)) == event
    assert event_json({"a": 1}) == b'{"a":1}'
