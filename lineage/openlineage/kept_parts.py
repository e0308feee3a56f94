"""A kept OpenLineage RunEvent in parts, and back (the warehouse's ``lineage.openlineage_events``
and ``lineage.openlineage_parts``, migration 0041).

A platform's producers send the same job, datasets and facets in every event of every run (a
task's START, RUNNING and COMPLETE, then again each hour); kept whole, they were most of the
warehouse's growth. An event is kept as its *skeleton*: its own ``eventType``, ``eventTime`` and
``run`` with each run facet replaced by a part id, and ``_body``, the id of the part holding
everything else (producer, schemaURL, job, inputs, outputs, any other key), whose job and each
input and output (a dataset with its facets) are parts again, named by id. A part's id is the
MD5 of the run's warehouse namespace and the part's canonical JSON (keys sorted), as a UUID: the
same part of the same namespace is stored once, and a namespace's cleanup can remove the parts
only its runs used. ``assembled`` puts an event back together, exactly as it came.

What the kept row holds already is left out of its skeleton (``slimmed``, migration 0042): the
``run``'s ``runId`` when it is the id of the run the row belongs to, and the ``eventTime`` when
it is the row's time as ``rendered_time`` writes it (``isoformat`` in UTC, what Python producers
such as Airflow's provider send); any other text of either stays as it came.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

BODY = "_body"  # the skeleton's key naming its body (every other key of the event is in the body)
_OWN = ("eventType", "eventTime", "run")
_SIDES = ("inputs", "outputs")


def part_id(namespace: str, part: Any) -> str:
    """The id of ``part`` kept for runs of ``namespace`` (a UUID's text, as PostgreSQL writes it)."""
    try:
        canonical = orjson.dumps(part, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits (PostgreSQL gives one back for a large number), ...
        canonical = json.dumps(part, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return md5_uuid(namespace.encode() + b"|" + canonical)


def md5_uuid(data: bytes) -> str:
    """PostgreSQL's ``md5(data)::uuid`` as its text: how parts, and kept events (by their event
    id, migration 0046), are keyed."""
    digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"


def split(namespace: str, event: Mapping[str, Any], *, run_id: str | None = None,
          event_time: datetime | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``event`` as a skeleton, and its parts by id; ``slimmed`` when the row keeping it holds
    ``run_id`` and ``event_time``."""
    parts: dict[str, Any] = {}

    def named(part: Any) -> str:
        key = part_id(namespace, part)
        parts[key] = part
        return key

    body = {key: value for key, value in event.items() if key not in _OWN}
    if "job" in body:
        body["job"] = named(body["job"])
    for side in _SIDES:
        if isinstance(body.get(side), list):
            body[side] = [named(dataset) for dataset in body[side]]
    skeleton = {key: event[key] for key in _OWN if key in event}
    if facets := _run_facets(skeleton):
        skeleton["run"] = {**skeleton["run"], "facets": {name: named(facet) for name, facet in facets.items()}}
    skeleton[BODY] = named(body)
    return slimmed(skeleton, run_id=run_id, event_time=event_time), parts


def slimmed(skeleton: Mapping[str, Any], *, run_id: str | None = None,
            event_time: datetime | None = None) -> dict[str, Any]:
    """``skeleton`` without what a kept row holds itself: its ``run``'s ``runId`` when it is
    ``run_id``, its ``eventTime`` when it is ``rendered_time(event_time)``. ``assembled``, given the
    same two, puts them back."""
    slim = dict(skeleton)
    if BODY not in slim:  # an event kept whole stays whole
        return slim
    if event_time is not None and slim.get("eventTime") == rendered_time(event_time):
        del slim["eventTime"]
    run = slim.get("run")
    if run_id is not None and isinstance(run, dict) and run.get("runId") == run_id:
        slim["run"] = {key: value for key, value in run.items() if key != "runId"}
    return slim


def rendered_time(moment: datetime) -> str:
    """The one text of an event time a skeleton leaves out (``2026-12-05T02:00:00.123456+00:00``,
    no fraction for a whole second)."""
    return moment.astimezone(UTC).isoformat()


def assembled(skeleton: Mapping[str, Any], parts: Mapping[str, Any], *, run_id: str | None = None,
              event_time: datetime | None = None) -> dict[str, Any]:
    """The event ``split`` made ``skeleton`` of, whole again (``parts``: at least those it names,
    ``part_ids``; ``run_id`` and ``event_time``: those of the row keeping it, which ``slimmed`` may
    have left out). A skeleton without a body is an event kept whole, given back as it is."""
    if BODY not in skeleton:
        return dict(skeleton)
    event = dict(parts[skeleton[BODY]])
    if "job" in event:
        event["job"] = parts[event["job"]]
    for side in _SIDES:
        if isinstance(event.get(side), list):
            event[side] = [parts[key] for key in event[side]]
    event.update((key, value) for key, value in skeleton.items() if key != BODY)
    if facets := _run_facets(skeleton):
        event["run"] = {**skeleton["run"], "facets": {name: parts[key] for name, key in facets.items()}}
    if event_time is not None and "eventTime" not in skeleton:
        event["eventTime"] = rendered_time(event_time)
    run = event.get("run")
    if run_id is not None and isinstance(run, dict) and "runId" not in run:
        event["run"] = {"runId": run_id, **run}
    return event


def skeleton_part_ids(skeleton: Mapping[str, Any]) -> Iterator[str]:
    """The ids a skeleton names itself: its run facets' and its body's (the body names the rest:
    its job's, each input's and each output's, as ``lineage.openlineage_body_part_ids`` reads them)."""
    if BODY in skeleton:  # else an event kept whole: it names none
        yield from _run_facets(skeleton).values()
        yield skeleton[BODY]


def _run_facets(event: Mapping[str, Any]) -> dict[str, Any]:
    run = event.get("run")
    facets = run.get("facets") if isinstance(run, dict) else None
    return facets if isinstance(facets, dict) else {}
