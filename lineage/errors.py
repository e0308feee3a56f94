"""Every error the product raises: one base, specific subclasses, the bad value in the message.

The hierarchy (a ``ValueError`` is bad input: the API answers 400; the plugin maps the rest to
HTTP status in one table, ``lineage_api.http_errors``)::

    LineageError
    ├── InvalidEntityError (ValueError)        an entity id, principal or privilege is malformed
    ├── InvalidEventError (ValueError)         a raw event breaks the event format
    ├── InvalidFieldOperationsError (ValueError)  field operations cannot give lineage
    ├── InvalidLineageRequestError (ValueError)   levels or collapse out of range
    ├── InvalidMetadataError (ValueError)      a tag, property or scope breaks the limits
    │   └── InvalidMetadataChangeError         a program-recorded metadata change is malformed
    │       └── UnknownNamespaceError          ... for an entity of a namespace that does not exist
    ├── InvalidPipelineConfigError (ValueError)   a pipeline config has no usable stages
    ├── InvalidRequestError (ValueError)       an API request body or parameter has the wrong shape
    │   ├── RequestTooLargeError               ... a body over the size the endpoint takes (413)
    │   └── RequestTimeoutError                ... a body not received in the time allowed (408)
    ├── InvalidSchemaError (ValueError)        a reported dataset schema is malformed
    ├── InvalidSearchError (ValueError)        a search query or parameter cannot be used
    ├── InvalidTimeError (ValueError)          a time is not epoch seconds or now[-<n><unit>]
    ├── SettingsError (ValueError)             an environment setting has an unusable value
    ├── NotAuthorizedError                     the caller lacks a privilege (403)
    ├── NotFoundError                          no such namespace, entity, run or grant (404)
    ├── ConflictError                          the request contradicts what is stored (409)
    │   ├── DefaultNamespaceError              the default namespace cannot be deleted
    │   └── IncompatibleSchemaError            a schema update breaks the compatibility rule
    ├── UnavailableError                       a part the answer needs is missing or down (503)
    │   └── WarehouseUnavailableError          the warehouse is down or slow
    │       ├── WarehouseConnectionError       the Airflow connection lineage_warehouse cannot be read
    │       └── MartNotBuiltError              the marts were not built yet
    ├── AccessTypeError (RuntimeError)         a nested dataset call does more than declared
    ├── RunStateError (RuntimeError)           a run context used outside its lifetime
    ├── CompactionBusyError                    another compaction holds the warehouse lock
    ├── DataQualityError                       a compacted batch failed expectations
    ├── DbtBuildError                          dbt build failed
    └── MigrationError                         a migration cannot be applied, or was edited
"""

from __future__ import annotations


class LineageError(Exception):
    """Base of every error the product raises."""


class InvalidEntityError(LineageError, ValueError):
    """An entity's keys or values break the rules (or a principal or privilege is malformed);
    the message names the part."""


class InvalidEventError(LineageError, ValueError):
    """A raw event does not conform to the event format."""


class InvalidFieldOperationsError(LineageError, ValueError):
    """A field operations record cannot give lineage; the message says why."""


class InvalidLineageRequestError(LineageError, ValueError):
    """A lineage parameter (levels, collapse) is out of range."""


class InvalidMetadataError(LineageError, ValueError):
    """A tag, property or scope breaks the documented limits."""


class InvalidMetadataChangeError(InvalidMetadataError):
    """A program-recorded metadata change is malformed; the message names the part."""


class UnknownNamespaceError(InvalidMetadataChangeError):
    """The change's entity is in a namespace that does not exist."""


class InvalidPipelineConfigError(LineageError, ValueError):
    """The pipeline config cannot be read as stages with schemas and field mutations."""


class InvalidRequestError(LineageError, ValueError):
    """An API request's body or parameter has the wrong shape or is out of range."""


class RequestTooLargeError(InvalidRequestError):
    """A request body is over the size the endpoint takes (HTTP 413)."""


class RequestTimeoutError(InvalidRequestError):
    """A request body was not received within the time the endpoint allows (HTTP 408)."""


class InvalidSchemaError(LineageError, ValueError):
    """A reported schema is malformed; the message names the field."""


class InvalidSearchError(LineageError, ValueError):
    """A search query or parameter cannot be used; the message says why."""


class InvalidTimeError(LineageError, ValueError):
    """A time parameter is not epoch seconds, ``now`` or ``now-<n><s|m|h|d>``."""


class SettingsError(LineageError, ValueError):
    """An environment setting has a value the product cannot use."""


class NotAuthorizedError(LineageError):
    """The caller lacks the privilege; the message names what is needed and where."""


class NotFoundError(LineageError):
    """What the request names does not exist (a namespace, dataset, field, run, grant...)."""


class ConflictError(LineageError):
    """The request contradicts what the warehouse holds; nothing was changed."""


class DefaultNamespaceError(ConflictError):
    """The ``default`` namespace exists from the start and cannot be deleted."""


class IncompatibleSchemaError(ConflictError):
    """A schema update breaks the compatibility rule; ``reasons`` lists each incompatibility."""

    def __init__(self, dataset: str, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(f"the new schema of {dataset} is incompatible with its current one: " + "; ".join(reasons))


class UnavailableError(LineageError):
    """A part the answer needs is missing or down (the warehouse, the pages' installed scripts)."""


class WarehouseUnavailableError(UnavailableError):
    """The warehouse cannot answer now: it is down, slow (a statement timed out), or no
    connection was free in time; the message names the problem."""


class WarehouseConnectionError(WarehouseUnavailableError):
    """Inside Airflow, the Airflow connection of the warehouse cannot be read; the message
    names the connection."""


class MartNotBuiltError(WarehouseUnavailableError):
    """The lineage marts have not been built in this warehouse yet."""

    @classmethod
    def of(cls, mart: str) -> MartNotBuiltError:
        return cls(f"{mart} does not exist yet: run the lineage_compaction DAG (or `make marts`) once")


class AccessTypeError(LineageError, RuntimeError):
    """A nested dataset call does more than its caller declared."""


class RunStateError(LineageError, RuntimeError):
    """A run context was used outside its lifetime (before start, after end)."""


class CompactionBusyError(LineageError):
    """Another compaction holds the warehouse lock."""


class DataQualityError(LineageError):
    """The compacted batch failed one or more expectations."""


class DbtBuildError(LineageError):
    """``dbt build`` failed; the message holds the end of its output."""


class MigrationError(LineageError):
    """A migration cannot be applied, or an applied one was edited."""
