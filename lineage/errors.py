"""The error hierarchy of the lineage core: one base, specific subclasses."""

from __future__ import annotations


class LineageError(Exception):
    """Base of every error the lineage core raises."""


class InvalidEntityError(LineageError, ValueError):
    """An entity id (namespace, dataset, program, run) is malformed."""


class InvalidEventError(LineageError, ValueError):
    """A raw event does not conform to the event format."""


class SettingsError(LineageError, ValueError):
    """An environment setting has a value the product cannot use."""


class RunStateError(LineageError, RuntimeError):
    """A run context was used outside its lifetime (before start, after end)."""
