"""What the warehouse keeps of an OpenLineage event's facets beyond what ``openlineage_mapping``
turns into runs, accesses, field operations and schemas (pure; kept for export later).

- **Run hierarchy**: the ``parent`` run facet (``{"run": {"runId"}, "job": {"namespace", "name"},
  "root"?: {"run", "job"}}``) names the run's parent run and, optionally, its root run (an
  Airflow DAG run, a Spark application, a dbt command). Each is a run of the program its job is
  (``lineage.naming.identity.job_program``), so the link holds whether that run is ever seen or not;
  each is kept or skipped on its own (a damaged parent run keeps a valid root, and the reverse).
- **Facets kept as they are**: the event's run and job facets, and each dataset's facets, except
  those the warehouse stores in a form of their own (``parent``; ``schema``, ``columnLineage``,
  ``symlinks``). A facet that is not a JSON object (``null``, a list, a string) is skipped; one
  over ``MAX_FACET_BYTES`` is dropped with a warning naming it. Neither rejects the event.
- **Failed checks**: the ``dataQualityAssertions`` facet (an input facet in the specification;
  also read from a dataset's own facets) lists checks run on the version the run saw; those
  with ``success: false`` become the dataset's incident (``failed_assertions``).
- **Aliases**: the ``symlinks`` dataset facet names other identities of the same dataset (a Hive
  table and its storage location); they become the dataset's aliases, not datasets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from lineage.errors import InvalidEntityError
from lineage.naming.identity import NamespaceMap, dataset_identity, job_program
from lineage.openlineage.event import MAX_ID_LENGTH, is_uuid

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # what no run id of the raw format holds
MAX_FACET_BYTES = 65_536
MAX_FACET_NAME_LENGTH = 256
MAX_ALIASES = 100
PARENT_FACET = "parent"
SYMLINKS_FACET = "symlinks"
WAREHOUSE_RUN_FACET = "lineageWarehouse_run"  # run ids the export gave as UUIDs: {runId, parentRunId, rootRunId}
# An input facet of the export: {"access": "unknown"} for a dataset a run used in a way it did not
# say (OpenLineage has inputs and outputs only); the mapping reads it back.
WAREHOUSE_ACCESS_FACET = "lineageWarehouse_access"


def unknown_access(dataset: object) -> bool:
    """Whether an input carries the export's word that its access was unknown."""
    facets = dataset.get("inputFacets") if isinstance(dataset, Mapping) else None
    facet = facets.get(WAREHOUSE_ACCESS_FACET) if isinstance(facets, Mapping) else None
    return isinstance(facet, Mapping) and facet.get("access") == "unknown"
ASSERTIONS_FACET = "dataQualityAssertions"
MAX_ASSERTIONS = 100
MAX_ASSERTION_TEXT = 1024


def failed_assertions(dataset: object) -> list[dict[str, str]]:
    """The checks of a dataset's ``dataQualityAssertions`` facets (input facet or dataset facet)
    that failed: ``{"assertion", "column"?}``, each once, at most ``MAX_ASSERTIONS``. A damaged
    facet or entry (not an object, no assertion name, ``success`` not false) says nothing."""
    if not isinstance(dataset, Mapping):
        return []
    failed: dict[tuple[str, str], dict[str, str]] = {}
    for side in ("inputFacets", "facets"):
        facets = dataset.get(side)
        facet = facets.get(ASSERTIONS_FACET) if isinstance(facets, Mapping) else None
        assertions = facet.get("assertions") if isinstance(facet, Mapping) else None
        for item in assertions if isinstance(assertions, list) else []:
            if len(failed) == MAX_ASSERTIONS:
                return list(failed.values())
            if not isinstance(item, Mapping) or item.get("success") is not False:
                continue
            check = failed_check(item.get("assertion"), item.get("column"))
            if check is not None:
                failed.setdefault((check["assertion"], check.get("column", "")), check)
    return list(failed.values())


def failed_check(assertion: object, column: object) -> dict[str, str] | None:
    """A failed check as an incident records it (from OpenLineage or Great Expectations):
    ``{"assertion", "column"?}``, its texts without control characters and cut; None without an
    assertion name."""
    name, field_name = _plain(assertion), _plain(column)
    if name is None:
        return None
    return {"assertion": name, **({"column": field_name} if field_name else {})}


def _plain(value: object) -> str | None:
    """Text without control characters, cut to ``MAX_ASSERTION_TEXT``; None when nothing is left."""
    if not isinstance(value, str):
        return None
    return _CONTROL.sub(" ", value[:MAX_ASSERTION_TEXT * 2]).strip()[:MAX_ASSERTION_TEXT] or None


MAPPED_RUN_FACETS = frozenset({PARENT_FACET, WAREHOUSE_RUN_FACET})
MAPPED_DATASET_FACETS = frozenset({"schema", "columnLineage", SYMLINKS_FACET})  # dataQualityAssertions is also kept


@dataclass
class KeptFacets:
    """Facets worth keeping, by name, and the warnings about those dropped for their size."""

    facets: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def kept_facets(owner: Any, skip: frozenset[str], label: str) -> KeptFacets:
    """The facets of ``owner`` (a run, job or dataset of an event) to keep; ``label`` names the
    owner in warnings (``run``, ``job``, ``dataset s3://lake/a``)."""
    kept = KeptFacets()
    facets = owner.get("facets") if isinstance(owner, Mapping) else None
    if not isinstance(facets, Mapping):
        return kept
    for name, facet in facets.items():
        if name in skip or not isinstance(facet, Mapping) or not 0 < len(name) <= MAX_FACET_NAME_LENGTH:
            continue
        try:
            size = len(orjson.dumps(facet))
        except TypeError:  # text UTF-8 cannot encode (a lone surrogate): not storable
            continue
        if size > MAX_FACET_BYTES:
            kept.warnings.append(f"{label} facet {name[:80]!r} dropped: {size} bytes, over the "
                                 f"{MAX_FACET_BYTES}-byte limit")
            continue
        kept.facets[name] = facet
    return kept


def parent_links(event: Mapping[str, Any], namespaces: NamespaceMap) -> tuple[dict[str, Any], list[str]]:
    """``{"parent"?: run, "root"?: run}`` from the event's ``parent`` run facet (each run as
    ``{"namespace", "application", "program_type", "program", "run_id"}``), and warnings about
    what was damaged and skipped, or kept though the spec asks otherwise. The two runs stand
    alone: a damaged parent run (its ``run.runId`` missing or not text, its job missing) still
    links the run to a valid root, and a damaged root keeps the parent. A ``runId`` that is not a
    UUID is kept as sent, with a warning. No facet: ``({}, [])``."""
    run = event.get("run")
    facets = run.get("facets") if isinstance(run, Mapping) else None
    facet = facets.get(PARENT_FACET) if isinstance(facets, Mapping) else None
    if facet is None:
        return {}, []
    if not isinstance(facet, Mapping):
        return {}, ["parent facet skipped: it is not an object"]
    links: dict[str, Any] = {}
    warnings: list[str] = []
    try:
        links["parent"] = _run_of(facet, namespaces)
    except InvalidEntityError as exc:
        damaged: str | None = str(exc)
    else:
        damaged = None
    root = facet.get("root")
    if root is not None:
        try:
            links["root"] = _run_of(root, namespaces)
        except InvalidEntityError as exc:
            warnings.append(f"parent facet's root skipped: {exc}")
    if damaged is not None:
        warnings.insert(0, f"parent facet's parent run skipped: {damaged} (its root is kept)" if "root" in links
                        else f"parent facet skipped: {damaged}")
    kept_ids = warehouse_run_ids(event)
    for relation, key in (("parent", "parentRunId"), ("root", "rootRunId")):
        if relation in links and key in kept_ids:
            links[relation]["run_id"] = kept_ids[key]
    for relation, label in (("parent", "parent facet's run.runId"), ("root", "parent facet's root run.runId")):
        if relation in links and not is_uuid(links[relation]["run_id"]):
            warnings.append(f"{label} is not a UUID; kept as sent")
    return links, warnings


def warehouse_run_ids(event: Mapping[str, Any]) -> dict[str, str]:
    """The run ids a warehouse export kept in the ``lineageWarehouse_run`` run facet, by key
    (``runId``, ``parentRunId``, ``rootRunId``), for runs whose ids are no UUID: the export gave
    the spec a UUID derived from each, and the mapping reads the ids back. Only valid ids."""
    run = event.get("run")
    facets = run.get("facets") if isinstance(run, Mapping) else None
    facet = facets.get(WAREHOUSE_RUN_FACET) if isinstance(facets, Mapping) else None
    if not isinstance(facet, Mapping):
        return {}
    return {key: value for key in ("runId", "parentRunId", "rootRunId")
            if isinstance(value := facet.get(key), str) and 0 < len(value) <= MAX_ID_LENGTH
            and not _CONTROL.search(value)}


def _run_of(reference: Any, namespaces: NamespaceMap) -> dict[str, str]:
    """The run ``{"run": {"runId"}, "job": {"namespace", "name"}}`` names, as the warehouse keys runs."""
    if not isinstance(reference, Mapping):
        raise InvalidEntityError("it is not an object")
    run, job = reference.get("run"), reference.get("job")
    run_id = run.get("runId") if isinstance(run, Mapping) else None
    if run_id is None or run_id == "":
        raise InvalidEntityError("run.runId is missing")
    if not isinstance(run_id, str):
        raise InvalidEntityError(f"run.runId is not text (a JSON {_json_type(run_id)})")
    if len(run_id) > MAX_ID_LENGTH:
        raise InvalidEntityError(f"run.runId is over {MAX_ID_LENGTH} characters")
    if _CONTROL.search(run_id):
        raise InvalidEntityError("run.runId holds a control character")
    if not isinstance(job, Mapping):
        raise InvalidEntityError("job is missing")
    program = job_program(job.get("namespace"), job.get("name"), namespaces)
    return {"namespace": program.namespace, **program.run(run_id)}


def _json_type(value: Any) -> str:
    """The JSON type of a parsed value that is not text: boolean, number, object or array."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, Mapping):
        return "object"
    return "array" if isinstance(value, list) else type(value).__name__


def aliases(dataset: Mapping[str, Any], namespaces: NamespaceMap) -> list[dict[str, str]]:
    """The other identities the dataset's ``symlinks`` facet names, as datasets are named
    (``{"namespace", "name", "type"}``: warehouse namespace, rendered identity, the symlink's
    type such as TABLE); malformed identifiers, and the dataset's own identity, are skipped."""
    facets = dataset.get("facets")
    facet = facets.get(SYMLINKS_FACET) if isinstance(facets, Mapping) else None
    identifiers = facet.get("identifiers") if isinstance(facet, Mapping) else None
    own = dataset_identity(dataset.get("namespace"), dataset.get("name")).render()
    found: dict[str, dict[str, str]] = {own: {}}
    for item in identifiers if isinstance(identifiers, list) else []:
        if not isinstance(item, Mapping):
            continue
        try:
            identity = dataset_identity(item.get("namespace"), item.get("name"))
        except InvalidEntityError:
            continue
        kind = item.get("type")
        found.setdefault(identity.render(), {
            **namespaces.dataset_ref(identity), "type": kind[:64] if isinstance(kind, str) and kind else "unknown"})
    return [alias for alias in found.values() if alias][:MAX_ALIASES]
