"""Failed data quality checks as an incident's reason (issue 33, pure): what a Great Expectations
1.x result says failed, and when it ran. OpenLineage's ``dataQualityAssertions`` facet is read by
``lineage.openlineage.facets.failed_assertions`` into the same shape: ``{"assertion", "column"?}``.

Two GX shapes are read: a validation result (``ExpectationSuiteValidationResult.to_json_dict()``
or ``describe_dict()``: ``results`` or ``expectations``, with ``meta.validation_time``) and a
checkpoint result's ``describe_dict()`` (``validation_results``, each with ``expectations``) of
one validation: it does not name the datasets, so one of several is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lineage.errors import InvalidRequestError
from lineage.openlineage.facets import failed_check

MAX_CHECKS = 100


@dataclass(frozen=True, slots=True)
class FailedChecks:
    checks: list[dict[str, str]]
    checked_at: datetime | None  # when the validation ran, when the result says


def gx_failures(result: Any) -> FailedChecks:
    """The failed expectations of a GX result (each expectation type and column once) and when it
    ran; InvalidRequestError when ``result`` is neither GX shape."""
    if not isinstance(result, Mapping):
        raise InvalidRequestError("a Great Expectations result is a JSON object")
    validations = _validations(result)
    if validations is None:
        raise InvalidRequestError("not a Great Expectations result: no 'results', 'expectations' or "
                                  "'validation_results' list (save ValidationResult.to_json_dict() or "
                                  "CheckpointResult.describe_dict())")
    if len(validations) > 1:
        raise InvalidRequestError(f"the result holds {len(validations)} validations, of datasets it does not name: "
                                  "save the one of this dataset (ValidationResult.to_json_dict())")
    failed: dict[tuple[str, str], dict[str, str]] = {}
    for expectation in (item for validation in validations for item in _expectations(validation)):
        if len(failed) == MAX_CHECKS:
            break
        if not isinstance(expectation, Mapping) or expectation.get("success") is not False:
            continue
        config = expectation.get("expectation_config")
        config = config if isinstance(config, Mapping) else expectation
        kwargs = config.get("kwargs")
        check = failed_check(config.get("type") or config.get("expectation_type"),
                             kwargs.get("column") if isinstance(kwargs, Mapping) else None)
        if check is not None:
            failed.setdefault((check["assertion"], check.get("column", "")), check)
    return FailedChecks(list(failed.values()), _checked_at(validations))


def _validations(result: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    if isinstance(result.get("validation_results"), list):
        return [item for item in result["validation_results"] if isinstance(item, Mapping)]
    if isinstance(result.get("results"), list) or isinstance(result.get("expectations"), list):
        return [result]
    return None


def _expectations(validation: Mapping[str, Any]) -> Iterator[Any]:
    for key in ("results", "expectations"):
        if isinstance(validation.get(key), list):
            yield from validation[key]


def _checked_at(validations: Sequence[Mapping[str, Any]]) -> datetime | None:
    for validation in validations:
        meta = validation.get("meta")
        if not isinstance(meta, Mapping):
            continue
        run_id = meta.get("run_id")
        for value in (meta.get("validation_time"), run_id.get("run_time") if isinstance(run_id, Mapping) else None):
            if isinstance(value, str):
                try:
                    moment = datetime.fromisoformat(value)
                except ValueError:
                    continue
                return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None
