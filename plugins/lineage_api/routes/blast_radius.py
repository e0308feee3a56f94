"""The blast radius of a bad dataset (issue 33): mark a dataset's writes over a time range as bad
(an incident), and see what they reached downstream, run by run, and what was rewritten since."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineage.errors import InvalidRequestError, NotFoundError
from lineage.ids import DataRef
from lineage.limits import check_levels
from lineage.model.metadata_entity import dataset_entity, program_entity
from lineage_api.deps import Caller, Connection, Namespace
from lineage_api.http_errors import answers
from lineage_api.models.blast_radius import BlastRadius, IncidentBody, IncidentRequest
from warehouse.db import blast_radius_store, entity_keys, incident_store
from warehouse.service.authorization import Privilege
from warehouse.service.blast_radius import blast_answer, incident_json, incident_ranges
from warehouse.service.timespec import parse_timespec, parse_window

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset:name}", responses=answers(404))


def _dataset_key(conn: Connection, namespace: str, dataset: str) -> int:
    key = entity_keys.dataset_key(conn, DataRef(namespace, "dataset", dataset))
    if key is None:
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")
    return key


@router.post("/incidents", status_code=201, response_model=IncidentBody, responses=answers(400, 403))
def record_incident(namespace: Namespace, dataset: str, body: IncidentRequest, caller: Caller,
                    conn: Connection) -> dict[str, Any]:
    """Mark the dataset's writes in [from, until) as bad (WRITE on the dataset): its blast radius
    then walks downstream from them."""
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.WRITE)
    _dataset_key(conn, namespace, dataset)
    start, end = parse_window(body.from_, body.until, names=("from", "until"))
    if start == end:
        raise InvalidRequestError("from and until are the same moment: no write lies between them")
    return incident_json(incident_store.record(conn, namespace, "dataset", dataset, start, end, body.reason,
                                                caller.principal))


@router.get("/incidents", response_model=list[IncidentBody])
def list_incidents(namespace: Namespace, dataset: str, caller: Caller, conn: Connection) -> list[dict[str, Any]]:
    """The dataset's incidents, oldest first (READ on the dataset)."""
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.READ)
    return [incident_json(item) for item in incident_store.incidents_of(conn, namespace, "dataset", dataset)]


@router.get("/blast-radius", response_model=BlastRadius)
def blast_radius(namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                 levels: Annotated[int, Query(description="runs away, 1 to LINEAGE_LIMIT_LEVELS (100)")] = 5,
                 since: Annotated[str | None, Query(description="only the bad writes at or after this time (epoch "
                                                                "seconds or now-<n><s|m|h|d>)")] = None,
                 ) -> dict[str, Any]:
    """What the dataset's bad writes (its incidents' ranges) reached: level 1, the runs that read
    a version a bad write produced (before the next write replaced it) and the datasets they
    wrote; level 2, the runs that read those; and so on. Each affected dataset is ``recovered``
    when its latest write came from a run outside the blast (it holds good data again), else
    ``stillAffected``. READ on the dataset; runs and datasets the caller may not read are left
    out and counted in ``hidden``. ``since`` leaves out the bad writes before it. 404 when the
    dataset has no incident."""
    check_levels(levels)
    floor = None if since is None else parse_timespec(since, name="since")
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.READ)
    key = _dataset_key(conn, namespace, dataset)
    incidents = incident_store.incidents_of(conn, namespace, "dataset", dataset)
    if not incidents:
        raise NotFoundError(f"dataset {dataset!r} has no incident: mark its bad writes first "
                            "(POST .../incidents with from, until and reason)")
    ranges = incident_ranges([(item.bad_from, item.bad_until) for item in incidents], floor)
    found = blast_radius_store.reached(conn, key, ranges, levels)
    return blast_answer(
        DataRef(namespace, "dataset", dataset), [incident_json(item) for item in incidents], found.blast,
        found.nodes, found.latest, found.fields,
        readable_data=lambda data: caller.allows(dataset_entity(data.namespace, data.type, data.name), Privilege.READ),
        readable_run=lambda node: caller.allows(program_entity(node.run.program.namespace, node.run.program.application,
                                                               node.run.program.type, node.run.program.name),
                                                Privilege.READ))
