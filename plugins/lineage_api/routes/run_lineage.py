"""Run-level lineage: the runs upstream of a run (which produced what it read) or downstream
(which consumed what it wrote)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineage.errors import NotFoundError
from lineage.limits import check_levels, limits
from lineage.model.metadata_entity import dataset_entity, program_entity, program_run_entity
from lineage_api.deps import Caller, Connection, Namespace
from lineage_api.http_errors import answers
from lineage_api.links import entity_links
from lineage_api.models.run_lineage import RunLineageAnswer
from lineage_api.routes.lineage import RUNS, program_of
from warehouse.db.run_lineage_store import RunLineageQueries
from warehouse.service.authorization import Privilege
from warehouse.service.run_lineage import parse_direction, run_lineage_response, walk_runs

router = APIRouter(prefix="/v3/namespaces/{namespace}", responses=answers(404))


@router.get(RUNS + "/{run_id:name}/lineage", response_model=RunLineageAnswer)
def run_lineage(namespace: Namespace, application: str, program_type: str, program: str, run_id: str,
                caller: Caller, conn: Connection,
                direction: Annotated[str, Query(description="upstream (the runs that wrote what it read) or "
                                                            "downstream (the runs that read what it wrote)")
                                     ] = "upstream",
                levels: Annotated[int, Query(description="runs away, 1 to LINEAGE_LIMIT_LEVELS (100)")] = 3,
                ) -> dict[str, Any]:
    """Run-level lineage, level by level: upstream, for each dataset the run read, the run that
    wrote the version it read (the last write before the run's time), and that run's own upstream;
    downstream, the runs that read what it wrote before the next write replaced it. READ on the
    program; runs and datasets the caller cannot read are shown hidden. A walk cut by ``levels``
    or by LINEAGE_LIMIT_RUN_LINEAGE_RUNS says so (``truncated``)."""
    chosen = parse_direction(direction)
    check_levels(levels)
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    queries = RunLineageQueries(conn)
    origin = queries.run_key(namespace, application, program_type, program, run_id)
    if origin is None:
        raise NotFoundError(f"run {run_id!r} of {program_type} {application}.{program} not found")
    found = walk_runs(queries, origin, chosen, levels, limits().run_lineage_runs)
    nodes = queries.runs(sorted(found.levels))
    return run_lineage_response(
        found, nodes,
        readable_program=lambda run: caller.allows(program_of(run.program), Privilege.READ),
        readable_data=lambda data: caller.allows(dataset_entity(data.namespace, data.type, data.name),
                                                 Privilege.READ),
        links_of=lambda run: entity_links(program_run_entity(run.program.namespace, run.program.application,
                                                             run.program.type, run.program.name, run.run_id)))

